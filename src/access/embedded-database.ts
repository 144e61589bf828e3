import { statSync } from 'node:fs';
import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { CrosstabError, ErrorCode } from '../errors.js';
import { lockEmbedded, type EmbeddedLock } from './embedded-lock.js';
import { DatabaseThread } from './embedded-thread.js';
import type { Database } from './queryable.js';
import { storeUnavailable } from './store-health.js';

/**
 * What the lock file says once a database has been created in its folder. A start that
 * finds this but no database refuses to create an empty one in its place.
 */
const CREATED = 'crosstab-engine embedded database created';

/** Device and inode: which folder or file a path named when we opened it. */
interface Identity {
  dev: number;
  ino: number;
}

function identityOf(path: string): Identity | undefined {
  try {
    const info = statSync(path, { throwIfNoEntry: false });
    return info === undefined ? undefined : { dev: info.dev, ino: info.ino };
  } catch {
    return undefined; // e.g. ENOTDIR: a file now stands where a folder was
  }
}

const same = (a: Identity | undefined, b: Identity): boolean => a !== undefined && a.dev === b.dev && a.ino === b.ino;

/** Records in the lock file that a database exists in `path` (written through to disk). */
async function markCreated(lockPath: string, path: string): Promise<void> {
  const file = await open(lockPath, 'w', 0o600);
  try {
    await file.writeFile(`${CREATED} in ${path} at ${new Date().toISOString()}.\nWhile this file says so, crosstab refuses to start on a missing or empty folder there. Delete this file only to start over with a new, empty database.\n`);
    await file.sync();
  } finally {
    await file.close();
  }
}

/**
 * Opens the embedded database in `folder`, after taking its lock (`<folder>.lock`, an flock
 * the kernel releases when this process ends). Refuses, naming the folder, when another
 * process holds it, and when the lock file records a database that is no longer there
 * (removed or moved): it never creates an empty database in place of one it had.
 *
 * While open, every statement is followed by a check that the folder and the lock file are
 * still the ones opened (device and inode, as the usage ledger checks its file), so a removed,
 * renamed or replaced folder fails the statement that could not be made durable and every one
 * after it: the store reports itself unavailable (503), never a 200 with nothing behind it.
 * Statements that waited longer than `timeoutMs` for their turn are not run (their caller was
 * answered already); `close` takes at most about `timeoutMs`.
 */
export async function openEmbedded(folder: string, timeoutMs: number): Promise<Database> {
  const path = resolve(folder);
  const lockPath = `${path}.lock`;
  await mkdir(dirname(path), { recursive: true });
  const lock: EmbeddedLock = await lockEmbedded(lockPath, folder);
  let db: DatabaseThread;
  let folderIdentity: Identity;
  const lockIdentity = identityOf(lockPath);
  try {
    const hadDatabase = identityOf(join(path, 'PG_VERSION')) !== undefined;
    const marker = await readFile(lockPath, 'utf8').catch(() => '');
    if (!hadDatabase && marker.startsWith(CREATED)) {
      throw new CrosstabError(ErrorCode.invalidOption, `The embedded database ${folder} is missing: ${lockPath} records that one was created in ${path}, and that folder is now ${identityOf(path) === undefined ? 'gone' : 'empty'}.`, {
        field: 'database',
        hint: `Restore the folder (from a backup, or move it back), or point \`database\` at where it is now. To start over with a new, empty database on purpose, delete ${lockPath} as well.`,
        hintOptions: ['database'],
      });
    }
    try {
      db = await DatabaseThread.start(path);
    } catch (error) {
      throw new CrosstabError(ErrorCode.invalidOption, `Cannot open the embedded database ${folder}: ${(error as Error).message}.`, {
        field: 'database',
        hint: 'Give `database` an empty or existing PGlite folder, or a postgres:// URL.',
        hintOptions: ['database'],
      });
    }
    if (!marker.startsWith(CREATED)) await markCreated(lockPath, path);
    folderIdentity = identityOf(path) as Identity;
  } catch (error) {
    await lock.release();
    throw error;
  }

  let lost: CrosstabError | undefined;
  const fail = (problem: string): CrosstabError => {
    if (lost === undefined) {
      lost = storeUnavailable(folder, problem, `Nothing can be billed until the database is back: restore ${path} and restart the server.`);
      void db.terminate(lost);
    }
    return lost;
  };
  lock.onLost((reason) => fail(`${reason}.`));
  /** Throws when the folder or the lock file is not the one opened any more. */
  const checkFolder = (): void => {
    if (lost !== undefined) throw lost;
    if (!same(identityOf(path), folderIdentity)) throw fail(`its folder ${path} was removed, renamed or replaced while the server ran.`);
    if (lockIdentity === undefined || !same(identityOf(lockPath), lockIdentity)) throw fail(`its lock file ${lockPath} was removed or replaced while the server ran, so another process could open the database.`);
  };

  // PGlite runs one statement at a time; a transaction must not interleave with other
  // queries, so everything goes through one queue.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(run: () => Promise<T>): Promise<T> => {
    const queued = performance.now();
    const turn = async (): Promise<T> => {
      if (lost !== undefined) throw lost;
      if (performance.now() - queued > timeoutMs) throw storeUnavailable(folder, `a statement waited more than ${timeoutMs} ms for the ones before it; it was not run.`);
      try {
        const result = await run();
        checkFolder();
        return result;
      } catch (error) {
        checkFolder();
        throw error;
      }
    };
    const next = queue.then(turn, turn);
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
      // The statements before it finish first, but a hung one must not keep the process from exiting.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([queue, new Promise((done) => (timer = setTimeout(done, timeoutMs)))]);
      clearTimeout(timer);
      await db.close(timeoutMs);
      await lock.release();
    },
  };
}
