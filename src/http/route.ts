/** What one entry of the route table says, and what its operation is given and returns. */
import type { AnswerBudget } from './answer-budget.js';
import type { PublishedDocument } from './published-document.js';
import type { AudienceStore } from '../keys/index.js';
import type { TableRenderer } from '../index.js';
import type { FairShare } from './fair-share.js';
import type { TableLimits } from './table-limits.js';
import type { AccessLogEntry, CrosstabDataset, HandlerRequest } from './handler-types.js';
import type { ApiKeyRecord } from './key-file.js';
import { isOperationReply, type OperationReply } from './operation-reply.js';
import type { ServiceError } from './service-error.js';

export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What every operation may use: the served surveys and the service's own settings. */
export interface ServiceContext {
  /** The open datasets by SurveyCode. */
  readonly surveys: ReadonlyMap<string, CrosstabDataset>;
  readonly maxBodyBytes: number;
  /** The mount path (hints point at GET {basePath}/surveys/{SurveyCode}). */
  readonly basePath: string;
  /** The OpenAPI document (JSON) that GET /docs serves, built from the route table. */
  readonly openApiDocument: string;
  /** The same document as GET /docs sends it: bytes made once, compressed forms, entity tags. */
  readonly docs: PublishedDocument;
  /** Where saved audiences are kept (the accounts database); without it `@name` is refused and /audiences answers 404. */
  readonly audiences?: AudienceStore;
  /** POST /tables: its limits, the worker threads that write answers, and each account's share of them. */
  readonly tables: { readonly limits: TableLimits; readonly renderer: TableRenderer; readonly fairShare: FairShare; readonly answers: AnswerBudget };
}

/** What an operation is called with. */
export interface RouteContext {
  readonly request: HandlerRequest;
  readonly requestId: string;
  /** The access log line of this request: an operation may add `survey`. */
  readonly entry: AccessLogEntry;
  /** Path parameters by name: `{SurveyCode}` in the path gives `params.SurveyCode` (percent-decoded). */
  readonly params: Readonly<Record<string, string>>;
  readonly service: ServiceContext;
  /** The parsed JSON body, for a route with `body: 'json'` (undefined otherwise). */
  readonly json: unknown;
}

/** The context of an operation that requires a caller: authenticated and admitted. */
export interface AuthenticatedContext extends RouteContext {
  readonly caller: ApiKeyRecord;
}

/** A billed answer: the 200 (JSON text, or a reply with its own headers) and what the usage record says about it. */
export interface BilledAnswer {
  readonly body: string | OperationReply;
  readonly usage: { readonly survey: string; readonly targets: number; readonly operation: 'crosstab' | 'table' | 'tabbook' };
}

/**
 * What an operation returns: a 200 body (JSON text, '' for none), a reply with its own status
 * and headers (caching, content type), a billed 200 (recorded durably before it is sent, only
 * on a billed route), or the error that refused the request.
 */
export type RouteResult = string | OperationReply | BilledAnswer | ServiceError;

/** What the OpenAPI document says of a route; built once, with the handler's settings. */
export interface RouteDocs {
  /** The OpenAPI operation object (operationId, summary, requestBody, responses...). */
  operation: Record<string, unknown>;
  /** Component schemas the operation refers to (`#/components/schemas/<name>`). */
  schemas?: Record<string, unknown>;
  /** Descriptions of the tags the operation uses that the document does not already describe. */
  tags?: Record<string, string>;
}

interface RouteBase {
  readonly method: RouteMethod;
  /** Below the base path, e.g. `/crosstab` or `/surveys/{SurveyCode}` (a `{name}` segment is a parameter). */
  readonly path: string;
  /** Whether a 200 is billed: the usage record of a BilledAnswer is written before it is sent. */
  readonly billed: boolean;
  /**
   * `'json'`: the operation reads a JSON body (Content-Type, size and JSON are checked first,
   * and `json` holds it). Absent: the body is never read; a request that sends one is answered
   * without waiting for it, with `Connection: close`.
   */
  readonly body?: 'json';
  /** How to make the body smaller, the hint of its 413. */
  readonly tooLargeHint?: string;
  /**
   * A further check decided from the headers alone, run after the caller and before the
   * body's Content-Type (POST /tables: Accept, 406).
   */
  readonly accepts?: (request: HandlerRequest) => ServiceError | undefined;
  /** The OpenAPI fragment of this operation. */
  readonly docs: (settings: { maxBodyBytes: number }) => RouteDocs;
}

/** A route anyone may call (no credential is looked at). */
export interface PublicRoute extends RouteBase {
  readonly auth: false;
  readonly handle: (context: RouteContext) => RouteResult | Promise<RouteResult>;
}

/** A route that needs a caller: authenticated by the authenticators, admitted by the account limits. */
export interface AuthenticatedRoute extends RouteBase {
  readonly auth: true;
  readonly handle: (context: AuthenticatedContext) => RouteResult | Promise<RouteResult>;
}

export type Route = PublicRoute | AuthenticatedRoute;

export function isBilledAnswer(value: RouteResult): value is BilledAnswer {
  return typeof value === 'object' && 'usage' in value && 'body' in value;
}

export { isOperationReply, type OperationReply };
