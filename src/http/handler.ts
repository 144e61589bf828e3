import { randomUUID } from 'node:crypto';
import { CrosstabError, ErrorCode } from '../index.js';
import { createCorsPolicy, type CorsPolicy } from './cors.js';
import { AuthFailureLimiter, type AuthFailureLimits } from './auth-failures.js';
import { proxyTrust, type TrustedProxies } from './client-address.js';
import { createCrosstabOperation } from './crosstab-operation.js';
import { createCatalogRoutes } from './catalog-routes.js';
import { applyReplyHeaders, isOperationReply, type OperationReply } from './operation-reply.js';
import type { AccessLogEntry, CrosstabDataset, HandlerRequest, HandlerResponse } from './handler-types.js';
import { headerOf } from './headers.js';
import { FileKeyStore, type KeyStore } from './key-store.js';
import { buildOpenApiDocument } from './openapi.js';
import { errorBody, fromThrown, quote, serviceError, statusOf, type ServiceError } from './service-error.js';
import { NdjsonLedger, type UsageSink } from './usage-ledger.js';

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
  /** servers[0].url of the OpenAPI document. Default: basePath. */
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
  /** Receives one entry per request, and key-file reload errors. */
  log?: (entry: AccessLogEntry | { time: string; event: string; message: string }) => void;
}

/** The framework-neutral REST adapter: feed it requests, send back its responses. */
export interface CrosstabHandler {
  readonly basePath: string;
  readonly maxBodyBytes: number;
  /** Whether `path` is under basePath (shims pass other paths on to the framework). */
  owns(path: string): boolean;
  /** Never rejects: every failure becomes an error response. */
  handle(request: HandlerRequest): Promise<HandlerResponse>;
  /** Refuses new requests (503), waits for in-flight ones, closes the key store and usage sink. */
  close(): Promise<void>;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const OPERATIONS: Record<string, readonly string[]> = { '/docs': ['GET', 'HEAD'], '/crosstab': ['POST', 'OPTIONS'] };

function invalidOption(option: string, message: string): CrosstabError {
  return new CrosstabError(ErrorCode.invalidOption, `${option} ${message}`, { field: option });
}

function checkBasePath(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, '');
  if (!trimmed.startsWith('/') || !trimmed.split('/').includes('v1') || /[?#\s]/.test(trimmed)) {
    throw invalidOption('basePath', `must be an absolute path with a "v1" segment, such as "/v1" or "/audience/v1"; got ${JSON.stringify(basePath)}.`);
  }
  return trimmed;
}

/**
 * Creates the framework-neutral handler for GET /docs, POST /crosstab and OPTIONS /crosstab
 * under `basePath`. Rejects when an option is invalid or the key file cannot be read.
 */
export async function createCrosstabHandler(options: CrosstabHandlerOptions): Promise<CrosstabHandler> {
  if (typeof options !== 'object' || options === null) throw invalidOption('options', 'must be an object.');
  const basePath = checkBasePath(options.basePath ?? '/v1');
  const maxBodyBytes = options.maxBodyBytes ?? 16_384;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 256) throw invalidOption('maxBodyBytes', `must be an integer of at least 256; got ${String(maxBodyBytes)}.`);
  if (!Array.isArray(options.datasets) || options.datasets.length === 0) throw invalidOption('datasets', 'must list at least one open dataset.');
  const surveys = new Map<string, CrosstabDataset>();
  for (const dataset of options.datasets) {
    const survey = dataset.info.survey;
    if (surveys.has(survey)) throw invalidOption('datasets', `holds two datasets of survey ${survey}; serve one dataset per SurveyCode.`);
    surveys.set(survey, dataset);
  }
  const cors: CorsPolicy = createCorsPolicy(options.corsOrigins ?? '*');
  const proxies = proxyTrust(options.trustProxy, 'trustProxy');
  const authFailures = new AuthFailureLimiter(options.authFailures);
  const log = options.log ?? (() => {});
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
  const docsBody = JSON.stringify(buildOpenApiDocument({ serverUrl: options.serverUrl ?? basePath, maxBodyBytes }));

  const crosstab = createCrosstabOperation({ surveys, keys, usage, maxBodyBytes, proxies, authFailures, basePath });
  // Survey catalog and tables (GET /surveys, GET /surveys/{SurveyCode}, POST /tables): catalog-routes.ts.
  const catalog = createCatalogRoutes({ surveys, keys, usage, maxBodyBytes, proxies, authFailures, basePath });
  let inFlight = 0;
  let drained: (() => void) | undefined;
  let closing: Promise<void> | undefined;

  const owns = (path: string): boolean => {
    const query = path.indexOf('?');
    const pathname = query === -1 ? path : path.slice(0, query);
    return pathname === basePath || pathname.startsWith(`${basePath}/`);
  };

  async function respond(raw: HandlerRequest): Promise<HandlerResponse> {
    const request: HandlerRequest = {
      method: raw.method,
      path: raw.path,
      headers: raw.headers ?? {},
      ...(raw.body === undefined ? {} : { body: raw.body }),
      ...(typeof raw.remoteAddress === 'string' ? { remoteAddress: raw.remoteAddress } : {}),
    };
    const started = performance.now();
    const requestId = randomUUID();
    const method = typeof request.method === 'string' ? request.method.toUpperCase() : '';
    const rawPath = typeof request.path === 'string' ? request.path : '';
    const query = rawPath.indexOf('?');
    const path = (query === -1 ? rawPath : rawPath.slice(0, query)).slice(0, 512);
    const entry: AccessLogEntry = { time: new Date().toISOString(), requestId, method: method.slice(0, 16), path, status: 0, ms: 0 };
    const origin = headerOf(request.headers, 'origin');
    const headers: Record<string, string> = { 'x-request-id': requestId, 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', ...cors.responseHeaders(origin) };
    let status = 200;
    let body = '';
    try {
      const operation = owns(path) ? path.slice(basePath.length) : undefined;
      const methods = operation === undefined ? undefined : (OPERATIONS[operation] ?? catalog.methodsOf(operation));
      let outcome: ServiceError | string | OperationReply;
      if (closing) {
        outcome = serviceError('unavailable', 'The service is shutting down.', 'Retry the request in a few seconds.');
      } else if (methods === undefined) {
        outcome = serviceError('not_found', `No operation at ${quote(path)}.`, `The operations are GET ${basePath}/docs, POST ${basePath}/crosstab, GET ${basePath}/surveys, GET ${basePath}/surveys/{SurveyCode} and POST ${basePath}/tables.`);
      } else if (!methods.includes(method)) {
        headers['allow'] = methods.join(', ');
        outcome = serviceError('method_not_allowed', `${quote(method, 16)} is not allowed on ${path}.`, `Use ${methods.join(' or ')}.`);
      } else if (operation === '/docs') {
        outcome = docsBody;
      } else if (method === 'OPTIONS') {
        Object.assign(headers, cors.preflightHeaders(origin));
        delete headers['cache-control'];
        outcome = '';
      } else if (operation !== '/crosstab') {
        outcome = await catalog.handle(operation as string, request, requestId, entry);
      } else {
        outcome = await crosstab(request, requestId, entry);
      }
      if (typeof outcome === 'string') {
        body = outcome;
      } else if (isOperationReply(outcome)) {
        status = outcome.status;
        applyReplyHeaders(headers, outcome);
        body = outcome.body;
      } else {
        status = statusOf(outcome);
        entry.code = outcome.code;
        body = JSON.stringify(errorBody(outcome));
        if (outcome.code === 'payload_too_large') headers['connection'] = 'close';
        if (outcome.retryAfterSeconds !== undefined) headers['retry-after'] = String(outcome.retryAfterSeconds);
      }
    } catch (error) {
      // A store that cannot serve is 503 (its own event says why, once); anything else a bug.
      const known = fromThrown(error);
      if (known === undefined) entry.error = error instanceof Error ? (error.stack ?? error.message) : String(error);
      const outcome = known ?? serviceError('internal', 'Internal error.', 'Retry later; if it persists, report the X-Request-Id response header to the provider.');
      status = statusOf(outcome);
      entry.code = outcome.code;
      body = JSON.stringify(errorBody(outcome));
      if (outcome.retryAfterSeconds !== undefined) headers['retry-after'] = String(outcome.retryAfterSeconds);
    }
    if (body !== '' && headers['content-type'] === undefined) headers['content-type'] = JSON_TYPE;
    if (status !== 304) headers['content-length'] = String(Buffer.byteLength(body));
    // HEAD /docs: the headers GET would send, without the body (error bodies stay: servers drop them).
    if (method === 'HEAD' && status < 400) body = '';
    entry.status = status;
    entry.ms = Math.round((performance.now() - started) * 1000) / 1000;
    try {
      log(entry);
    } catch {
      // A failing logger must not fail the request.
    }
    return { status, headers, body };
  }

  const settled = (): void => {
    if (--inFlight === 0 && drained !== undefined) drained();
  };

  return {
    basePath,
    maxBodyBytes,
    owns,
    handle(request) {
      inFlight++;
      const pending = respond(request ?? ({} as HandlerRequest));
      // respond() never rejects (every failure is an error response).
      void pending.then(settled, settled);
      return pending;
    },
    close() {
      closing ??= (async () => {
        if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
        await keys.close();
        await usage.close();
      })();
      return closing;
    },
  };
}
