import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CrosstabError, ErrorCode } from '../../errors.js';
import type { RowIds } from './row-ids.js';
import type { ColumnEncoder } from './column-encoder.js';
import { DeferredTexts, type DeferredTextsData } from './deferred-texts.js';

/**
 * Columns of a typed input (Parquet, Arrow IPC) read by worker threads, each column wholly by
 * one thread: its dictionary and ids come out as one thread reading it alone makes them, so
 * the table is the same whichever thread reads which column.
 */

/** A column as a worker read it. */
export interface ShareResult {
  position: number;
  dictionary: string[];
  counts: Uint32Array;
  ids: RowIds;
  /** Values kept as bytes (see DeferredTexts): then `dictionary` is empty. */
  deferred?: DeferredTextsData;
  /** It stopped being numbered past the id-like bound (ColumnEncoder.partly). */
  partly?: true;
}

/** A worker's column as a ShareResult, and the buffers to transfer (not copy) with it. */
export function shareResult(position: number, target: ColumnEncoder, rows: number): { result: ShareResult; transfer: ArrayBuffer[] } {
  const deferred = target.deferredTexts?.data();
  const result: ShareResult = { position, dictionary: target.dictionary, counts: target.counts(), ids: target.take(rows), ...(deferred === undefined ? {} : { deferred }), ...(target.partly ? { partly: true as const } : {}) };
  const transfer = [result.counts.buffer as ArrayBuffer, ...(wholeBuffer(result.ids) ? [result.ids.buffer as ArrayBuffer] : []), ...(deferred === undefined ? [] : [deferred.bytes.buffer as ArrayBuffer, deferred.ends.buffer as ArrayBuffer])];
  return { result, transfer };
}

/** Puts a worker's column into the calling thread's encoder. */
export function adoptShare(target: ColumnEncoder, { dictionary, ids, counts, deferred, partly }: ShareResult): void {
  target.adopt(dictionary, ids, counts, deferred === undefined ? undefined : DeferredTexts.from(deferred));
  if (partly) target.partly = true;
}

/**
 * Deals `columns` out to `parts` threads by `cost`, costliest first, each to the least loaded
 * (longest processing time first); part 0 is the calling thread, which also has `ownCost`
 * of other work (weights, columns only it reads). Ties go by `position`.
 */
export function dealByCost<T extends { position: number }>(columns: T[], cost: (column: T) => number, parts: number, ownCost: number): T[][] {
  const shares = Array.from({ length: parts }, () => ({ load: 0, columns: [] as T[] }));
  shares[0]!.load = ownCost;
  const costs = new Map(columns.map((column) => [column, cost(column)]));
  for (const column of [...columns].sort((a, b) => costs.get(b)! - costs.get(a)! || a.position - b.position)) {
    const least = shares.reduce((best, share) => (share.load < best.load ? share : best));
    least.load += costs.get(column)!;
    least.columns.push(column);
  }
  return shares.map((share) => share.columns.sort((a, b) => a.position - b.position));
}

/** A built worker's file (`parquet-worker.js`...), or undefined when running from the sources (tests), where it is not built. */
export function builtWorkerFile(name: string): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  return [join(here, name), join(here, 'dataset', name)].find((path) => existsSync(path));
}

/**
 * Worker threads that may start before their tasks are known: a worker started without one
 * waits for it as its first message, so its start-up (the thread, its modules, its
 * WebAssembly) overlaps what the caller still does to make the tasks (read the file's
 * metadata). give() hands them out.
 */
export class ShareWorkers {
  private readonly workers: Worker[];
  private readonly outcomes: Array<Promise<ShareResult[]>>;

  /** `count` workers of `file`, given `tasks[i]` as workerData if `tasks` is, else waiting for give(). */
  constructor(file: string, count: number, format: string, tasks?: object[]) {
    this.workers = Array.from({ length: count }, (_, i) => new Worker(file, tasks === undefined ? {} : { workerData: tasks[i] }));
    this.outcomes = this.workers.map((worker) => {
      const outcome = new Promise<ShareResult[]>((resolve, reject) => {
        const columns: ShareResult[] = [];
        worker.on('message', (message: { column?: ShareResult; done?: true; error?: { code?: ErrorCode; message: string; details?: Record<string, unknown> } }) => {
          if (message.column !== undefined) columns.push(message.column);
          else if (message.done) resolve(columns);
          else if (message.error !== undefined) reject(message.error.code === undefined ? workerFailed(format, message.error.message) : CrosstabError.fromJSON(message.error as Parameters<typeof CrosstabError.fromJSON>[0]));
        });
        worker.on('error', (error) => reject(workerFailed(format, error.message)));
        worker.on('exit', (code) => reject(workerFailed(format, `exit code ${code}`)));
      });
      // Whoever awaits results() sees a failure; until then (or for a worker given no task) it must not count as unhandled.
      outcome.catch(() => undefined);
      return outcome;
    });
  }

  get count(): number {
    return this.workers.length;
  }

  /** Gives `tasks[i]` to worker i (at most one task per worker), ends those left without one, and returns results(). */
  give(tasks: object[]): Promise<ShareResult[]> {
    if (tasks.length > this.workers.length) throw new Error(`${tasks.length} tasks for ${this.workers.length} workers`);
    tasks.forEach((task, i) => this.workers[i]!.postMessage(task));
    for (const worker of this.workers.slice(tasks.length)) void worker.terminate();
    return this.results(tasks.length);
  }

  /** Every column of the first `count` workers once all are read, or the first failure. */
  results(count: number): Promise<ShareResult[]> {
    const results = Promise.all(this.outcomes.slice(0, count)).then((parts) => parts.flat());
    results.catch(() => undefined);
    return results;
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}

function workerFailed(format: string, message: string): CrosstabError {
  return new CrosstabError(ErrorCode.internal, `a ${format} build worker failed: ${message}`, {
    hint: 'Run the build again; if it keeps failing, report it with the input file (crosstab build --threads 0 reads on one thread).',
  });
}

/** Whether `ids` is the whole of its buffer (then a worker can transfer the buffer, not copy it). */
export function wholeBuffer(ids: RowIds): boolean {
  return ids.byteOffset === 0 && ids.byteLength === ids.buffer.byteLength;
}
