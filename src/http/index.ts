/**
 * crosstab-engine/http: the REST adapter. One framework-neutral handler plus thin shims.
 *
 * ```ts
 * import { openDataset } from 'crosstab-engine';
 * import { createCrosstabHandler, createNodeListener } from 'crosstab-engine/http';
 * const handler = await createCrosstabHandler({ datasets: [await openDataset('gss.arrow')], keys: 'keys.json', usage: 'usage.ndjson' });
 * http.createServer(createNodeListener(handler)).listen(8080);
 * ```
 */
export { checkServerUrl, createCrosstabHandler, DEFAULT_CLOSE_TIMEOUT_MS } from './handler.js';
export { headerOf } from './headers.js';
export { clientAddress, forwardedProto, normalizeAddress, proxyTrust } from './client-address.js';
export type { ProxyTrust, TrustedProxies } from './client-address.js';
export type {
  AccessLogEntry,
  CrosstabDataset,
  CrosstabHandler,
  CrosstabHandlerOptions,
  CrosstabHandlerStats,
  HandlerCloseOptions,
  HandlerHeaders,
  HandlerRequest,
  HandlerResponse,
} from './handler.js';
export { createNodeListener, sendNodeResponse } from './node-shim.js';
export { crosstabFastify } from './fastify-shim.js';
export type { FastifyInstanceLike, FastifyReplyLike } from './fastify-shim.js';
export { crosstabExpress } from './express-shim.js';
export type { NodeMiddleware } from './express-shim.js';
export { crosstabHono } from './hono-shim.js';
export type { HonoContextLike } from './hono-shim.js';
export { readNodeBody, readWebBody, withBody } from './read-body.js';
export { requestBody } from './request-body.js';
export { isServiceError } from './service-error.js';
export { listen } from './server.js';
export { ServiceMetrics, datasetVersion } from './service-metrics.js';
export type { HandlerCounts, ServiceMetricsOptions } from './service-metrics.js';
export { listenMetrics } from './metrics-server.js';
export type { MetricsServerOptions, ReadinessCheck, RunningMetricsServer } from './metrics-server.js';
export type { ListenOptions, RunningServer } from './server.js';
export type { ConnectionLimits, ConnectionObserver } from './connection-limits.js';
export { NdjsonLedger } from './usage-ledger.js';
export type { DurableWriteStats, NdjsonLedgerOptions, UsageRecord, UsageSink, VoidReason } from './usage-ledger.js';
export { FileKeyStore } from './key-store.js';
export type { AdmissionRefusal, FileKeyStoreOptions, KeyStore } from './key-store.js';
export {
  API_KEY_PATTERN,
  KEY_FILE_FORMAT,
  addApiKey,
  generateApiKey,
  hashApiKey,
  keyStatus,
  readKeyFile,
  revokeApiKey,
  rotateApiKey,
  writeKeyFile,
} from './key-file.js';
export type { ApiKeyRecord, KeyFile, KeyStatus, NewKeyOptions } from './key-file.js';
export { AUTH_HEADER } from './auth.js';
export { ALL, MAX_EXPRESSION_LENGTH, MAX_TARGET_CODES, MIN_TARGET_CODES } from './crosstab-request.js';
export type { CrosstabRequest } from './crosstab-request.js';
export { API_VERSION, buildOpenApiDocument, errorSchemaNames } from './openapi.js';
export { CORS_MAX_AGE_SECONDS } from './cors.js';
export { serviceErrorStatus } from './service-error.js';
export type { ServiceErrorBody, ServiceErrorCode } from './service-error.js';
export { DEFAULT_TABLE_LIMITS, MAX_TABLE_CELLS, type TableLimits } from './table-limits.js';
export { FairShare, type FairShareLimits } from './fair-share.js';
