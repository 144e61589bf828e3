import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CrosstabError, ErrorCode } from '../errors.js';
import { migrate } from './migrations.js';
import type { Database } from './queryable.js';

export type { Database, Queryable } from './queryable.js';

/** The embedded database of the working directory, shared by `crosstab serve` and the admin commands. */
export const DEFAULT_DATABASE = '.crosstab/db';

/** `--database`: the flag, else CROSSTAB_DATABASE, else `.crosstab/db`. */
export function databaseLocation(flag: string | undefined): string {
  return flag ?? process.env['CROSSTAB_DATABASE'] ?? DEFAULT_DATABASE;
}

function isServerUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@');
  }
}

/**
 * Opens the database at `location` (a `postgres://` URL or a folder for the embedded store)
 * and brings its schema up to date. Rejects with a CrosstabError naming `--database` when it
 * cannot be reached, or when another process holds the embedded folder.
 */
export async function openDatabase(location: string, options: { poolSize?: number } = {}): Promise<Database> {
  if (typeof location !== 'string' || location.trim() === '') {
    throw new CrosstabError(ErrorCode.invalidOption, '--database must be a postgres:// URL or a folder.', { field: '--database' });
  }
  const database = isServerUrl(location) ? await openServer(location, options.poolSize ?? 10) : await openEmbedded(location);
  try {
    await migrate(database);
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

/** Distinct statement texts prepared by name on a server; others run unnamed. */
const MAX_PREPARED_STATEMENTS = 200;

async function openServer(url: string, poolSize: number): Promise<Database> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it on the next query.
  });
  const location = withoutPassword(url);
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end();
    throw new CrosstabError(ErrorCode.invalidOption, `Cannot connect to the database ${location}: ${(error as Error).message}.`, {
      field: '--database',
      hint: 'Check the URL (postgres://user:password@host:port/database), that the server runs and that the user may connect.',
    });
  }
  // Parameterized statements (our fixed texts: usage batches, key lookups, rate windows) are
  // prepared once per connection under a name and then only bound and run: the server does
  // not parse and plan the usage INSERT again for every batch.
  const names = new Map<string, string>();
  const statement = (sql: string, params: readonly unknown[] | undefined): { text: string; values?: unknown[]; name?: string } => {
    // Without parameters pg uses the simple protocol (several commands allowed), as before.
    if (params === undefined || params.length === 0) return { text: sql };
    let name = names.get(sql);
    if (name === undefined && names.size < MAX_PREPARED_STATEMENTS) names.set(sql, (name = `crosstab_${names.size + 1}`));
    return name === undefined ? { text: sql, values: params as unknown[] } : { name, text: sql, values: params as unknown[] };
  };
  return {
    kind: 'postgres',
    location,
    query: (sql, params) => pool.query(statement(sql, params)) as never,
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work({ query: (sql, params) => client.query(statement(sql, params)) as never });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/**
 * PGlite keeps the database in one process: a lock file beside the folder makes a second
 * process fail with a clear message instead of corrupting it.
 */
async function takeLock(lockPath: string, folder: string): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim());
      let alive = false;
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid) {
        try {
          process.kill(pid, 0);
          alive = true;
        } catch (probe) {
          alive = (probe as NodeJS.ErrnoException).code === 'EPERM';
        }
      }
      if (alive) {
        throw new CrosstabError(ErrorCode.locked, `The embedded database ${folder} is in use by process ${pid} (${lockPath}).`, {
          field: '--database',
          hint: 'An embedded database serves one process at a time: stop that process (e.g. `crosstab serve`) first, or run every process on a PostgreSQL server with --database postgres://...',
        });
      }
      await rm(lockPath, { force: true });
    }
  }
  throw new CrosstabError(ErrorCode.locked, `Cannot lock the embedded database ${folder} (${lockPath}).`, {
    field: '--database',
    hint: 'Another process keeps taking the lock: stop it, or run every process on a PostgreSQL server with --database postgres://...',
  });
}

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
class DatabaseThread {
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

  async close(): Promise<void> {
    if (this.failure === undefined) {
      const id = this.nextId++;
      await new Promise<void>((resolve) => {
        this.waiting.set(id, { resolve: () => resolve(), reject: () => resolve() });
        this.worker.postMessage({ id, close: true });
      });
    }
    this.failure ??= new Error('The embedded database is closed.');
    await this.worker.terminate();
  }
}

async function openEmbedded(folder: string): Promise<Database> {
  const path = resolve(folder);
  const lockPath = `${path}.lock`;
  await mkdir(dirname(path), { recursive: true });
  await takeLock(lockPath, folder);
  let db: DatabaseThread;
  try {
    db = await DatabaseThread.start(path);
  } catch (error) {
    await rm(lockPath, { force: true });
    throw new CrosstabError(ErrorCode.invalidOption, `Cannot open the embedded database ${folder}: ${(error as Error).message}.`, {
      field: '--database',
      hint: 'Give --database an empty or existing PGlite folder, or a postgres:// URL.',
    });
  }
  // PGlite runs one statement at a time; a transaction must not interleave with other
  // queries, so everything goes through one queue.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(run: () => Promise<T>): Promise<T> => {
    const next = queue.then(run, run);
    queue = next.catch(() => {});
    return next;
  };
  return {
    kind: 'embedded',
    location: folder,
    query: (sql, params) => serial(() => db.query(sql, params)) as never,
    copyFrom: (statement, data) => serial(() => db.copyFrom(statement, data)),
    transaction: (work) =>
      serial(async () => {
        await db.query('BEGIN');
        try {
          const result = await work({ query: (sql, params) => db.query(sql, params) as never });
          await db.query('COMMIT');
          return result;
        } catch (error) {
          await db.query('ROLLBACK').catch(() => {});
          throw error;
        }
      }),
    async close() {
      await serial(() => db.close());
      await rm(lockPath, { force: true });
    },
  };
}
