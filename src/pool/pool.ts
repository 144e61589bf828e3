import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Piscina } from 'piscina';
import { CrosstabError, ErrorCode } from '../errors.js';
import type { Kernel } from '../kernel/kernel.js';
import { kernelModule } from '../kernel/wasm-module.js';
import type { Executor, KernelTask } from '../query/executor.js';

/**
 * Worker threads over the process's shared kernel memory (piscina): sized to the
 * machine, kept warm (no idle teardown), each with the kernel compiled once and warmed.
 * piscina is imported when the first task comes, so a process that never pools (a CLI
 * query) does not load it.
 */
export class KernelPool {
  readonly threads: number;
  private readonly piscina: Promise<Piscina>;
  private injectFault = false;

  constructor(kernel: Kernel, threads = availableParallelism()) {
    this.threads = threads;
    const filename = locateWorker();
    const workerData = { module: kernelModule(), memory: kernel.memory.memory };
    this.piscina = import('piscina').then((module) => {
      // The CommonJS build turns this import() into require() wrapped for interop, which keeps
      // piscina's module.exports (a class whose Piscina property is not enumerable) as default.
      const Piscina = module.Piscina ?? (module as unknown as { default: typeof module }).default.Piscina;
      return new Piscina({ filename, minThreads: threads, maxThreads: threads, idleTimeout: Number.POSITIVE_INFINITY, workerData });
    });
  }

  /** Runs a kernel call on a worker. A dead worker fails the task with `worker_failed` and is replaced. */
  async run(task: KernelTask, signal?: AbortSignal): Promise<number> {
    const fault = this.injectFault;
    this.injectFault = false;
    try {
      const piscina = await this.piscina;
      return (await piscina.run(fault ? { fn: '__exit', args: [] } : task, signal ? { signal } : {})) as number;
    } catch (error) {
      if (signal?.aborted) {
        throw new CrosstabError(ErrorCode.cancelled, 'the query was cancelled', { hint: 'Run it again without aborting its signal.' });
      }
      throw new CrosstabError(ErrorCode.workerFailed, `a worker thread failed while running ${task.fn}: ${(error as Error).message}`, {
        hint: 'The worker has been replaced; run the query again. If it keeps failing, report it with the query.',
      });
    }
  }

  /** This pool as an executor of table tasks. */
  executor(): Executor {
    return { parallelism: this.threads, run: (task, signal) => this.run(task, signal) };
  }

  /** Test hook: the next task's worker exits as it starts. */
  failNextTask(): void {
    this.injectFault = true;
  }

  async destroy(): Promise<void> {
    await (await this.piscina).destroy();
  }
}

function locateWorker(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, 'worker.js'), join(here, 'pool', 'worker.js')]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new CrosstabError(ErrorCode.internal, `pool worker not found next to ${here}`, { hint: 'Reinstall crosstab-engine.' });
}

let shared: KernelPool | undefined;

/** The process-wide pool over the main thread's kernel memory, created on first use. */
export function sharedPool(kernel: Kernel): KernelPool {
  shared ??= new KernelPool(kernel);
  return shared;
}

/** Stops the process-wide pool's threads (a later query starts a new pool). */
export async function closePool(): Promise<void> {
  const pool = shared;
  shared = undefined;
  await pool?.destroy();
}
