/** The shared pieces of the OpenAPI document: error schemas and responses, common headers. */
import { CORS_EXPOSE_HEADERS } from './cors.js';
import { serviceErrorStatus, type ServiceErrorCode } from './service-error.js';

/** Component schema name of the error body for each status. */
export const errorSchemaNames: Record<number, string> = {
  400: 'BadRequestError',
  401: 'UnauthorizedError',
  403: 'ForbiddenError',
  404: 'NotFoundError',
  405: 'MethodNotAllowedError',
  406: 'NotAcceptableError',
  408: 'RequestTimeoutError',
  409: 'ConflictError',
  413: 'PayloadTooLargeError',
  415: 'UnsupportedMediaTypeError',
  429: 'TooManyRequestsError',
  431: 'RequestHeaderFieldsTooLargeError',
  500: 'InternalServerError',
  503: 'ServiceUnavailableError',
};

const statusDescriptions: Record<number, string> = {
  400: 'Malformed JSON, a missing or invalid field, an invalid expression or an unknown survey, group, variable, value or code.',
  401: 'The Service-Engine-Authorizer key (or the Bearer access token) is missing, malformed, unknown, expired or revoked (a session cookie alone is never accepted). Do not retry with the same value.',
  403: 'The key is valid but not entitled to the survey, the authorization group, or a variable or code used in an expression.',
  404: 'No operation at this path under the base path (any path the document does not list answers so).',
  405: 'The path does not accept this method: every path answers so to the methods it does not list (the Allow header names those it does).',
  406: 'The Accept header names no format the operation answers in.',
  408: 'The request body did not arrive within the body timeout of its headers, or the whole request not in time; the connection is closed. Not billed.',
  409: 'The name is already taken where the audience would go (by a shared audience of the account, or one of the caller\'s own).',
  413: 'The request body is larger than the limit.',
  415: 'Content-Type is not application/json with UTF-8, or the body has a Content-Encoding or a Transfer-Encoding other than chunked (send it uncompressed).',
  429: "The account's rate limit or monthly quota is used up, or the caller's address sent too many unknown, revoked or expired keys; retry after the Retry-After header's seconds. Not billed.",
  431: 'The request headers are too large (`crosstab serve` and `listen()`, for any path). The connection is closed.',
  500: 'Internal error (a bug); report the X-Request-Id header.',
  503: 'The service is shutting down, cannot record usage or cannot reach its accounts database; retry later (after the Retry-After header\'s seconds when given). `dataset_unavailable`: the survey\'s data on the server cannot be used until the provider rebuilds it (other surveys answer). Not billed.',
};

function codesFor(status: number): ServiceErrorCode[] {
  return (Object.keys(serviceErrorStatus) as ServiceErrorCode[]).filter((code) => serviceErrorStatus[code] === status);
}

export function errorSchema(status: number): object {
  return {
    type: 'object',
    description: `Error body for HTTP ${status}: ResultCode equals the status and ResultDescription equals error.message.`,
    required: ['ResultCode', 'ResultDescription', 'error'],
    additionalProperties: false,
    properties: {
      ResultCode: { type: 'integer', enum: [status] },
      ResultDescription: { type: 'string' },
      error: {
        type: 'object',
        required: ['code', 'message', 'hint'],
        additionalProperties: false,
        properties: {
          code: { type: 'string', enum: codesFor(status) },
          message: { type: 'string' },
          field: { type: 'string', description: 'The request field at fault: SurveyCode (also the path parameter of GET /surveys/{SurveyCode}), AuthorizationGroup, PopulationBaseCode, TargetCodes (POST /tables: Rows, Columns, Weight, Statistics, Missing, PercentBase, ColumnGroups) or an unknown field name. Absent when no one field is at fault.' },
          hint: { type: 'string', description: 'How to fix the request.' },
        },
      },
    },
  };
}

export const string = (description: string) => ({ schema: { type: 'string' }, description });

/** A response header: `required` when every answer of its kind carries it. */
export const header = (description: string, schema: object = { type: 'string' }, required = false) => ({ description, required, schema });

/**
 * Headers every answer of the handler carries (not the bare 400, 408 and 431 that `listen()`
 * writes for a request node:http cannot read). Operations add their own (ETag, Allow...);
 * `Cache-Control` here is the default no-store, which the catalog and the preflight replace.
 */
export function answerHeaders(required = true): Record<string, object> {
  return {
    'X-Request-Id': header('Identifies the call in logs and in the usage ledger; quote it when reporting a problem.', { type: 'string', format: 'uuid' }, required),
    'X-Content-Type-Options': header('Always nosniff.', { type: 'string', enum: ['nosniff'] }, required),
    'Cache-Control': header('no-store: answers are not cached (the catalog sends private, max-age instead).', { type: 'string' }, required),
    'Access-Control-Allow-Origin': header('The request Origin when allowed, * when any origin is allowed (otherwise the first allowed origin, which the browser refuses).', { type: 'string' }, required),
    'Access-Control-Expose-Headers': header(`${CORS_EXPOSE_HEADERS}: the response headers a cross-origin script may read besides the safelisted ones.`, { type: 'string' }, required),
    Vary: header('Origin when the service allows a list of origins; the catalog also varies on Service-Engine-Authorizer and Authorization.'),
  };
}

/** Kept for operation fragments: the headers of every answer. */
export const corsHeaders = answerHeaders();

/** Statuses `listen()` may answer itself, without the handler's headers, for a request node:http cannot read. */
const BARE_STATUSES = new Set([400, 408, 431]);

/** The headers of an error answer of `status` (Retry-After, WWW-Authenticate, Allow where they are sent). */
function errorHeaders(status: number): Record<string, object> {
  const headers: Record<string, object> = answerHeaders(!BARE_STATUSES.has(status));
  if (status === 401) {
    headers['WWW-Authenticate'] = header(
      'The challenges of the accepted credentials: `ApiKey realm="crosstab", header="Service-Engine-Authorizer"`, and `Bearer realm="crosstab"` where single sign-on is on.',
      { type: 'string' },
      true,
    );
  }
  if (status === 405) headers['Allow'] = header("The methods the path accepts (e.g. POST, OPTIONS).", { type: 'string' }, true);
  if (status === 429) headers['Retry-After'] = header('Seconds to wait before retrying.', { type: 'integer', minimum: 1 }, true);
  if (status === 503) headers['Retry-After'] = header('Seconds to wait before retrying, when the service knows (its accounts database is unavailable).', { type: 'integer', minimum: 1 });
  if (status === 408 || status === 413 || status === 431) headers['Connection'] = header('close: the connection ends with this answer.');
  return headers;
}

/** Of an answer computed from a survey's data: which build answered. */
export const datasetVersionHeader = {
  'X-Dataset-Version': header('The checksum of the survey data that answered, as GET /surveys lists it (Version.Checksum): a new wave or build published to the service changes it.', { type: 'string', pattern: '^[0-9a-f]{64}$' }, true),
};

function errorResponse(status: number): object {
  return {
    description: statusDescriptions[status],
    headers: errorHeaders(status),
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${errorSchemaNames[status]}` } } },
  };
}

/** The headers of the same error answered to HEAD (no body). */
export function errorResponseWithoutBody(status: number, description?: string): object {
  return { description: description ?? statusDescriptions[status], headers: errorHeaders(status) };
}

/** The error responses of an operation, one per status. */
export function errorResponses(statuses: readonly number[]): Record<number, object> {
  return Object.fromEntries(statuses.map((status) => [status, errorResponse(status)]));
}
