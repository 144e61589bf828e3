import { CrosstabError, ErrorCode } from '../errors.js';
import { KERNEL_ABI, type KernelExports, type KernelLayout, type KernelTask, readLayout } from './exports.js';
import { KernelMemory } from './memory.js';
import { primeResultAllocator } from './result-allocator.js';
import { kernelModule } from './wasm-module.js';

/** A weight vector in kernel memory and its weight runs (see assembly/index.ts). */
export interface WeightVector {
  ptr: number;
  runs: number;
  nRuns: number;
  /**
   * Every weight is a whole number and the sum of w² over all respondents stays below
   * 2^53: every sum of these weights (and of their squares) is then exact, so it comes out
   * the same to the last bit in any order of adding (see exactSums()).
   */
  exactSums: boolean;
}

/**
 * Whether every sum of the first `respondents` weights, and of their squares, is exact in
 * f64 whatever the order of adding: all whole numbers, with the sum of w² below 2^53. Then
 * every partial sum of weights or squares is a whole number of at most that size (|w| <= w²
 * for a whole number), so representable exactly.
 */
export function exactSums(weights: Float64Array, respondents: number): boolean {
  let squares = 0;
  for (let i = 0; i < respondents; i++) {
    const w = weights[i]!;
    if (!Number.isInteger(w)) return false;
    squares += w * w;
  }
  return squares <= Number.MAX_SAFE_INTEGER;
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
  /** Strides and limits of the kernel's records, as the kernel exports them. */
  readonly layout: KernelLayout;
  readonly memory: KernelMemory;
  /** Where cell functions store their f64 sums (and count). */
  readonly out: number;
  /** Hash state for the checksum functions (src/kernel/checksum.ts). */
  readonly scratchState: number;
  private readonly sums: Float64Array;
  /** Pointers and cells of cellsDense, grown as needed. */
  private cellsScratch = 0;
  private cellsScratchBytes = 0;

  constructor(memory: KernelMemory) {
    this.memory = memory;
    const instance = new WebAssembly.Instance(kernelModule(), { env: { memory: memory.memory, abort } });
    this.exports = instance.exports as unknown as KernelExports;
    const abi = typeof this.exports.kernelAbi === 'function' ? this.exports.kernelAbi() : 0;
    const layout = abi === KERNEL_ABI ? readLayout(instance.exports) : undefined;
    if (!layout) {
      throw new CrosstabError(ErrorCode.internal, `build/kernel.wasm has kernel ABI ${abi}, this code expects ${KERNEL_ABI}`, {
        hint: 'The bundle and the kernel come from different builds: run `npm run build`.',
      });
    }
    this.layout = layout;
    const bitsClear = this.exports.bitsClear;
    memory.zeroFill = (ptr, bytes) => bitsClear(ptr, bytes / 8);
    this.out = memory.alloc(layout.cellOutBytes);
    this.scratchState = memory.alloc(layout.xxh64StateBytes);
    this.sums = new Float64Array(memory.memory.buffer, this.out, 2);
  }

  /**
   * Builds the weight runs of the weight vector at `weights` (see weightRuns in
   * assembly/index.ts) in a block of their own; give it back with memory.release(runs, bytes).
   */
  weightRuns(weights: number, words: number, respondents: number): { runs: number; nRuns: number; bytes: number } {
    const { memory, layout } = this;
    const room = words * layout.maxSegments * layout.weightRunBytes;
    const scratch = memory.alloc(room);
    const nRuns = this.exports.weightRuns(weights, words, respondents, scratch);
    const bytes = nRuns * layout.weightRunBytes;
    const runs = memory.alloc(bytes);
    memory.bytes(runs, bytes).set(memory.bytes(scratch, bytes));
    memory.release(scratch, room);
    return { runs, nRuns, bytes };
  }

  /** Runs a task on this thread (the inline executor; pool workers run the same calls). */
  runTask(task: KernelTask): number {
    const fn = this.exports[task.fn] as (...args: number[]) => number | void;
    return fn(...task.args) ?? 0;
  }

  /** Weighted cell of dense bitsets a AND b; `weights` is a WeightVector. */
  cellDense(a: number, b: number, weights: WeightVector, words: number): CellSums {
    const respondents = this.exports.cellDense(a, b, weights.ptr, weights.runs, weights.nRuns, words, this.out);
    return { respondents, weighted: this.sums[0]!, sumSqWeights: this.sums[1]! };
  }

  /**
   * Weighted cells of dense bitset a AND each dense bitset of `bs`, in one walk of the weight
   * runs (the same sums as cellDense, one call).
   */
  cellsDense(a: number, bs: readonly number[], weights: WeightVector, words: number): CellSums[] {
    const { memory, layout } = this;
    const pointers = Math.ceil((bs.length * layout.pointerBytes) / 8) * 8;
    const bytes = pointers + bs.length * layout.cellBytes;
    if (bytes > this.cellsScratchBytes) {
      if (this.cellsScratchBytes > 0) memory.release(this.cellsScratch, this.cellsScratchBytes);
      this.cellsScratchBytes = Math.max(bytes, 4096);
      this.cellsScratch = memory.alloc(this.cellsScratchBytes, false);
    }
    const base = this.cellsScratch;
    new Uint32Array(memory.memory.buffer, base, bs.length).set(bs);
    const acc = base + pointers;
    this.exports.cellsDense(a, base, bs.length, weights.ptr, weights.runs, weights.nRuns, words, acc);
    const sums = new Float64Array(memory.memory.buffer, acc, bs.length * 3);
    return bs.map((_, j) => ({ respondents: sums[j * 3 + 2]!, weighted: sums[j * 3]!, sumSqWeights: sums[j * 3 + 1]! }));
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
  if (!mainKernel) {
    mainKernel = new Kernel(new KernelMemory());
    primeResultAllocator();
  }
  return mainKernel;
}
