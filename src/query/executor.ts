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

/**
 * Runs tasks on the calling thread, one after the other, in the order they are given; once
 * SLICE_MS have passed since the event loop last ran, it yields before the next task, so a
 * table cut into tasks of about SLICE_MS keeps the host's timers firing and stops soon
 * after its signal aborts.
 */
export function inlineExecutor(kernel: Kernel): Executor {
  let queue: Promise<unknown> = Promise.resolve();
  let since = performance.now();
  return {
    parallelism: 1,
    run(task, signal) {
      const done = queue.then(async () => {
        if (performance.now() - since >= SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          since = performance.now();
        }
        throwIfCancelled(signal, 'the query');
        return kernel.runTask(task);
      });
      queue = done.catch(() => undefined);
      return done;
    },
  };
}

/**
 * Longest stretch the calling thread works on one query before it lets the event loop run
 * (the host's timers and I/O, and the AbortSignal that stops the query).
 */
export const SLICE_MS = 5;

/**
 * A checkpoint for work done on the calling thread in pieces: call it between pieces. Once
 * SLICE_MS have passed since the last pause, it yields to the event loop (setImmediate); it
 * then rejects with `cancelled` if `signal` has aborted. Work shorter than one slice never
 * yields, so small queries pay nothing.
 */
export function timeSlicer(signal: AbortSignal | undefined, sliceMs = SLICE_MS): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      since = performance.now();
    }
    throwIfCancelled(signal, 'the query');
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
