import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
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
  return {
    kind: 'postgres',
    location,
    query: (sql, params) => pool.query(sql, params as unknown[]) as never,
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work({ query: (sql, params) => client.query(sql, params as unknown[]) as never });
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

async function openEmbedded(folder: string): Promise<Database> {
  const path = resolve(folder);
  const lockPath = `${path}.lock`;
  await mkdir(dirname(path), { recursive: true });
  await takeLock(lockPath, folder);
  let db: import('@electric-sql/pglite').PGlite;
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    db = await PGlite.create(path);
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
    query: (sql, params) => serial(() => db.query(sql, params as unknown[])) as never,
    transaction: (work) => serial(() => db.transaction((tx) => work({ query: (sql, params) => tx.query(sql, params as unknown[]) as never }))),
    async close() {
      await serial(() => db.close());
      await rm(lockPath, { force: true });
    },
  };
}
