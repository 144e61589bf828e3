/** The framework-neutral request, response and dataset types the handler and its operations share. */
import type { CrosstabQuery, CrosstabResult, DatasetInfo, TableQuery, TableResult } from '../index.js';
import type { ResponseStream } from './answer-budget.js';
import type { HandlerHeaders } from './headers.js';

/** What the handler needs of a dataset: `Dataset` from openDataset() fits. */
export interface CrosstabDataset {
  readonly info: DatasetInfo;
  crosstab(query: CrosstabQuery): Promise<CrosstabResult>;
  /** crosstab() with the result itself, not a promise, when it is answered from memory (Dataset.crosstabNow); used instead of crosstab() when present. */
  crosstabNow?(query: CrosstabQuery): CrosstabResult | Promise<CrosstabResult>;
  /** POST /tables (a dataset without it answers only POST /crosstab). */
  table?(query: TableQuery): Promise<TableResult>;
  /** Authorization groups an expression touches: GET /surveys/{SurveyCode} shows a code's definition only when all are the caller's. */
  groupsOf?(expression: string, allowedGroups?: readonly string[]): string[];
  /** Kept open for one request's calls until the returned function is called: a reload's draining close() lets the request finish on it. */
  hold?(): () => void;
}

/** A framework-neutral HTTP request. */
export interface HandlerRequest {
  method: string;
  /** Path with optional query string, e.g. `/v1/crosstab`. */
  path: string;
  headers: HandlerHeaders;
  /** The body, already read (code that calls the handler itself; every shim passes `readBody`). */
  body?: Uint8Array | string;
  /**
   * Instead of `body`: reads the request's own stream when the handler asks, so that an answer the headers
   * decide (unknown path, wrong method, bad key, wrong Content-Type, too large) is sent
   * without waiting for it, and with `Connection: close`. Called at most once; resolves with
   * at most `maxBodyBytes + 1` bytes; stops reading when `signal` aborts (the body timeout).
   */
  readBody?: (signal: AbortSignal) => Promise<Uint8Array>;
  /** The peer's IP address, when the shim knows it (the portal throttles sign-ins by it). */
  remoteAddress?: string;
  /**
   * Aborts when the client has gone (its connection closed before the answer was sent): a
   * table in work stops, and nothing is billed. The node-based shims set it.
   */
  signal?: AbortSignal;
  /**
   * The caller sends HandlerResponse.stream when there is one (every shim): a large table
   * answer then goes out in chunks as its worker writes them. Without it, the body is whole.
   */
  streaming?: boolean;
}

/** A framework-neutral HTTP response. */
export interface HandlerResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** Text (sent as UTF-8) or bytes (sent as they are, e.g. a workbook); `content-length` counts the bytes sent. */
  body: string | Uint8Array;
  /**
   * Only for a request with `streaming`: the body, sent in chunks after the headers (`body` is
   * then empty, `content-length` its size). Iterate it to its end, or cancel() it.
   */
  stream?: ResponseStream;
}

/** One line of the access log. Never holds an API key. */
export interface AccessLogEntry {
  time: string;
  requestId: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  keyId?: string;
  /** The account of the key (database keys, single sign-on). */
  accountId?: string;
  /** The operationId of the route the request reached (`docs`, `crosstab`, `tables`...). */
  operation?: string;
  /** The answer was billed: its usage record is durable. */
  billed?: boolean;
  survey?: string;
  /** The checksum of the dataset that answered (also sent as X-Dataset-Version). */
  datasetVersion?: string;
  code?: string;
  /** Stack of an internal error, or the fault behind one (a dataset file that cannot be read: the engine's code and message). */
  error?: string;
}
