import { CrosstabError, ErrorCode, fieldError } from '../errors.js';

/** Where a ClickHouse-backed dataset lives: the HTTP endpoint, database and table. */
export interface ClickHouseLocation {
  /** HTTP interface, e.g. `http://127.0.0.1:8123`. */
  http: string;
  username?: string;
  password?: string;
  database: string;
  /** The respondents table (Distributed over the shards, or a MergeTree on one server). */
  table: string;
  /** The URL as given, without a password, for messages. */
  display: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** True for `clickhouse://` and `clickhouses://` dataset addresses. */
export function isClickHouseUrl(source: string): boolean {
  return /^clickhouses?:\/\//i.test(source);
}

/**
 * Reads `clickhouse://[user[:password]@]host[:port][/database][?table=NAME]` (the port is
 * the HTTP interface's, default 8123; `clickhouses://` uses HTTPS, default 8443), or an
 * `http(s)://` URL of the HTTP interface with the same path and query. `option` names the
 * option or argument for messages; `defaultTable` is used when the URL has no `table=`.
 */
export function parseClickHouseUrl(source: string, option: string, defaultTable?: string): ClickHouseLocation {
  const bad = (what: string): never => {
    throw fieldError(
      ErrorCode.invalidOption,
      option,
      what,
      { hint: 'Write clickhouse://host:8123/database?table=NAME (the HTTP port of the server; user:password@ before the host if needed).' },
      ': ',
    );
  };
  if (typeof source !== 'string' || source === '') bad('a ClickHouse URL is required');
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    return bad(`${JSON.stringify(source)} is not a URL`);
  }
  const scheme = url.protocol.toLowerCase();
  const secure = scheme === 'clickhouses:' || scheme === 'https:';
  if (!['clickhouse:', 'clickhouses:', 'http:', 'https:'].includes(scheme)) bad(`scheme ${scheme} is not clickhouse:, clickhouses:, http: or https:`);
  if (url.hostname === '') bad('the URL has no host');
  const port = url.port === '' ? (secure ? '8443' : '8123') : url.port;
  const database = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, '')) || 'default';
  if (!IDENTIFIER.test(database)) bad(`database ${JSON.stringify(database)} must be letters, digits and _`);
  const table = url.searchParams.get('table') ?? defaultTable;
  if (table === undefined || table === '') bad('the URL names no table: add ?table=NAME');
  if (!IDENTIFIER.test(table!)) bad(`table ${JSON.stringify(table)} must be letters, digits and _`);
  const host = url.hostname.includes(':') && !url.hostname.startsWith('[') ? `[${url.hostname}]` : url.hostname;
  const location: ClickHouseLocation = {
    http: `${secure ? 'https' : 'http'}://${host}:${port}`,
    database,
    table: table!,
    display: `clickhouse://${url.username ? `${decodeURIComponent(url.username)}@` : ''}${host}:${port}/${database}?table=${table}`,
  };
  if (url.username) location.username = decodeURIComponent(url.username);
  if (url.password) location.password = decodeURIComponent(url.password);
  return location;
}

/** `name` when it is a plain identifier (letters, digits, _), else an invalid_option naming `option`. */
export function checkIdentifier(name: string, option: string): string {
  if (!IDENTIFIER.test(name)) {
    throw fieldError(ErrorCode.invalidOption, option, `${JSON.stringify(name)} must be letters, digits and _ (not starting with a digit)`);
  }
  return name;
}

/** A ClickHouse identifier quoted with backticks (names here are checked against IDENTIFIER first). */
export function quoteName(name: string): string {
  return `\`${name.replace(/[`\\]/g, '\\$&')}\``;
}
