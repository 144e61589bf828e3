import { Socket } from 'node:net';
import { CrosstabError, ErrorCode } from '../errors.js';
import type { Database } from './queryable.js';
import { isUnavailableError } from './store-health.js';

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@');
  }
}

/** Distinct statement texts prepared by name on a server; others run unnamed. */
const MAX_PREPARED_STATEMENTS = 200;

/**
 * A PostgreSQL server through a `pg` pool of `poolSize` connections. No call waits longer
 * than `timeoutMs` for a connection, nor longer than `limits.statementMs` (when set; the
 * migrations run before it is) for a statement's answer (a frozen or unreachable server),
 * and `close` takes at most about `timeoutMs`: then it cuts the connections.
 */
export async function openServer(url: string, poolSize: number, timeoutMs: number, limits: { statementMs?: number }): Promise<Database> {
  const { default: pg } = await import('pg');
  // Every connection's socket, so that a close that the server does not answer can cut them.
  const sockets = new Set<Socket>();
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: timeoutMs,
    stream: () => {
      const socket = new Socket();
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      return socket;
    },
  });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it on the next query.
  });
  const location = withoutPassword(url);
  const close = async (): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([pool.end(), new Promise((done) => (timer = setTimeout(done, timeoutMs)))]);
    clearTimeout(timer);
    for (const socket of sockets) socket.destroy();
  };
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await close();
    throw new CrosstabError(ErrorCode.invalidOption, `Cannot connect to the database ${location}: ${(error as Error).message}.`, {
      field: 'database',
      hint: 'Check the URL (postgres://user:password@host:port/database), that the server runs and that the user may connect.',
    });
  }
  // Parameterized statements (our fixed texts: usage batches, key lookups, rate windows) are
  // prepared once per connection under a name and then only bound and run: the server does
  // not parse and plan the usage INSERT again for every batch.
  const names = new Map<string, string>();
  const statement = (sql: string, params: readonly unknown[] | undefined): { text: string; values?: unknown[]; name?: string; query_timeout?: number } => {
    const timeout = limits.statementMs === undefined ? {} : { query_timeout: limits.statementMs };
    // Without parameters pg uses the simple protocol (several commands allowed), as before.
    if (params === undefined || params.length === 0) return { text: sql, ...timeout };
    let name = names.get(sql);
    if (name === undefined && names.size < MAX_PREPARED_STATEMENTS) names.set(sql, (name = `crosstab_${names.size + 1}`));
    return name === undefined ? { text: sql, values: params as unknown[], ...timeout } : { name, text: sql, values: params as unknown[], ...timeout };
  };
  return {
    kind: 'postgres',
    location,
    query: (sql, params) => pool.query(statement(sql, params)) as never,
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work({ query: (sql, params) => client.query(statement(sql, params)) as never });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A connection that failed or timed out is not given back to the pool.
        if (isUnavailableError(error)) broken = error as Error;
        else await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release(broken);
      }
    },
    close,
  };
}

