import { CrosstabError, ErrorCode } from '../errors.js';
import { KERNEL_ABI, type KernelExports } from './exports.js';
import { KernelMemory } from './memory.js';
import { kernelModule } from './wasm-module.js';

/** A weight vector in kernel memory and its weight runs (see assembly/index.ts). */
export interface WeightVector {
  ptr: number;
  runs: number;
  nRuns: number;
}

/** Count and sums of one cell, as computed by the kernel. */
export interface CellSums {
  respondents: number;
  weighted: number;
  sumSqWeights: number;
}

/**
 * One instance of the kernel over the process's shared memory. The main thread owns the
 * allocator; worker threads build their own Kernel over the same WebAssembly.Memory.
 */
export class Kernel {
  readonly exports: KernelExports;
  readonly memory: KernelMemory;
  /** 32 bytes where cell functions store their f64 sums (and count). */
  readonly out: number;
  /** 64 bytes of hash state for the checksum functions (src/kernel/checksum.ts). */
  readonly scratchState: number;
  private readonly sums: Float64Array;

  constructor(memory: KernelMemory, out?: number) {
    this.memory = memory;
    const instance = new WebAssembly.Instance(kernelModule(), { env: { memory: memory.memory, abort } });
    this.exports = instance.exports as unknown as KernelExports;
    const abi = typeof this.exports.kernelAbi === 'function' ? this.exports.kernelAbi() : 0;
    if (abi !== KERNEL_ABI) {
      throw new CrosstabError(ErrorCode.internal, `build/kernel.wasm has kernel ABI ${abi}, this code expects ${KERNEL_ABI}`, {
        hint: 'The bundle and the kernel come from different builds: run `npm run build`.',
      });
    }
    this.out = out ?? memory.alloc(32);
    this.scratchState = memory.alloc(64);
    this.sums = new Float64Array(memory.memory.buffer, this.out, 2);
  }

  /** Weighted cell of dense bitsets a AND b; `weights` is a WeightVector. */
  cellDense(a: number, b: number, weights: WeightVector, words: number): CellSums {
    const respondents = this.exports.cellDense(a, b, weights.ptr, weights.runs, weights.nRuns, words, this.out);
    return { respondents, weighted: this.sums[0]!, sumSqWeights: this.sums[1]! };
  }

  /** Weighted cell of dense bitset a AND a sparse code. */
  cellSparse(a: number, list: number, count: number, weights: WeightVector): CellSums {
    const respondents = this.exports.cellSparse(a, list, count, weights.ptr, this.out);
    return { respondents, weighted: this.sums[0]!, sumSqWeights: this.sums[1]! };
  }
}

function abort(): never {
  throw new Error('crosstab kernel aborted');
}

let mainKernel: Kernel | undefined;

/** The kernel of the calling (main) thread, created on first use. */
export function mainThreadKernel(): Kernel {
  mainKernel ??= new Kernel(new KernelMemory());
  return mainKernel;
}
