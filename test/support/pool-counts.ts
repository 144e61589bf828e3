// A shared pool whose workers (test/support/counting-worker.js) count the cells programs they
// ran to the end; undo with closePool() (or closeFaultPool()).
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mainThreadKernel } from '../../src/kernel/kernel.js';
import { closePool, sharedPool } from '../../src/pool/pool.js';

const countingWorker = fileURLToPath(new URL('./counting-worker.js', import.meta.url));

/** Same path as in counting-worker.js. */
function countFile(): string {
  return join(tmpdir(), `crosstab-pool-programs-${process.pid}`);
}

/** Replaces the process-wide pool by counting workers, with the count at 0. */
export async function useCountingPool(): Promise<void> {
  await closePool();
  rmSync(countFile(), { force: true });
  sharedPool(mainThreadKernel(), { worker: countingWorker });
}

/** Cells programs run to the end since useCountingPool(). */
export function programsRun(): number {
  return existsSync(countFile()) ? readFileSync(countFile()).length : 0;
}
