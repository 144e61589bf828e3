import { randomUUID } from 'node:crypto';
import { CrosstabError, ErrorCode, TableRenderer, type TableRendererOptions } from '../index.js';
import { FairShare, type FairShareLimits } from './fair-share.js';
import { DEFAULT_TABLE_LIMITS, type TableLimits } from './table-limits.js';
import { createCorsPolicy, type CorsPolicy } from './cors.js';
import { AuthFailureLimiter, type AuthFailureLimits } from './auth-failures.js';
import { proxyTrust, type TrustedProxies } from './client-address.js';
import { challengesOf, defaultAuthenticators } from './authenticators.js';
import { createCallerCheck } from './caller.js';
import type { AccessLogEntry, CrosstabDataset, HandlerRequest, HandlerResponse } from './handler-types.js';
import { AnswerBudget, collectStream, isResponseStream, type ResponseStream } from './answer-budget.js';
import { headerOf } from './headers.js';
import { FileKeyStore, type KeyStore } from './key-store.js';
import type { ApiKeyRecord } from './key-file.js';
import { buildOpenApiDocument } from './openapi.js';
import { isoNow } from './clock.js';
import { publishDocument } from './published-document.js';
import { applyReplyHeaders, isOperationReply, type OperationReply } from './operation-reply.js';
import type { ServiceContext } from './route.js';
import { ARRIVED_BODY, CLIENT_GONE, clientGone, requestBody, type ArrivedBodyRequest } from './request-body.js';
import { BILLED, BilledAnswer, UsageVoids, type BilledResponse } from './billed-delivery.js';
import { createRoutePipeline, type RouteCall } from './route-pipeline.js';
import { AnswersSending } from './answers-sending.js';
import { createRouter, type RouteMatch, type Router } from './router.js';
import { decodeSegments, pathnameOf, pathSegments } from './request-path.js';
import { ROUTES } from './routes.js';
import { errorBody, fromThrown, quote, serviceError, statusOf, type ServiceError } from './service-error.js';
import { DatasetFaultLog } from './dataset-faults.js';
import { NdjsonLedger, type UsageSink } from './usage-ledger.js';
import type { ServiceMetrics } from './service-metrics.js';
import type { AudienceStore } from '../keys/index.js';

export type { HandlerHeaders } from './headers.js';
export type { AccessLogEntry, CrosstabDataset, HandlerRequest, HandlerResponse } from './handler-types.js';

export interface CrosstabHandlerOptions {
  /** Open datasets, one per SurveyCode (the caller opens and closes them). */
  datasets: readonly CrosstabDataset[];
  /** Key file path (reloaded on change) or a KeyStore. */
  keys: string | KeyStore;
  /** Ledger file path (NDJSON, fsync'd before each 200) or a UsageSink. */
  usage: string | UsageSink;
  /** Mount path; must contain a `v1` segment. Default `/v1`. */
  basePath?: string;
  /** Allowed CORS origins, or `'*'` (default) for any. */
  corsOrigins?: '*' | readonly string[];
  /** Largest accepted request body in bytes. Default 16384. */
  maxBodyBytes?: number;
  /**
   * Time in ms for a request body the answer needs to arrive, counted per request from the
   * handler's receipt of its headers; later, the answer is 408 and the connection ends.
   * Applies to every shim (they all pass `readBody`), not to a request that brings `body`.
   * Default 10000.
   */
  bodyTimeoutMs?: number;
  /**
   * servers[0].url of the OpenAPI document: the absolute URL clients reach the API at
   * (`https://api.example/v1`), which tools that route by it (validating proxies, generated
   * clients) need. Default: basePath, a URL relative to wherever the document was fetched.
   */
  serverUrl?: string;
  /** Key file stat-check interval in ms (default 500). */
  keyReloadIntervalMs?: number;
  /**
   * The reverse proxies in front (addresses or CIDR ranges, or true for any peer): from them,
   * X-Forwarded-For gives the client address failed keys are counted by. Default false.
   */
  trustProxy?: TrustedProxies;
  /** Limits on unknown, revoked or expired API keys per client address (default 50 per 60 s). */
  authFailures?: AuthFailureLimits;
  /**
   * Prometheus metrics to count requests, billed calls, usage writes, body timeouts and failed
   * keys in (`new ServiceMetrics()`, serve it with listenMetrics()). Default none.
   */
  metrics?: ServiceMetrics;
  /**
   * Saved audiences (the accounts database's DbAudienceStore): `@name` in expressions and the
   * /audiences operations. Without it, `@name` is refused and /audiences answers 404.
   */
  audiences?: AudienceStore;
  /**
   * What one POST /tables may ask (cells, sig comparisons, Rao–Scott covariance entries,
   * answer bytes), refused with 400 before its work starts; defaults in DEFAULT_TABLE_LIMITS.
   */
  tableLimits?: Partial<TableLimits>;
  /** The worker threads that compute table statistics and write table answers (threads, heap per worker). */
  tableWorkers?: TableRendererOptions;
  /** Tables of one account in work at once (default 1) and waiting (default 8; past that, 429). */
  tableShare?: Partial<FairShareLimits>;
  /**
   * Most bytes of table answers held at once, across all requests, on the thread that serves
   * them: a streamed JSON or CSV answer holds at most STREAM_BYTES_IN_FLIGHT (1.25 MiB), a
   * workbook its size. A table that does not fit is refused 503 with Retry-After, unbilled.
   * At least `tableLimits.answerBytes`; default 512 MiB.
   */
  maxTableBytesInFlight?: number;
  /** Receives one entry per request, and key-file reload errors. */
  log?: (entry: AccessLogEntry | { time: string; event: string; message: string }) => void;
}

/** Counts of the handler since it was created (also logged as `handler_closed` on close). */
export interface CrosstabHandlerStats {
  /** Requests answered 408 because their body did not arrive within `bodyTimeoutMs`. */
  bodyTimeouts: number;
  /** Requests answered without reading the body they declared (the connection then ended). */
  unreadBodies: number;
  /** Streamed answers cut by close() because they were still being sent at its time limit. */
  answersCut?: number;
}

/** The framework-neutral REST adapter: feed it requests, send back its responses. */
export interface CrosstabHandler {
  readonly basePath: string;
  readonly maxBodyBytes: number;
  /** How long a body may take to arrive after its headers (`bodyTimeoutMs`), for code that reads bodies beside the handler (the portal). */
  readonly bodyTimeoutMs?: number;
  readonly stats?: Readonly<CrosstabHandlerStats>;
  /** Whether `path` is under basePath (shims pass other paths on to the framework). */
  owns(path: string): boolean;
  /** Never rejects: every failure becomes an error response. */
  handle(request: HandlerRequest): Promise<HandlerResponse>;
  /**
   * Answers `request` as `caller`, a caller in-process code has already identified (the
   * portal's signed-in user, as its account): no credential is read, and everything after it
   * is as for handle() (account limits, the operation, the usage record of a billed 200).
   */
  handleFor?(caller: ApiKeyRecord, request: HandlerRequest): Promise<HandlerResponse>;
  /**
   * Serves `dataset` in place of the open dataset of its SurveyCode, in one step: requests
   * that started before go on with the dataset they had, later ones get this one. Returns
   * the dataset it replaced, which the caller closes (`close({ drain: true })` lets those
   * requests finish). Throws `invalid_option` when no dataset of that SurveyCode is served.
   */
  replaceDataset?(dataset: CrosstabDataset): CrosstabDataset;
  /**
   * Refuses new requests (503 `unavailable`), waits for the requests in flight, then for the
   * streamed answers being sent (POST /tables JSON and CSV, workbooks) until `timeoutMs` after
   * the call (default 30,000, as Dataset.close({ drain: true })), when those still being sent are
   * cut (their workers stop, each shim ends its response); then stops the table threads and
   * closes the key store and usage sink. The first call's options apply; later calls share it.
   */
  close(options?: HandlerCloseOptions): Promise<void>;
}

/** Options of CrosstabHandler.close(). */
export interface HandlerCloseOptions {
  /** Milliseconds from the call after which streamed answers still being sent are cut. Default 30,000. */
  timeoutMs?: number;
  /**
   * performance.now() when the wait for the answers began, if before the call (listen()'s
   * shutdown deadline closes the handler with timeoutMs 0 after waiting itself): the time
   * waited that handler_closed logs counts from it. Default: the call.
   */
  waitingSince?: number;
}

/** Default of HandlerCloseOptions.timeoutMs: as long as Dataset.close({ drain: true }) waits. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 30_000;

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * respond()'s view of a request: method, path and headers as given, `signal` read through (a
 * shim may make its signal only when it is asked for, as node-shim does), the rest assigned
 * one by one. A class: an object literal with a getter is built field by field, and this is
 * made for every request.
 */
class RequestView implements ArrivedBodyRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: HandlerRequest['headers'];
  declare body?: HandlerRequest['body'];
  declare readBody?: HandlerRequest['readBody'];
  declare remoteAddress?: string;
  declare [ARRIVED_BODY]?: ArrivedBodyRequest[typeof ARRIVED_BODY];
  declare [CLIENT_GONE]?: ArrivedBodyRequest[typeof CLIENT_GONE];

  constructor(private readonly raw: HandlerRequest) {
    this.method = raw.method;
    this.path = raw.path;
    this.headers = raw.headers ?? {};
  }

  get signal(): AbortSignal | undefined {
    const signal = this.raw.signal;
    return signal instanceof AbortSignal ? signal : undefined;
  }
}

/** Default of `maxTableBytesInFlight`: 512 MiB. */
export const DEFAULT_TABLE_BYTES_IN_FLIGHT = 512 * 1024 * 1024;

/** Operation paths remembered with their route match (see matchOf). */
const MATCH_CACHE_SIZE = 64;

/** "GET /v1/docs, POST /v1/crosstab and OPTIONS /v1/crosstab": every operation of the table. */
function operationList(router: Router, basePath: string): string {
  const operations = router.paths.flatMap(({ template, routes, preflight }) => [
    ...routes.map((route) => `${route.method} ${basePath}${template}`),
    ...(preflight ? [`OPTIONS ${basePath}${template}`] : []),
  ]);
  return operations.length === 1 ? (operations[0] as string) : `${operations.slice(0, -1).join(', ')} and ${operations.at(-1) as string}`;
}

/** The route of `match` for `method`, if it has one (a loop: this runs for every request). */
function routeFor(match: RouteMatch, method: string): RouteMatch['path']['routes'][number] | undefined {
  for (const route of match.path.routes) if (route.method === method) return route;
  return undefined;
}

function invalidOption(option: string, message: string): CrosstabError {
  return new CrosstabError(ErrorCode.invalidOption, `${option} ${message}`, { field: option });
}

function checkStoreOption(value: unknown, option: string, method: string, what: string): void {
  if (typeof value === 'string' && value !== '') return;
  if (typeof value === 'object' && value !== null && typeof (value as Record<string, unknown>)[method] === 'function' && typeof (value as Record<string, unknown>).close === 'function') return;
  throw invalidOption(option, `must be ${what}; got ${value === undefined ? 'nothing' : typeof value}.`);
}

/** An absolute http(s) URL or an absolute path, without a query, fragment or trailing slash. */
export function checkServerUrl(serverUrl: unknown, option = 'serverUrl'): string {
  const problem = `must be the absolute URL clients reach the API at, such as "https://api.example/v1" (or a path such as "/v1"); got ${JSON.stringify(serverUrl)}.`;
  if (typeof serverUrl !== 'string') throw invalidOption(option, problem);
  const trimmed = serverUrl.replace(/\/+$/, '');
  if (trimmed.startsWith('/') && !trimmed.startsWith('//') && !/[?#\s]/.test(trimmed)) return trimmed;
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    throw invalidOption(option, problem);
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.search !== '' || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '' || /\s/.test(trimmed)) {
    throw invalidOption(option, problem);
  }
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

function checkBasePath(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, '');
  if (!trimmed.startsWith('/') || !(pathSegments(trimmed) ?? []).includes('v1') || /[?#\s]/.test(trimmed)) {
    throw invalidOption('basePath', `must be an absolute path with a "v1" segment, such as "/v1" or "/audience/v1"; got ${JSON.stringify(basePath)}.`);
  }
  return trimmed;
}

/**
 * Creates the framework-neutral handler for the operations of the route table (routes.ts)
 * under `basePath`. Rejects when an option is invalid or the key file cannot be read.
 */
export async function createCrosstabHandler(options: CrosstabHandlerOptions): Promise<CrosstabHandler> {
  if (typeof options !== 'object' || options === null) throw invalidOption('options', 'must be an object.');
  const basePath = checkBasePath(options.basePath ?? '/v1');
  const maxBodyBytes = options.maxBodyBytes ?? 16_384;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 256) throw invalidOption('maxBodyBytes', `must be an integer of at least 256; got ${String(maxBodyBytes)}.`);
  const bodyTimeoutMs = options.bodyTimeoutMs ?? 10_000;
  if (!Number.isInteger(bodyTimeoutMs) || bodyTimeoutMs < 1 || bodyTimeoutMs > 2_147_483_647) throw invalidOption('bodyTimeoutMs', `must be a positive integer (milliseconds); got ${String(bodyTimeoutMs)}.`);
  if (!Array.isArray(options.datasets) || options.datasets.length === 0) throw invalidOption('datasets', 'must list at least one open dataset.');
  const surveys = new Map<string, CrosstabDataset>();
  for (const dataset of options.datasets) {
    const survey = dataset.info.survey;
    if (surveys.has(survey)) throw invalidOption('datasets', `holds two datasets of survey ${survey}; serve one dataset per SurveyCode.`);
    surveys.set(survey, dataset);
  }
  // Checked before anything opens: a handler with no key store or ledger could neither authenticate nor bill.
  checkStoreOption(options.keys, 'keys', 'lookup', 'the path of a key file, or a KeyStore');
  checkStoreOption(options.usage, 'usage', 'record', 'the path of the usage ledger (NDJSON), or a UsageSink');
  if (options.audiences !== undefined && (typeof options.audiences !== 'object' || options.audiences === null || typeof options.audiences.byNames !== 'function')) {
    throw invalidOption('audiences', 'must be an AudienceStore (such as the accounts database\'s DbAudienceStore).');
  }
  const cors: CorsPolicy = createCorsPolicy(options.corsOrigins ?? '*');
  const proxies = proxyTrust(options.trustProxy, 'trustProxy');
  const authFailures = new AuthFailureLimiter(options.authFailures);
  const log = options.log ?? (() => {});
  const datasetFaults = new DatasetFaultLog(log);
  const keys =
    typeof options.keys === 'string'
      ? await FileKeyStore.open(options.keys, {
          ...(options.keyReloadIntervalMs === undefined ? {} : { reloadIntervalMs: options.keyReloadIntervalMs }),
          onReloadError: (error) => log({ time: new Date().toISOString(), event: 'key_file_error', message: `${(error as Error).message}; the previous keys stay in force` }),
        })
      : options.keys;
  const usage =
    typeof options.usage === 'string'
      ? await NdjsonLedger.open(options.usage, { onEvent: (event, message) => log({ time: new Date().toISOString(), event, message }) })
      : options.usage;
  const tableLimits: TableLimits = { ...DEFAULT_TABLE_LIMITS };
  for (const [name, value] of Object.entries(options.tableLimits ?? {})) {
    if (!(name in DEFAULT_TABLE_LIMITS)) throw invalidOption(`tableLimits.${name}`, `is not a table limit; use ${Object.keys(DEFAULT_TABLE_LIMITS).join(', ')}.`);
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) throw invalidOption(`tableLimits.${name}`, `must be a positive integer; got ${String(value)}.`);
    tableLimits[name as keyof TableLimits] = value;
  }
  const share: FairShareLimits = { running: options.tableShare?.running ?? 1, waiting: options.tableShare?.waiting ?? 8 };
  if (!Number.isInteger(share.running) || share.running < 1) throw invalidOption('tableShare.running', `must be a positive integer; got ${String(share.running)}.`);
  if (!Number.isInteger(share.waiting) || share.waiting < 0) throw invalidOption('tableShare.waiting', `must be an integer of at least 0; got ${String(share.waiting)}.`);
  const maxTableBytesInFlight = options.maxTableBytesInFlight ?? Math.max(DEFAULT_TABLE_BYTES_IN_FLIGHT, tableLimits.answerBytes);
  if (!Number.isSafeInteger(maxTableBytesInFlight) || maxTableBytesInFlight < tableLimits.answerBytes) {
    throw invalidOption('maxTableBytesInFlight', `must be an integer of at least tableLimits.answerBytes (${tableLimits.answerBytes}), so that any answer can be sent; got ${String(maxTableBytesInFlight)}.`);
  }
  const renderer = new TableRenderer(options.tableWorkers);
  const router = createRouter(ROUTES);
  const operations = operationList(router, basePath);
  const operationIds = new Map(ROUTES.map((route) => [route, String(route.docs({ maxBodyBytes }).operation['operationId'])]));
  const metrics = options.metrics;
  // The document depends on the route table and these settings only (not on the datasets): made once per handler.
  const openApiDocument = JSON.stringify(buildOpenApiDocument({ serverUrl: options.serverUrl === undefined ? basePath : checkServerUrl(options.serverUrl), maxBodyBytes, routes: ROUTES }));
  const service: ServiceContext = {
    surveys,
    maxBodyBytes,
    basePath,
    openApiDocument,
    docs: publishDocument(openApiDocument),
    ...(options.audiences === undefined ? {} : { audiences: options.audiences }),
    tables: { limits: tableLimits, renderer, fairShare: new FairShare(share), answers: new AnswerBudget(maxTableBytesInFlight) },
  };
  const authenticators = defaultAuthenticators(keys, { proxies, authFailures });
  const challenges = challengesOf(authenticators);

  const run = createRoutePipeline({ service, checkCaller: createCallerCheck(authenticators, keys), usage });
  // Void records of billed answers not delivered: logged, counted, waited for by close().
  const voids = new UsageVoids(usage, (answer, reason, error) => {
    const { requestId, keyId, survey } = answer.record;
    if (error === undefined) metrics?.voidedCall(answer.operation, survey, reason);
    try {
      log(
        error === undefined
          ? { time: new Date().toISOString(), event: 'usage_voided', message: `Request ${requestId} (key ${keyId}) was billed and not delivered (${reason}): its void record is durable.` }
          : { time: new Date().toISOString(), event: 'usage_void_failed', message: `Request ${requestId} (key ${keyId}) was billed and not delivered (${reason}), but its void record could not be written: ${(error as Error)?.message ?? String(error)}; it stays billed.` },
      );
    } catch {
      // A failing logger must not fail the void.
    }
  });
  const stats = { bodyTimeouts: 0, unreadBodies: 0, answersCut: 0 };
  const sending = new AnswersSending();
  if (metrics !== undefined) {
    metrics.watchHandler({ stats, authFailures });
    usage.observeWrites?.(metrics.usageWrite);
  }
  let inFlight = 0;
  let drained: (() => void) | undefined;
  let closing: Promise<void> | undefined;

  const baseSegments = pathSegments(basePath) ?? [];
  /**
   * The segments of `path` below the base path, each percent-decoded once (`{ raw }` for one
   * that is not valid percent-encoded UTF-8: it names no operation, or is a bad path
   * parameter), or undefined when the path is not under the base path.
   */
  const operationSegments = (path: string): (string | { raw: string })[] | undefined => {
    const pathname = pathnameOf(path);
    if (!pathname.startsWith('/')) return undefined;
    const raw = pathname.slice(1).split('/');
    if (raw.length < baseSegments.length) return undefined;
    const base = pathSegments(`/${raw.slice(0, baseSegments.length).join('/')}`);
    if (base === undefined || !baseSegments.every((segment, index) => base[index] === segment)) return undefined;
    const rest = raw.slice(baseSegments.length);
    return decodeSegments(rest);
  };
  const owns = (path: string): boolean => typeof path === 'string' && operationSegments(path) !== undefined;
  /**
   * The operation paths without parameters that requests named (`/v1/crosstab`), with their
   * match: most requests repeat a handful of them, and matching anew split, decoded and
   * compared the path every time. Paths with parameters are matched every time; the map
   * stops growing at MATCH_CACHE_SIZE (an unknown path or another spelling is not kept).
   */
  const staticMatches = new Map<string, RouteMatch>();
  const matchOf = (pathname: string): RouteMatch | undefined => {
    const known = staticMatches.get(pathname);
    if (known !== undefined) return known;
    const segments = operationSegments(pathname);
    const match = segments === undefined || segments.length === 0 ? undefined : router.match(segments);
    if (match !== undefined && match.undecodable === undefined && Object.keys(match.params).length === 0 && staticMatches.size < MATCH_CACHE_SIZE) {
      staticMatches.set(pathname, { path: match.path, params: Object.freeze({}) as Record<string, string> });
    }
    return match;
  };

  const countBodyTimeout = (): void => void stats.bodyTimeouts++;

  async function respond(raw: ArrivedBodyRequest, caller?: ApiKeyRecord): Promise<HandlerResponse> {
    // Counted in flight from the call (handle, handleFor) until the response is made, which a
    // draining close() waits for: here rather than in a reaction to the returned promise.
    try {
      const request = new RequestView(raw);
      // Assigned one by one rather than spread: this runs for every request.
      if (raw.body !== undefined) request.body = raw.body;
      if (typeof raw.readBody === 'function') {
        request.readBody = raw.readBody;
        if (typeof raw[ARRIVED_BODY] === 'function') request[ARRIVED_BODY] = raw[ARRIVED_BODY];
      }
      if (typeof raw.remoteAddress === 'string') request.remoteAddress = raw.remoteAddress;
      if (typeof raw[CLIENT_GONE] === 'function') request[CLIENT_GONE] = raw[CLIENT_GONE];
      const started = performance.now();
      const body = requestBody(request, { maxBodyBytes, deadline: started + bodyTimeoutMs, timeoutMs: bodyTimeoutMs, timedOut: countBodyTimeout });
      const requestId = randomUUID();
      const method = typeof request.method === 'string' ? request.method.toUpperCase() : '';
      const pathname = pathnameOf(typeof request.path === 'string' ? request.path : '');
      const path = pathname.slice(0, 512);
      const entry: AccessLogEntry = { time: isoNow(), requestId, method: method.slice(0, 16), path, status: 0, ms: 0 };
      const origin = headerOf(request.headers, 'origin');
      const headers: Record<string, string> = Object.assign({ 'x-request-id': requestId, 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' }, cors.responseHeaders(origin));
      let status = 200;
      let text: string | Uint8Array = '';
      let stream: ResponseStream | undefined;
      let call: RouteCall | undefined;
      try {
        const match = matchOf(pathname);
        const route = match === undefined ? undefined : routeFor(match, method === 'HEAD' ? 'GET' : method);
        let outcome: ServiceError | OperationReply | string;
        if (closing) {
          outcome = serviceError('unavailable', 'The service is shutting down.', 'Retry the request in a few seconds.');
        } else if (match === undefined) {
          outcome = serviceError('not_found', `No operation at ${quote(path)}.`, `The operations are ${operations}.`);
        } else if (method === 'OPTIONS' && match.path.preflight) {
          entry.operation = 'preflight';
          Object.assign(headers, cors.preflightHeaders(origin, match.path.allow));
          delete headers['cache-control'];
          outcome = '';
        } else if (route !== undefined && match.undecodable !== undefined) {
          const [param, raw] = Object.entries(match.undecodable)[0] as [string, string];
          outcome = serviceError('invalid_request', `The ${param} in the path is not valid percent-encoding: ${quote(raw)}.`, `Percent-encode the ${param} as UTF-8 (encodeURIComponent).`, param);
        } else if (route === undefined) {
          const allow = match.path.allow;
          headers['allow'] = allow.join(', ');
          outcome = serviceError('method_not_allowed', `${quote(method, 16)} is not allowed on ${path}.`, `Use ${allow.join(' or ')}.`);
        } else {
          entry.operation = operationIds.get(route);
          call = { route, request, body, requestId, entry, params: match.params, billed: undefined };
          if (caller !== undefined) call.caller = caller;
          outcome = await run(call);
        }
        if (typeof outcome === 'string') {
          text = outcome;
        } else if (isOperationReply(outcome)) {
          status = outcome.status;
          applyReplyHeaders(headers, outcome);
          if (!isResponseStream(outcome.body)) text = outcome.body;
          // A caller that can send a stream gets it; any other the whole body, read here.
          else if (raw.streaming === true) stream = sending.track(outcome.body);
          else text = await collectStream(outcome.body);
        } else {
          status = statusOf(outcome);
          entry.code = outcome.code;
          // A survey's unusable data is told once (its own event), the bug behind a 500 with every request.
          if (outcome.cause !== undefined && outcome.code === 'dataset_unavailable') datasetFaults.tell(outcome.cause);
          else if (outcome.cause !== undefined) entry.error = outcome.cause;
          text = JSON.stringify(errorBody(outcome));
          if (outcome.code === 'payload_too_large') headers['connection'] = 'close';
          // HTTP requires the challenges on a 401: the credentials this service accepts.
          if (status === 401) headers['www-authenticate'] = challenges;
          if (outcome.retryAfterSeconds !== undefined) headers['retry-after'] = String(outcome.retryAfterSeconds);
        }
      } catch (error) {
        // A store that cannot serve is 503 (its own event says why, once); anything else a bug.
        const known = fromThrown(error);
        if (known === undefined) entry.error = error instanceof Error ? (error.stack ?? error.message) : String(error);
        const outcome = known ?? serviceError('internal', 'Internal error.', 'Retry later; if it persists, report the X-Request-Id response header to the provider.');
        // Billed, then failed before it became a response (a streamed answer collected for a
        // mount that cannot stream): not delivered.
        if (call?.billed !== undefined) {
          new BilledAnswer(call.billed, entry.operation ?? '', voids).undelivered('send_failed');
          call.billed = undefined;
        }
        status = statusOf(outcome);
        entry.code = outcome.code;
        text = JSON.stringify(errorBody(outcome));
        if (outcome.retryAfterSeconds !== undefined) headers['retry-after'] = String(outcome.retryAfterSeconds);
      }
      if (text.length > 0 && headers['content-type'] === undefined) headers['content-type'] = JSON_TYPE;
      if (status !== 304) headers['content-length'] = String(stream?.byteLength ?? Buffer.byteLength(text));
      // HEAD /docs: the headers GET would send, without the body (error bodies stay: servers drop them).
      if (method === 'HEAD' && status < 400) text = '';
      // A body the answer did not need is not read: the connection ends with the answer.
      if (body.leftUnread) {
        headers['connection'] = 'close';
        stats.unreadBodies++;
      }
      if (entry.datasetVersion !== undefined) headers['x-dataset-version'] = entry.datasetVersion;
      entry.status = status;
      const elapsed = performance.now() - started;
      entry.ms = Math.round(elapsed * 1000) / 1000;
      metrics?.request(entry, elapsed / 1000);
      try {
        log(entry);
      } catch {
        // A failing logger must not fail the request.
      }
      const response: BilledResponse = { status, headers, body: text };
      if (stream !== undefined) response.stream = stream;
      if (call?.billed !== undefined) {
        const billed = new BilledAnswer(call.billed, entry.operation ?? '', voids);
        // Gone during the record's flush: voided here, on every mount (a fetch-only one too).
        // Otherwise the mount that writes the response voids it if it is not delivered.
        if (clientGone(request)) billed.undelivered('client_closed');
        else response[BILLED] = billed;
      }
      return response;
    } finally {
      if (--inFlight === 0 && drained !== undefined) drained();
    }
  }


  return {
    basePath,
    maxBodyBytes,
    bodyTimeoutMs,
    stats,
    owns,
    handle(request) {
      inFlight++;
      // respond() never rejects (every failure is an error response).
      return respond(request ?? ({} as HandlerRequest));
    },
    handleFor(caller, request) {
      inFlight++;
      return respond(request, caller);
    },
    replaceDataset(dataset) {
      const survey = dataset?.info?.survey;
      const replaced = typeof survey === 'string' ? surveys.get(survey) : undefined;
      if (replaced === undefined) {
        throw invalidOption('dataset', `must be of a served survey (${[...surveys.keys()].join(', ')}); got ${typeof survey === 'string' ? `survey ${survey}` : 'no survey'}.`);
      }
      surveys.set(survey as string, dataset);
      return replaced;
    },
    close(closeOptions) {
      if (closing !== undefined) return closing;
      const timeoutMs = closeOptions?.timeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
      if (!Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > 2_147_483_647) {
        return Promise.reject(invalidOption('timeoutMs', `must be a whole number of milliseconds, at least 0; got ${String(timeoutMs)}.`));
      }
      const started = performance.now();
      const waitingSince = Math.min(started, typeof closeOptions?.waitingSince === 'number' ? closeOptions.waitingSince : started);
      closing = (async () => {
        if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
        // Answers handed to the shims are sent whole, unless still going at the time limit.
        stats.answersCut += await sending.drain(Math.max(0, Math.round(timeoutMs - (performance.now() - started))));
        try {
          log({
            time: new Date().toISOString(),
            event: 'handler_closed',
            message: `${stats.bodyTimeouts} request bodies too slow (408), ${stats.unreadBodies} bodies not read (answered from the headers), ${stats.answersCut} answers cut at the close time limit (after ${Math.round(performance.now() - waitingSince)} ms)`,
          });
        } catch {
          // A failing logger must not keep the stores open.
        }
        // The voids of answers cut just now, or not delivered meanwhile, go in before the sink closes.
        await voids.settled();
        await renderer.close();
        await keys.close();
        await voids.settled();
        await usage.close();
      })();
      return closing;
    },
  };
}
