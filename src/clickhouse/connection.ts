import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { cancelledError, CrosstabError, ErrorCode } from '../errors.js';
import type { ClickHouseLocation } from './url.js';

/** ClickHouse's error code for "table already exists" and "table doesn't exist". */
export const TABLE_EXISTS = 57;
export const UNKNOWN_TABLE = 60;

/**
 * One ClickHouse server, through the official `@clickhouse/client` over its HTTP interface.
 * Works with Debian's 18.16 server for what we use (queries in JSON formats, DDL, streamed
 * inserts); its query parameters (`{name:Type}`) need 19.x, so SQL here carries only literals
 * this package writes itself (integers, checked identifiers), never client text.
 */
export class ClickHouseConnection {
  private constructor(
    private readonly client: ClickHouseClient,
    readonly location: Pick<ClickHouseLocation, 'http' | 'display'>,
  ) {}

  /** Loaded lazily, so that the package entry does not pull the client in for local datasets. */
  static async connect(location: Pick<ClickHouseLocation, 'http' | 'display' | 'username' | 'password'>): Promise<ClickHouseConnection> {
    const { createClient, ClickHouseLogLevel } = await import('@clickhouse/client');
    const client = createClient({
      url: location.http,
      ...(location.username === undefined ? {} : { username: location.username }),
      ...(location.password === undefined ? {} : { password: location.password }),
      request_timeout: 600_000,
      // 18.16 has no settings the client would otherwise send; errors are reported as CrosstabErrors.
      log: { level: ClickHouseLogLevel.OFF },
    });
    return new ClickHouseConnection(client, location);
  }

  /** Runs a statement that returns nothing (DDL). */
  async command(sql: string): Promise<void> {
    try {
      await this.client.command({ query: sql });
    } catch (error) {
      throw this.failure(error, sql);
    }
  }

  /** Runs a SELECT; rows as objects (64-bit integers arrive as strings: convert with Number()). */
  async rows<T>(sql: string, signal?: AbortSignal): Promise<T[]> {
    try {
      const result = await this.client.query({ query: sql, format: 'JSONEachRow', ...(signal ? { abort_signal: signal } : {}) });
      return await result.json<T>();
    } catch (error) {
      if (signal?.aborted) throw cancelledError('the query', 'The AbortSignal of the query fired.');
      throw this.failure(error, sql);
    }
  }

  /** Streams `body` (RowBinary rows) into `table`. */
  insertRowBinary(table: string, body: Readable): Promise<void> {
    return this.insert(`INSERT INTO ${table} FORMAT RowBinary`, body);
  }

  /** Inserts rows given as objects (JSONEachRow: strings keep every byte). */
  insertJson(table: string, rows: readonly object[]): Promise<void> {
    const body = Readable.from([rows.map((row) => JSON.stringify(row)).join('\n') + '\n'], { objectMode: false });
    return this.insert(`INSERT INTO ${table} FORMAT JSONEachRow`, body);
  }

  /** Sends an INSERT with its data as the request body and waits for the server's answer. */
  private async insert(sql: string, body: Readable): Promise<void> {
    try {
      const result = await this.client.exec({ query: sql, values: body });
      result.stream.resume();
      await new Promise<void>((resolve, reject) => {
        result.stream.on('end', resolve).on('error', reject);
      });
    } catch (error) {
      throw this.failure(error, sql);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /** A CrosstabError for a failed request: unreachable server, or the server's own error. */
  failure(error: unknown, sql: string): CrosstabError {
    const cause = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    const network = cause.code ?? cause.cause?.code;
    if (network && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|UND_ERR_\w+)$/.test(network)) {
      return new CrosstabError(ErrorCode.backendUnavailable, `ClickHouse at ${this.location.display} is unreachable (${network})`, {
        hint: 'Check that clickhouse-server runs and that the URL names its HTTP port (8123 by default).',
      });
    }
    const message = (error as Error).message ?? String(error);
    const code = Number(/Code: (\d+)/.exec(message)?.[1] ?? NaN);
    const text = (/e\.displayText\(\) = (?:DB::Exception: )?(.*?)(?:, e\.what\(\) = .*)?$/s.exec(message)?.[1] ?? message).trim();
    return new CrosstabError(ErrorCode.backendUnavailable, `ClickHouse at ${this.location.display} failed: ${text}`, {
      ...(Number.isFinite(code) ? { clickhouseCode: code } : {}),
      sql: sql.length > 300 ? `${sql.slice(0, 300)}…` : sql,
      hint: 'See the message from ClickHouse; `crosstab push` creates the tables a ClickHouse dataset needs.',
    });
  }
}
