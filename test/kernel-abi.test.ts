// The kernel boundary: the shipped module exports what src/kernel/ describes (layout
// globals included) and nothing bench-only; pool workers check the kernel's ABI as the
// main thread's Kernel does.
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { describe, expect, it } from 'vitest';
import { KERNEL_ABI, TASK_FUNCTIONS } from '../src/kernel/exports.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { kernelModule } from '../src/kernel/wasm-module.js';
import type { PoolWorkerData } from '../src/pool/pool.js';
import { PROGRAM_FUNCTIONS } from '../src/query/cells-program.js';

const worker = fileURLToPath(new URL('../src/pool/worker.js', import.meta.url));

async function runOnWorker(abi: number): Promise<unknown> {
  const workerData: PoolWorkerData = { module: kernelModule(), memory: mainThreadKernel().memory.memory, abi, warmUp: TASK_FUNCTIONS, programFunctions: PROGRAM_FUNCTIONS };
  const pool = new Piscina({ filename: worker, minThreads: 1, maxThreads: 1, workerData });
  try {
    return await pool.run({ fn: 'groupByMulti', args: new Array(12).fill(0) });
  } catch (error) {
    return error;
  } finally {
    await pool.destroy();
  }
}

describe('the shipped kernel', () => {
  it('exports its record layout, read by the main thread at instantiation', () => {
    expect(mainThreadKernel().layout).toEqual({
      weightRunBytes: 24,
      maxSegments: 8,
      cellBytes: 24,
      columnEntryBytes: 12,
      axisVariableBytes: 12,
      rowEntryBytes: 24,
      chunkWords: 2048,
      pointerBytes: 4,
      cellOutBytes: 24,
      xxh64StateBytes: 48,
      weightVariableBytes: 16,
      cellSumsBytes: 24,
      rankSumsBytes: 32,
      spreadBytes: 40,
    });
  });

  it('has no measurement-only kernels (they are in the bench build, assembly/bench.ts)', () => {
    const names = WebAssembly.Module.exports(kernelModule()).map((entry) => entry.name);
    expect(names).toContain('cellDense');
    expect(names).not.toContain('cellWalk');
    expect(names).not.toContain('cellBitSliced');
  });
});

describe('pool worker', () => {
  it('runs tasks on a kernel of the expected ABI', async () => {
    expect(await runOnWorker(KERNEL_ABI)).toBe(0);
  });

  it('refuses a kernel of another ABI with an error that says what to do', async () => {
    const error = await runOnWorker(KERNEL_ABI + 1);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(new RegExp(`kernel ABI ${KERNEL_ABI}, this code expects ${KERNEL_ABI + 1}.*npm run build`));
  });
});
