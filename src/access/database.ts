import { CrosstabError, ErrorCode, fieldError } from '../errors.js';
import { openEmbedded } from './embedded-database.js';
import { migrate } from './migrations.js';
import type { Database } from './queryable.js';
import { openServer } from './server-database.js';
import { DEFAULT_STORE_TIMEOUT_MS, guardDatabase, type StoreEventListener, type StoreOperationListener } from './store-health.js';

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

export interface OpenDatabaseOptions {
  /** Connections of a PostgreSQL server's pool (default 10). */
  poolSize?: number;
  /**
   * Longest wait for one operation (a statement, a transaction, a connection), in ms (default
   * 10,000): past it the caller gets a CrosstabError `store_unavailable`. The migrations at
   * open are not bounded by it.
   */
  timeoutMs?: number;
  /** Told once when the database becomes unavailable and once when it answers again. */
  onEvent?: StoreEventListener;
  /** Told of every operation: its seconds, and whether it failed for want of the store (metrics). */
  onOperation?: StoreOperationListener;
}

/**
 * Opens the database at `location` (a `postgres://` URL or a folder for the embedded store)
 * and brings its schema up to date. Rejects with a CrosstabError naming the field `database` when it
 * cannot be reached, when another process holds the embedded folder, or when the embedded
 * folder once held a database that is gone. Every operation of the database returned is
 * bounded by `timeoutMs`, and a store that cannot serve rejects with `store_unavailable`.
 */
export async function openDatabase(location: string, options: OpenDatabaseOptions = {}): Promise<Database> {
  if (typeof location !== 'string' || location.trim() === '') {
    throw fieldError(ErrorCode.invalidOption, 'database', 'must be a postgres:// URL or a folder.');
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new CrosstabError(ErrorCode.invalidOption, `timeoutMs must be a positive integer (ms); got ${String(timeoutMs)}.`, { field: 'timeoutMs' });
  const limits: { statementMs?: number } = {};
  const database = isServerUrl(location) ? await openServer(location, options.poolSize ?? 10, timeoutMs, limits) : await openEmbedded(location, timeoutMs);
  try {
    await migrate(database);
  } catch (error) {
    await database.close();
    throw error;
  }
  limits.statementMs = timeoutMs;
  return guardDatabase(database, { timeoutMs, ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }), ...(options.onOperation === undefined ? {} : { onOperation: options.onOperation }) });
}
