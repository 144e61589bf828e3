import { throwIfCancelled } from '../errors.js';
import type { KernelTask } from '../kernel/exports.js';
import type { Kernel } from '../kernel/kernel.js';

export type { KernelTask } from '../kernel/exports.js';

/** Work estimated above this runs on the pool (when there is one with more than one thread). */
export const POOL_THRESHOLD_MS = 1;
/** Pool tasks are cut to about this long: long enough to amortise a message, short enough to balance. */
export const TASK_MS = 20;

/**
 * Where kernel tasks run: inline on the calling thread, or across the worker pool. run()
 * settles only once the task no longer touches kernel memory (done, or skipped because
 * `signal` aborted before it started), so memory a task uses may be released when it settles.
 */
export interface Executor {
  /** Tasks worth running at once. */
  readonly parallelism: number;
  run(task: KernelTask, signal?: AbortSignal): Promise<number>;
}

/**
 * Waits for every task, then rejects with the first failure: unlike Promise.all, nothing
 * that follows (releasing the tasks' memory) runs while another task is still writing.
 */
export async function settleAll(tasks: ReadonlyArray<Promise<unknown>>): Promise<void> {
  const outcomes = await Promise.allSettled(tasks);
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

export function inlineExecutor(kernel: Kernel): Executor {
  return {
    parallelism: 1,
    run: async (task, signal) => {
      throwIfCancelled(signal, 'the query');
      return kernel.runTask(task);
    },
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
