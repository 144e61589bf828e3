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
  /**
   * Runs `calls` one after the other on one thread as one task (a pool worker gets them as a
   * cells program, src/query/cells-program.ts): many short calls without a message each.
   * Every call's function must be one of PROGRAM_FUNCTIONS.
   */
  runCalls(calls: readonly KernelTask[], signal?: AbortSignal): Promise<void>;
}

/**
 * Waits for every task, then gives their results in order or rejects with the first failure: unlike Promise.all, nothing
 * that follows (releasing the tasks' memory) runs while another task is still writing.
 */
export async function settleAll<T>(tasks: ReadonlyArray<Promise<T>>): Promise<T[]> {
  const outcomes = await Promise.allSettled(tasks);
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
}

/**
 * Runs tasks on the calling thread, one after the other, in the order they are given, with a
 * checkpoint before each: once the event loop has not turned for SLICE_MS, it yields, so a
 * table cut into tasks of about SLICE_MS keeps the host's timers firing and stops soon
 * after its signal aborts.
 */
export function inlineExecutor(kernel: Kernel): Executor {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    parallelism: 1,
    run(task, signal) {
      const done = queue.then(async () => {
        await checkpoint(signal);
        return kernel.runTask(task);
      });
      queue = done.catch(() => undefined);
      return done;
    },
    runCalls(calls, signal) {
      const done = queue.then(async () => {
        await checkpoint(signal);
        for (const call of calls) kernel.runTask(call);
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
 * When the current slice of the calling thread began: the last turn of the event loop, or the
 * first checkpoint since it when none of our pieces ran in between (see checkpoint()).
 */
let sliceStart = performance.now();
/** Whether a turn is armed: from a checkpoint, or a piece let go, until the next turn of the event loop. */
let turnArmed = false;
/** Pieces of work waiting for their turn, first come first served. */
const waiting: Array<() => void> = [];

/** One setImmediate per turn of the event loop: it starts a new slice and lets the next piece go. */
function armTurn(): void {
  if (turnArmed) return;
  turnArmed = true;
  setImmediate(() => {
    turnArmed = false;
    sliceStart = performance.now();
    dispatch();
  });
}

/** Lets the first waiting piece go while the slice lasts; else waits for the next turn. */
function dispatch(): void {
  if (waiting.length === 0) return;
  if (performance.now() - sliceStart >= SLICE_MS) return armTurn();
  waiting.shift()!();
  // A piece let go may end its query without another checkpoint: the next turn lets the next
  // one go, and ends the slice the piece ran in (so no turn armed means none of ours ran since the last turn).
  armTurn();
}

/**
 * A checkpoint for work done on the calling thread: call it before each piece (a chunk of
 * targets, a kernel task). The pieces of every query of the process take turns: within a
 * slice of SLICE_MS they run one after the other, first come first served; once the slice
 * is spent, the next piece waits for the next turn of the event loop, so the host's timers
 * and I/O run at least every few milliseconds however many queries are in flight (many
 * short calls chained by their promises starve timers as surely as one long call). Then it
 * rejects with `cancelled` if `signal` has aborted.
 */
export async function checkpoint(signal: AbortSignal | undefined): Promise<void> {
  if (!passCheckpoint()) {
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      dispatch();
    });
  }
  throwIfCancelled(signal, 'the query');
}

/**
 * A checkpoint passed without waiting, or not: true when a piece may run now (as checkpoint()
 * would let it, without a promise: an answer from memory needs none), false when it must
 * wait for its turn (call checkpoint() then). Either way the slice is counted as checkpoint()
 * counts it.
 */
export function passCheckpoint(): boolean {
  // No turn armed: none of our pieces ran since the event loop last turned, so this one starts
  // a slice of its own. Measuring from that turn instead would make a query arriving after
  // other work of the host (its own code, a garbage collection) wait a turn before it starts.
  if (!turnArmed) sliceStart = performance.now();
  armTurn();
  return waiting.length === 0 && performance.now() - sliceStart < SLICE_MS;
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
