import type { KernelTask } from '../kernel/exports.js';
import type { Kernel } from '../kernel/kernel.js';

export type { KernelTask } from '../kernel/exports.js';

/** Work estimated above this runs on the pool (when there is one with more than one thread). */
export const POOL_THRESHOLD_MS = 1;
/** Pool tasks are cut to about this long: long enough to amortise a message, short enough to balance. */
export const TASK_MS = 20;

/** Where kernel tasks run: inline on the calling thread, or across the worker pool. */
export interface Executor {
  /** Tasks worth running at once. */
  readonly parallelism: number;
  run(task: KernelTask, signal?: AbortSignal): Promise<number>;
}

export function inlineExecutor(kernel: Kernel): Executor {
  return {
    parallelism: 1,
    run: async (task) => kernel.runTask(task),
  };
}

/** Runs `count` jobs with at most `limit` at once, in order of index; rejects on the first failure. */
export async function runLimited(count: number, limit: number, job: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown;
  const lane = async () => {
    while (next < count && failed === undefined) {
      const index = next++;
      try {
        await job(index);
      } catch (error) {
        failed ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, count)) }, lane));
  if (failed !== undefined) throw failed;
}
