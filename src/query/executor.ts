import type { KernelExports } from '../kernel/exports.js';
import type { Kernel } from '../kernel/kernel.js';

/** A kernel call that can run on any thread: an export name and its integer arguments. */
export interface KernelTask {
  fn: keyof KernelExports;
  args: number[];
}

/** Estimated nanoseconds per 64-bit word per cell on the bitset path (AND + popcount + runs). */
export const NS_PER_WORD_CELL = 0.5;
/** Estimated nanoseconds per respondent of the base on the group-by path. */
export const NS_PER_RESPONDENT = 5;
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
  const exports = kernel.exports as unknown as Record<string, (...args: number[]) => number | undefined>;
  return {
    parallelism: 1,
    run: async (task) => exports[task.fn]!(...task.args) ?? 0,
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
