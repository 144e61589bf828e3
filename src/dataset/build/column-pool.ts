import { Worker } from 'node:worker_threads';
import { CrosstabError, ErrorCode } from '../../errors.js';
import type { ColumnBuffersTask, ColumnMemory, StoredBuffer } from './column-buffers.js';
import { workerFile } from '../input/worker-file.js';
import { columnsModule } from '../../kernel/wasm-module.js';

interface Waiting {
  resolve: (buffers: StoredBuffer[]) => void;
  reject: (error: Error) => void;
}

/**
 * Worker threads that make variables' buffers (compile-worker.js) for the dataset writer,
 * each with the column builder over the build's shared memory (the respondents' order and a
 * scratch area per worker). Tasks go to the worker with the fewest waiting; results come
 * back in any order, each to its own promise.
 */
export class ColumnPool {
  private readonly workers: Array<{ worker: Worker; waiting: number }> = [];
  private readonly pending = new Map<number, Waiting>();
  private nextId = 0;
  private failure: Error | undefined;

  constructor(threads: number, { memory, orderAt, scratchAt }: ColumnMemory) {
    const path = workerFile('compile-worker.js', 'the dataset build worker', import.meta.url);
    const module = columnsModule();
    for (let i = 0; i < threads; i++) {
      const worker = new Worker(path, { workerData: { module, memory, orderAt, scratchAt: scratchAt[i] } });
      const entry = { worker, waiting: 0 };
      worker.on('message', ({ id, buffers, error }: { id: number; buffers?: StoredBuffer[]; error?: string }) => {
        entry.waiting--;
        const waiting = this.pending.get(id);
        this.pending.delete(id);
        if (error !== undefined) waiting?.reject(compileFailed(error));
        else waiting?.resolve(buffers!);
      });
      worker.on('error', (error) => this.fail(compileFailed(error.message)));
      worker.on('exit', (code) => {
        if (code !== 0) this.fail(compileFailed(`exit code ${code}`));
      });
      this.workers.push(entry);
    }
  }

  /** Makes one variable's buffers; `transfer` hands the ids' memory to the worker (the caller lets go of them). */
  run(task: ColumnBuffersTask, transfer: boolean): Promise<StoredBuffer[]> {
    if (this.failure) return Promise.reject(this.failure);
    const entry = this.workers.reduce((best, candidate) => (candidate.waiting < best.waiting ? candidate : best));
    const id = this.nextId++;
    entry.waiting++;
    return new Promise<StoredBuffer[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      const ids = task.ids;
      const own = transfer && ids.byteOffset === 0 && ids.byteLength === ids.buffer.byteLength && !(ids.buffer instanceof SharedArrayBuffer);
      entry.worker.postMessage({ id, task }, own ? [ids.buffer as ArrayBuffer] : []);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map(({ worker }) => worker.terminate()));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}

function compileFailed(message: string): CrosstabError {
  return new CrosstabError(ErrorCode.internal, `a dataset build worker failed: ${message}`, {
    hint: 'Run the build again; if it keeps failing, report it with the input file (crosstab build --threads 0 builds on one thread).',
  });
}
