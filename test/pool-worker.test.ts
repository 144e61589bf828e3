// The pool worker checks the kernel it was given, as the main thread's Kernel does.
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { describe, expect, it } from 'vitest';
import { KERNEL_ABI, TASK_FUNCTIONS } from '../src/kernel/exports.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { kernelModule } from '../src/kernel/wasm-module.js';
import type { PoolWorkerData } from '../src/pool/pool.js';

const worker = fileURLToPath(new URL('../src/pool/worker.js', import.meta.url));

async function runOnWorker(abi: number): Promise<unknown> {
  const workerData: PoolWorkerData = { module: kernelModule(), memory: mainThreadKernel().memory.memory, abi, warmUp: TASK_FUNCTIONS };
  const pool = new Piscina({ filename: worker, minThreads: 1, maxThreads: 1, workerData });
  try {
    return await pool.run({ fn: 'groupByMulti', args: new Array(12).fill(0) });
  } catch (error) {
    return error;
  } finally {
    await pool.destroy();
  }
}

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
