/** The framework-neutral request, response and dataset types the handler and its operations share. */
import type { CrosstabQuery, CrosstabResult, DatasetInfo, TableQuery, TableResult } from '../index.js';
import type { HandlerHeaders } from './headers.js';

/** What the handler needs of a dataset: `Dataset` from openDataset() fits. */
export interface CrosstabDataset {
  readonly info: DatasetInfo;
  crosstab(query: CrosstabQuery): Promise<CrosstabResult>;
  /** POST /tables (a dataset without it answers only POST /crosstab). */
  table?(query: TableQuery): Promise<TableResult>;
  /** Authorization groups an expression touches: GET /surveys/{SurveyCode} shows a code's definition only when all are the caller's. */
  groupsOf?(expression: string): string[];
}

/** A framework-neutral HTTP request. */
export interface HandlerRequest {
  method: string;
  /** Path with optional query string, e.g. `/v1/crosstab`. */
  path: string;
  headers: HandlerHeaders;
  /** The raw body (a shim reads at most `maxBodyBytes + 1` bytes of it). */
  body?: Uint8Array | string;
  /** The peer's IP address, when the shim knows it (the portal throttles sign-ins by it). */
  remoteAddress?: string;
}

/** A framework-neutral HTTP response. */
export interface HandlerResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: string;
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
  survey?: string;
  code?: string;
  /** Stack of an internal error. */
  error?: string;
}
