// Fault injection for pool tests, outside the shipped code: a shared pool whose workers
// are test/support/fault-worker.js, and a switch that makes the next task's worker exit.
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mainThreadKernel } from '../../src/kernel/kernel.js';
import { closePool, sharedPool } from '../../src/pool/pool.js';

export const faultWorker = fileURLToPath(new URL('./fault-worker.js', import.meta.url));

/** Same path as in fault-worker.js. */
function faultFile(): string {
  return join(tmpdir(), `crosstab-pool-fault-${process.pid}`);
}

/** Replaces the process-wide pool by one of fault-injecting workers; undo with closeFaultPool(). */
export async function useFaultPool(): Promise<void> {
  await closePool();
  sharedPool(mainThreadKernel(), { worker: faultWorker });
}

/** The next task to start on the pool exits its worker thread. */
export function failNextPoolTask(): void {
  writeFileSync(faultFile(), '');
}

export async function closeFaultPool(): Promise<void> {
  rmSync(faultFile(), { force: true });
  await closePool();
}
