import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CrosstabError, ErrorCode } from '../errors.js';

/** Where the embedded database's thread lives: beside this module in src/, in dist/access/ of the bundle (whichever dist/ file holds this code). */
function locateDatabaseThread(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, 'pglite-worker.js'), join(here, 'access', 'pglite-worker.js'), join(here, '..', 'access', 'pglite-worker.js')]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new CrosstabError(ErrorCode.internal, `The embedded database's thread (pglite-worker.js) was not found next to ${here}.`, { hint: 'Reinstall crosstab-engine.' });
}

interface Reply {
  id?: number;
  rows?: unknown[];
  /** Rows a COPY inserted. */
  count?: number;
  error?: { message: string; code?: string; detail?: string };
  ready?: true;
  fatal?: string;
}

/**
 * PGlite on its own thread (src/access/pglite-worker.js), so that Postgres's work for every
 * billed call does not run on the event loop that serves the HTTP requests. Statements go
 * in order, one at a time; a failed statement rejects with the database's message and its
 * SQLSTATE as `code`, like PGlite's own errors.
 */
export class DatabaseThread {
  private readonly waiting = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  private nextId = 1;
  private failure: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: Reply) => {
      if (reply.id === undefined) return;
      const waiter = this.waiting.get(reply.id);
      if (waiter === undefined) return;
      this.waiting.delete(reply.id);
      if (reply.error !== undefined) waiter.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code, detail: reply.error.detail }));
      else waiter.resolve(reply);
    });
    const fail = (error: Error): void => {
      this.failure = error;
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
    };
    worker.on('error', (error) => fail(new Error(`The embedded database's thread failed: ${error.message}`)));
    worker.on('exit', (code) => fail(new Error(`The embedded database's thread has stopped (exit code ${code}).`)));
  }

  static async start(path: string): Promise<DatabaseThread> {
    const worker = new Worker(locateDatabaseThread(), { workerData: { path } });
    let onMessage!: (reply: Reply) => void;
    let onError!: (error: Error) => void;
    let onExit!: (code: number) => void;
    const first = await new Promise<Reply>((resolve, reject) => {
      onMessage = resolve;
      onError = reject;
      onExit = (code) => reject(new Error(`the database thread stopped while opening (exit code ${code})`));
      worker.once('message', onMessage).once('error', onError).once('exit', onExit);
    }).finally(() => worker.off('message', onMessage).off('error', onError).off('exit', onExit));
    if (first.fatal !== undefined) {
      await worker.terminate();
      throw new Error(first.fatal);
    }
    return new DatabaseThread(worker);
  }

  query(sql: string, params: readonly unknown[] = []): Promise<{ rows: never[] }> {
    return this.send({ sql, params }).then((reply) => ({ rows: (reply.rows ?? []) as never[] }));
  }

  copyFrom(statement: string, data: string): Promise<number> {
    return this.send({ copy: statement, data }).then((reply) => reply.count ?? 0);
  }

  private send(message: object): Promise<Reply> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...message });
    });
  }

  /** Stops the thread at once (a hung or orphaned database): pending and later statements reject with `reason`. */
  async terminate(reason: Error): Promise<void> {
    this.failure ??= reason;
    for (const waiter of this.waiting.values()) waiter.reject(reason);
    this.waiting.clear();
    await this.worker.terminate();
  }

  /** Closes the database and stops the thread; a thread that does not answer within `timeoutMs` is stopped without it. */
  async close(timeoutMs: number): Promise<void> {
    if (this.failure === undefined) {
      const id = this.nextId++;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
        this.waiting.set(id, { resolve: () => resolve(), reject: () => resolve() });
        this.worker.postMessage({ id, close: true });
      });
      clearTimeout(timer);
    }
    await this.terminate(new Error('The embedded database is closed.'));
  }
}
