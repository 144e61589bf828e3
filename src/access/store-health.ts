import { CrosstabError, ErrorCode, isCrosstabError } from '../errors.js';
import type { Database } from './queryable.js';

/** How long one store operation (a statement, a transaction, a COPY) may take by default before its caller is answered. */
export const DEFAULT_STORE_TIMEOUT_MS = 10_000;

/**
 * How long a store that went down must answer without a failure before it counts as back:
 * a store that can still read but not write (a full disk) is down, not flapping up and down
 * with every successful read.
 */
const STABLE_MS = 5000;

/** Told once when the store becomes unavailable and once when it answers again. */
export type StoreEventListener = (event: 'store_down' | 'store_up', message: string) => void;

/** Told of each store operation: its seconds, and whether it failed for want of the store. */
export type StoreOperationListener = (seconds: number, unavailable: boolean) => void;

/** A store error for `location`: what happened and what to do. */
export function storeUnavailable(location: string, problem: string, hint = 'Retry later; the service answers 503 until its database is back.'): CrosstabError {
  return new CrosstabError(ErrorCode.storeUnavailable, `The access database ${location} is unavailable: ${problem}`, { field: 'database', hint });
}

/**
 * SQLSTATE classes that say the database cannot serve now, not that the statement is wrong:
 * connection exception (08), insufficient resources such as a full disk (53), operator
 * intervention such as a shutdown (57), system error such as an I/O error (58), internal
 * error (XX).
 */
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58', 'XX']);

/**
 * Whether `error`, thrown by the database driver, means the database is unavailable (a lost
 * connection, a refused one, a timeout, a server shutting down, a full disk) rather than a
 * statement it refused (a constraint, a syntax error: a bug or bad input, reported as such).
 * Driver errors carry no stable code for a lost connection, so an error without a SQLSTATE
 * counts as unavailable unless it is a programming error (TypeError, RangeError).
 */
export function isUnavailableError(error: unknown): boolean {
  if (isCrosstabError(error)) return error.code === ErrorCode.storeUnavailable;
  if (error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError) return false;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return UNAVAILABLE_CLASSES.has(code.slice(0, 2));
  return true;
}

/**
 * Bounds `work` by `timeoutMs`: rejects with a store_unavailable error when it takes longer
 * (the work itself goes on; its result is dropped).
 */
export function withTimeout<T>(work: Promise<T>, timeoutMs: number, location: string, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(storeUnavailable(location, `${what} did not complete within ${timeoutMs} ms.`)), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The database with every operation bounded in time and every failure to reach it turned
 * into a CrosstabError `store_unavailable` (the REST API answers 503), reported to
 * `onEvent` once when the store goes down and once when it answers again (no failure for
 * STABLE_MS, then a success), not per request.
 * Errors of the statements themselves pass through unchanged.
 */
export function guardDatabase(db: Database, options: { timeoutMs?: number; onEvent?: StoreEventListener; onOperation?: StoreOperationListener } = {}): Database {
  const timeoutMs = options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
  const onEvent = options.onEvent ?? (() => {});
  const onOperation = options.onOperation;
  let down = false;
  let lastFailure = 0;
  const guarded = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    const started = onOperation === undefined ? 0 : performance.now();
    try {
      const result = await withTimeout(run(), timeoutMs, db.location, what);
      onOperation?.((performance.now() - started) / 1000, false);
      if (down && performance.now() - lastFailure >= STABLE_MS) {
        down = false;
        onEvent('store_up', `The access database ${db.location} answers again.`);
      }
      return result;
    } catch (error) {
      const unavailableError = isUnavailableError(error);
      onOperation?.((performance.now() - started) / 1000, unavailableError);
      if (!unavailableError) throw error;
      const unavailable = isCrosstabError(error) ? error : storeUnavailable(db.location, `${(error as Error).message ?? String(error)}.`);
      lastFailure = performance.now();
      if (!down) {
        down = true;
        onEvent('store_down', `${unavailable.message} Requests that need it are answered 503 until it is back.`);
      }
      throw unavailable;
    }
  };
  const copyFrom = db.copyFrom;
  return {
    kind: db.kind,
    location: db.location,
    query: (sql, params) => guarded('A statement', () => db.query(sql, params)),
    transaction: (work) => guarded('A transaction', () => db.transaction(work)),
    ...(copyFrom === undefined ? {} : { copyFrom: (statement: string, data: string) => guarded('A COPY', () => copyFrom.call(db, statement, data)) }),
    close: () => db.close(),
  };
}
