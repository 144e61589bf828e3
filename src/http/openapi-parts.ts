/** The shared pieces of the OpenAPI document: error schemas and responses, common headers. */
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
  404: 'No operation at this path.',
  405: 'The path does not accept this method (see the Allow header).',
  406: 'The Accept header names no format the operation answers in.',
  408: 'The request body did not arrive within the body timeout of its headers, or the whole request not in time; the connection is closed. Not billed.',
  409: 'The name is already taken where the audience would go (by a shared audience of the account, or one of the caller\'s own).',
  413: 'The request body is larger than the limit.',
  415: 'Content-Type is not application/json with UTF-8.',
  429: "The account's rate limit or monthly quota is used up, or the caller's address sent too many unknown, revoked or expired keys; retry after the Retry-After header's seconds. Not billed.",
  431: 'The request headers are too large.',
  500: 'Internal error (a bug); report the X-Request-Id header.',
  503: 'The service is shutting down, cannot record usage or cannot reach its accounts database; retry later (after the Retry-After header\'s seconds when given). Not billed.',
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
          field: { type: 'string', description: 'The request field at fault: SurveyCode, AuthorizationGroup, PopulationBaseCode, TargetCodes (POST /tables: Rows, Columns, Weight, Statistics, Missing, PercentBase) or an unknown field name.' },
          hint: { type: 'string', description: 'How to fix the request.' },
        },
      },
    },
  };
}

export const string = (description: string) => ({ schema: { type: 'string' }, description });
export const corsHeaders = {
  'Access-Control-Allow-Origin': string('The allowed origin, or * when any origin is allowed.'),
  'X-Request-Id': string('Identifies the call in logs and in the usage ledger.'),
};

function errorResponse(status: number): object {
  return {
    description: statusDescriptions[status],
    headers: status === 429 ? { ...corsHeaders, 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } } } : corsHeaders,
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${errorSchemaNames[status]}` } } },
  };
}

/** The error responses of an operation, one per status. */
export function errorResponses(statuses: readonly number[]): Record<number, object> {
  return Object.fromEntries(statuses.map((status) => [status, errorResponse(status)]));
}
