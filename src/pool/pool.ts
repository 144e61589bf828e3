import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Piscina } from 'piscina';
import { cancelledError, CrosstabError, ErrorCode } from '../errors.js';
import { KERNEL_ABI, type KernelTask, TASK_FUNCTIONS } from '../kernel/exports.js';
import type { Kernel } from '../kernel/kernel.js';
import { kernelModule } from '../kernel/wasm-module.js';
import type { ProgramRunner } from '../query/cells-plan.js';
import { encodeCalls, PROGRAM_FUNCTIONS } from '../query/cells-program.js';
import type { Executor } from '../query/executor.js';

/** What a pool worker (src/pool/worker.js) gets: the kernel, its memory, and what to check and warm. */
export interface PoolWorkerData {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  /** The ABI this code expects: a worker refuses a kernel of another (see kernelAbi()). */
  abi: number;
  /** The task functions, each run once on an empty range at start-up. */
  warmUp: readonly string[];
  /** The kernel functions of cells programs, by the index a program names them with. */
  programFunctions: readonly string[];
}

/** The worker pool's counts (engineStats().pool). */
export interface PoolStats {
  threads: number;
  /** Tasks waiting in the queue for a free thread. */
  queued: number;
  /** Tasks submitted and not settled: queued for a thread or running on one. */
  pending: number;
  /** Tasks settled since the pool started (fulfilled, failed or cancelled). */
  tasks: number;
  /** Of those, the ones that failed or were cancelled. */
  failedTasks: number;
  /** Seconds from submission to settlement, summed over the settled tasks (queue wait included). */
  taskSeconds: number;
}

export interface KernelPoolOptions {
  /** Worker threads; default: the machine's available parallelism. */
  threads?: number;
  /** The worker module; default: worker.js next to this file. Tests wrap it (test/support/). */
  worker?: string;
}

/**
 * Worker threads over the process's shared kernel memory (piscina): sized to the
 * machine, kept warm (no idle teardown), each with the kernel compiled once and warmed.
 * piscina is imported when the first task comes, so a process that never pools (a CLI
 * query) does not load it.
 */
export class KernelPool {
  readonly threads: number;
  private readonly piscina: Promise<Piscina>;
  private destroying: Promise<void> | undefined;
  /** Tasks finished (fulfilled or failed) and the seconds they were in a worker or its queue. */
  private readonly finished = { tasks: 0, failed: 0, seconds: 0 };
  private waiting = 0;
  private started: Piscina | undefined;

  constructor(kernel: Kernel, options: KernelPoolOptions = {}) {
    const threads = options.threads ?? availableParallelism();
    this.threads = threads;
    const filename = options.worker ?? locateWorker();
    const workerData: PoolWorkerData = { module: kernelModule(), memory: kernel.memory.memory, abi: KERNEL_ABI, warmUp: TASK_FUNCTIONS, programFunctions: PROGRAM_FUNCTIONS };
    this.piscina = import('piscina').then((module) => {
      // The CommonJS build turns this import() into require() wrapped for interop, which keeps
      // piscina's module.exports (a class whose Piscina property is not enumerable) as default.
      const Piscina = module.Piscina ?? (module as unknown as { default: typeof module }).default.Piscina;
      this.started = new Piscina({ filename, minThreads: threads, maxThreads: threads, idleTimeout: Number.POSITIVE_INFINITY, workerData });
      return this.started;
    });
  }

  /**
   * Runs a kernel call on a worker; settles only when no worker touches kernel memory for it
   * any more, so the caller may release the task's memory then. An aborted `signal` makes a
   * task that has not started yet a no-op (`cancelled`); one already running finishes its
   * slice: a worker is never terminated mid-write. A dead worker fails the task with
   * `worker_failed` and is replaced.
   */
  async run(task: KernelTask, signal?: AbortSignal): Promise<number> {
    return (await this.dispatch(task, task.fn, signal)) as number;
  }

  /**
   * Runs a cells program (src/query/cells-program.ts) on a worker: the results it kept. The
   * worker checks `signal` before each kernel call of the program, so an abort stops it
   * within one call; it settles, as run() does, only once the worker has stopped.
   */
  async runProgram(program: Uint32Array, signal?: AbortSignal): Promise<number[]> {
    return (await this.dispatch({ program }, 'a crosstab program', signal)) as number[];
  }

  private async dispatch(task: object, what: string, signal: AbortSignal | undefined): Promise<unknown> {
    if (signal?.aborted) throw cancelledError('the query');
    let result: unknown;
    const started = performance.now();
    this.waiting++;
    try {
      const piscina = await this.piscina;
      result = await piscina.run(signal ? { ...task, cancel: cancelFlag(signal) } : task);
      this.settle(started, false);
    } catch (error) {
      this.settle(started, true);
      // destroy() rejects the tasks it stops before their threads have exited: wait for that.
      await this.destroying?.catch(() => undefined);
      if (signal?.aborted) throw cancelledError('the query');
      throw new CrosstabError(ErrorCode.workerFailed, `a worker thread failed while running ${what}: ${(error as Error).message}`, {
        hint: 'The worker has been replaced; run the query again. If it keeps failing, report it with the query.',
      });
    }
    if (result === null || signal?.aborted) throw cancelledError('the query');
    return result;
  }

  private settle(started: number, failed: boolean): void {
    this.waiting--;
    this.finished.tasks++;
    if (failed) this.finished.failed++;
    this.finished.seconds += (performance.now() - started) / 1000;
  }

  /** Counts for monitoring: tasks waiting or running now, tasks finished, and their time. */
  stats(): PoolStats {
    return { threads: this.threads, queued: this.started?.queueSize ?? 0, pending: this.waiting, tasks: this.finished.tasks, failedTasks: this.finished.failed, taskSeconds: this.finished.seconds };
  }

  /** This pool as an executor of table tasks. */
  executor(): Executor {
    return {
      parallelism: this.threads,
      run: (task, signal) => this.run(task, signal),
      runCalls: async (calls, signal) => void (await this.runProgram(encodeCalls(calls), signal)),
    };
  }

  /** This pool as the runner of crosstab() programs. */
  programRunner(): ProgramRunner {
    return { parallelism: this.threads, runProgram: (program, signal) => this.runProgram(program, signal) };
  }

  /** Stops the threads; resolves when they have exited. */
  destroy(): Promise<void> {
    this.destroying ??= this.piscina.then((piscina) => piscina.destroy());
    return this.destroying;
  }
}

/** One Int32 in shared memory per signal, set to 1 when it aborts: workers read it before each task. */
const cancelFlags = new WeakMap<AbortSignal, Int32Array>();

function cancelFlag(signal: AbortSignal): Int32Array {
  let flag = cancelFlags.get(signal);
  if (!flag) {
    const cell = new Int32Array(new SharedArrayBuffer(4));
    signal.addEventListener('abort', () => Atomics.store(cell, 0, 1), { once: true });
    cancelFlags.set(signal, (flag = cell));
  }
  return flag;
}

function locateWorker(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, 'worker.js'), join(here, 'pool', 'worker.js')]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new CrosstabError(ErrorCode.internal, `pool worker not found next to ${here}`, { hint: 'Reinstall crosstab-engine.' });
}

let shared: KernelPool | undefined;

/**
 * The process-wide pool over the main thread's kernel memory, created on first use;
 * `options` apply to the call that creates it (after closePool(), the next call).
 */
export function sharedPool(kernel: Kernel, options?: KernelPoolOptions): KernelPool {
  shared ??= new KernelPool(kernel, options);
  return shared;
}

/** The process-wide pool's counts, or undefined while no query has started it. */
export function sharedPoolStats(): PoolStats | undefined {
  return shared?.stats();
}

/** Stops the process-wide pool's threads (a later query starts a new pool). */
export async function closePool(): Promise<void> {
  const pool = shared;
  shared = undefined;
  await pool?.destroy();
}
