import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Piscina } from 'piscina';
import { cancelledError, CrosstabError, ErrorCode } from '../errors.js';
import type { TableResult } from '../facade/types.js';
import { writeTableAnswer, type TableAnswerOptions } from './table-answer.js';
import { plainTable, type RenderTask } from './table-render-task.js';
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
      return new Piscina({ filename, minThreads: 0, maxThreads: this.threads, idleTimeout: 60_000, resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb } });
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
      if (signal?.aborted) throw cancelledError(what);
      const code = (error as { code?: unknown }).code;
      if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new CrosstabError(ErrorCode.outOfMemory, `writing the table's answer needed more than the ${this.maxHeapMb} MB a table may use`, {
          hint: 'Ask for fewer cells, fewer statistics, or the CSV format.',
          limit: this.maxHeapMb,
        });
      }
      throw new CrosstabError(ErrorCode.workerFailed, `a table worker failed: ${(error as Error).message}`, { hint: 'Run the table again; if it keeps failing, report it with the request.' });
    }
    if (answer instanceof ArrayBuffer) return new Uint8Array(answer);
    const failure = (answer as { error?: Parameters<typeof CrosstabError.fromJSON>[0] }).error;
    if (failure !== undefined) throw CrosstabError.fromJSON(failure);
    throw new CrosstabError(ErrorCode.internal, 'a table worker answered with neither bytes nor an error');
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

function locateWorker(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  return [join(here, 'table-worker.js'), join(here, 'report', 'table-worker.js'), join(here, '..', 'report', 'table-worker.js')].find((path) => existsSync(path));
}
