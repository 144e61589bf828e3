import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import type { Piscina } from 'piscina';
import { cancelledError, CrosstabError, ErrorCode } from '../errors.js';
import type { TableResult } from '../facade/types.js';
import { writeTableAnswer, type TableAnswerOptions } from './table-answer.js';
import { TableAnswerStream } from './table-answer-stream.js';
import { plainTable, type RenderTask } from './table-render-task.js';
import type { WorkerStreamMessage } from './table-stream.js';
import { plainTabbook, tabbookXLSXBytes, type TabbookTask } from './tabbook-bytes.js';
import type { Tabbook, TabbookLayout } from './tabbook-model.js';

export interface TableRendererOptions {
  /** Worker threads; default half the machine's parallelism, at least 1. */
  threads?: number;
  /** Heap of one worker in MB: a table answer that needs more fails alone (`out_of_memory`), never the process. Default 1024. */
  maxHeapMb?: number;
  /** The worker module; default table-worker.js of the build. Without one (running from the sources), answers are written on the calling thread. */
  worker?: string;
}

/**
 * Writes table answers (statistics, then JSON, CSV or XLSX bytes) on worker threads
 * (piscina), so a large one never holds the thread that serves requests, and one whose
 * memory runs away ends its worker, not the process. An aborted signal stops the worker
 * (it is replaced) and rejects with `cancelled`.
 */
export class TableRenderer {
  readonly threads: number;
  private readonly file: string | undefined;
  private piscina: Promise<Piscina> | undefined;
  private readonly maxHeapMb: number;

  constructor(options: TableRendererOptions = {}) {
    this.threads = options.threads ?? Math.max(1, Math.floor(availableParallelism() / 2));
    this.maxHeapMb = options.maxHeapMb ?? 1024;
    this.file = options.worker ?? locateWorker();
  }

  /** Whether answers are written on worker threads (false when running from the sources). */
  get offThread(): boolean {
    return this.file !== undefined;
  }

  private pool(): Promise<Piscina> {
    const filename = this.file!;
    this.piscina ??= import('piscina').then((module) => {
      // As pool.ts: the CommonJS build wraps the import for interop.
      const Piscina = module.Piscina ?? (module as unknown as { default: typeof module }).default.Piscina;
      // minThreads equal to maxThreads: piscina replaces a thread it ends (a table given up while
      // computed) only up to minThreads, and a task queued meanwhile would wait for the next
      // task to arrive before any thread ran it.
      return new Piscina({ filename, minThreads: this.threads, maxThreads: this.threads, idleTimeout: 60_000, resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb } });
    });
    return this.piscina;
  }

  /** The answer's bytes; rejects with the CrosstabError of a refusal (a limit), `cancelled`, or `out_of_memory`. */
  async render(result: TableResult, options: TableAnswerOptions, signal?: AbortSignal): Promise<Uint8Array> {
    if (signal?.aborted) throw cancelledError('the table');
    if (this.file === undefined) return writeTableAnswer(result, options);
    return this.run({ table: plainTable(result), options }, signal, 'the table');
  }

  private async run(task: RenderTask | TabbookTask, signal: AbortSignal | undefined, what: string): Promise<Uint8Array> {
    let answer: unknown;
    try {
      const piscina = await this.pool();
      answer = await piscina.run(task, signal === undefined ? {} : { signal });
    } catch (error) {
      throw this.failure(error, signal, what);
    }
    if (answer instanceof ArrayBuffer) return new Uint8Array(answer);
    throw refusalOf(answer);
  }

  /**
   * A JSON or CSV answer streamed by its worker (TableAnswerStream), once its statistics are
   * done and its size is known to be within `maxBytes`; an XLSX answer, or any answer when
   * running from the sources, whole (render()). Rejects as render() does.
   */
  async stream(result: TableResult, options: TableAnswerOptions, signal?: AbortSignal): Promise<Uint8Array | TableAnswerStream> {
    if ((options.format !== 'json' && options.format !== 'csv') || this.file === undefined) return this.render(result, options, signal);
    if (signal?.aborted) throw cancelledError('the table');
    const { port1, port2 } = new MessageChannel();
    const task: RenderTask = { table: plainTable(result), options, port: port2 };
    const piscina = await this.pool();
    // The caller's signal stops the worker (piscina ends its thread) only while the statistics
    // are computed. Once the answer's size is known, the stream is stopped by its own cancel,
    // which the worker obeys and then takes the next task: ending the thread there left a task
    // queued meanwhile with no thread to run it.
    const computing = new AbortController();
    const stop = () => computing.abort();
    signal?.addEventListener('abort', stop, { once: true });
    const done = piscina.run(task, { transferList: [port2], signal: computing.signal });
    void done.then(
      () => signal?.removeEventListener('abort', stop),
      () => signal?.removeEventListener('abort', stop),
    );
    return new Promise<TableAnswerStream>((resolve, reject) => {
      let sized = false;
      port1.once('message', (message: WorkerStreamMessage) => {
        if (!('size' in message)) return;
        sized = true;
        signal?.removeEventListener('abort', stop);
        const answer = new TableAnswerStream(message.size, port1, done);
        // Gone while the size was on its way: nothing will iterate the stream, so stop it here.
        if (signal?.aborted) answer.cancel();
        resolve(answer);
      });
      // Settled before its size arrived: a refusal or a failure (the stream handles later ones).
      done.then(
        (answer) => {
          if (sized) return;
          port1.close();
          reject(refusalOf(answer));
        },
        (error: unknown) => {
          if (sized) return;
          port1.close();
          reject(this.failure(error, signal));
        },
      );
    });
  }

  private failure(error: unknown, signal: AbortSignal | undefined, what = 'the table'): CrosstabError {
    if (signal?.aborted) return cancelledError(what);
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return new CrosstabError(ErrorCode.outOfMemory, `writing the table's answer needed more than the ${this.maxHeapMb} MB a table may use`, {
        hint: 'Ask for fewer cells, fewer statistics, or the CSV format.',
        limit: this.maxHeapMb,
      });
    }
    return new CrosstabError(ErrorCode.workerFailed, `a table worker failed: ${(error as Error).message}`, { hint: 'Run the table again; if it keeps failing, report it with the request.' });
  }

  /**
   * A tab book's XLSX bytes (as `crosstab tabbook` writes it), written on a worker thread as
   * a table's answer is; rejects as render() does, `limits.answerBytes` past `maxBytes`.
   */
  async renderTabbook(book: Tabbook, layout: TabbookLayout, maxBytes: number, signal?: AbortSignal): Promise<Uint8Array> {
    if (signal?.aborted) throw cancelledError('the tab book');
    if (this.file === undefined) return tabbookXLSXBytes(book, layout, maxBytes);
    return this.run({ book: plainTabbook(book), layout, maxBytes }, signal, 'the tab book');
  }

  /** Stops the worker threads. */
  async close(): Promise<void> {
    const pool = this.piscina;
    this.piscina = undefined;
    if (pool !== undefined) await (await pool).destroy();
  }
}

/** The CrosstabError a worker answered instead of bytes. */
function refusalOf(answer: unknown): CrosstabError {
  const failure = (answer as { error?: Parameters<typeof CrosstabError.fromJSON>[0] } | undefined)?.error;
  if (failure !== undefined) return CrosstabError.fromJSON(failure);
  return new CrosstabError(ErrorCode.internal, 'a table worker answered with neither bytes nor an error');
}

function locateWorker(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  return [join(here, 'table-worker.js'), join(here, 'report', 'table-worker.js'), join(here, '..', 'report', 'table-worker.js')].find((path) => existsSync(path));
}
