import { ConditionalResult, MAX_AXIS } from '../index.js';
import { AUTH_HEADER } from './auth.js';
import { catalogOpenApi } from './catalog-openapi.js';
import { ALL, MAX_EXPRESSION_LENGTH, MAX_NAME_LENGTH, MAX_TARGET_CODES, MIN_TARGET_CODES } from './crosstab-request.js';
import { serviceErrorStatus, type ServiceErrorCode } from './service-error.js';

/** info.version of the OpenAPI document; the base path carries the matching `v1`. */
export const API_VERSION = '1.0.0';

/** Component schema name of the error body for each status. */
export const errorSchemaNames: Record<number, string> = {
  400: 'BadRequestError',
  401: 'UnauthorizedError',
  403: 'ForbiddenError',
  404: 'NotFoundError',
  405: 'MethodNotAllowedError',
  406: 'NotAcceptableError',
  408: 'RequestTimeoutError',
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
  408: 'The whole request did not arrive in time.',
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

function errorSchema(status: number): object {
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
          field: { type: 'string', description: 'The request field at fault: SurveyCode, AuthorizationGroup, PopulationBaseCode, TargetCodes (POST /tables: Rows, Columns, Weight, Statistics, Missing) or an unknown field name.' },
          hint: { type: 'string', description: 'How to fix the request.' },
        },
      },
    },
  };
}

const string = (description: string) => ({ schema: { type: 'string' }, description });
const corsHeaders = {
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

const description = `Weighted crosstab queries over survey microdata.

POST /crosstab evaluates one population base and 1 to 2 target codes against one survey and returns, per target, the weighted projected audience (WgtAud, in units of AudienceReportUnits), the unweighted respondent count (Resps) and a stability flag (Stbl).

Expressions (PopulationBaseCode and each target code): \`*\` | \`VAR=v\` | \`VAR=v1,v2\` | \`VAR=lo..hi\` | \`VAR=lo..\` | \`VAR=..hi\` | \`VAR=NA\` | \`CODE\`, combined with AND, OR, NOT and parentheses; names and values with spaces or other characters in double quotes, \\\" for a quote inside (\`\"two words\"=\"New York\"\`); numbers such as \`2\`, \`-0.5\`, \`1e-7\`.

ResultCode on a 200: 0 = success; ${ConditionalResult.emptyBase} = the population base matches no respondents (every result is 0); ${ConditionalResult.unstableBase} = the population base has too few respondents to be stable (results are exact but unstable). ResultDescription explains.

Errors carry ResultCode = HTTP status, ResultDescription = error.message and an error object {code, message, field?, hint}. A rejected request is not billed, and retrying it unchanged fails identically.

AuthorizationGroup: absent, null or \`${ALL}\` means every group the key is entitled to; a group name restricts the expressions to that group's variables and codes.

GET /docs is free, needs no key and is never billed: use it as a liveness probe.

GET /surveys lists the surveys your key may query; GET /surveys/{SurveyCode} lists a survey's variables, values (with rounded respondent counts, suppressed for low bases), ranges, codes and weights within your authorization groups, each with the expression that selects it. Both need the key, are never billed and send an ETag (If-None-Match gives 304). POST /tables computes a whole table (rows x columns, up to ${MAX_AXIS} entries per axis) as JSON or, with \`Accept: text/csv\`, CSV; billed once per 200.`;

/** The OpenAPI 3.0.1 description served by GET /docs. */
export function buildOpenApiDocument(options: { serverUrl: string; maxBodyBytes: number }): Record<string, unknown> {
  const errorStatuses = Object.keys(errorSchemaNames).map(Number);
  // Survey catalog and tables: paths and schemas in catalog-openapi.ts.
  const catalog = catalogOpenApi({ maxBodyBytes: options.maxBodyBytes, errorResponse, corsHeaders });
  return {
    openapi: '3.0.1',
    info: { title: 'Crosstab Query Service', description, version: API_VERSION },
    servers: [{ url: options.serverUrl, description: 'This service; the path carries the API version segment v1.' }],
    tags: [{ name: 'crosstab' }, { name: 'catalog' }],
    paths: {
      '/docs': {
        get: {
          operationId: 'docs',
          summary: 'The OpenAPI description of this service (free liveness probe).',
          tags: ['crosstab'],
          security: [],
          responses: {
            200: {
              description: 'This OpenAPI document.',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/OpenApiDocument' } } },
            },
          },
        },
      },
      '/crosstab': {
        post: {
          operationId: 'crosstab',
          summary: 'Weighted audience, respondents and stability of 1 to 2 target codes within a population base.',
          tags: ['crosstab'],
          security: [{ ServiceEngineAuthorizer: [] }, { OidcBearer: [] }],
          requestBody: {
            required: true,
            description: `At most ${options.maxBodyBytes} bytes.`,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/CrosstabRequest' } } },
          },
          responses: {
            200: {
              description: 'One result per target code, in request order. Billed.',
              headers: corsHeaders,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/CrosstabResponse' } } },
            },
            ...Object.fromEntries([400, 401, 403, 413, 415, 429, 500, 503].map((status) => [status, errorResponse(status)])),
          },
        },
        options: {
          operationId: 'crosstabOptions',
          summary: 'CORS preflight for POST /crosstab.',
          tags: ['crosstab'],
          security: [],
          responses: {
            200: {
              description: 'Preflight answer; no body.',
              headers: {
                'Access-Control-Allow-Origin': string('The request Origin when allowed, * when any origin is allowed (otherwise an allowed origin, which the browser refuses).'),
                'Access-Control-Allow-Methods': string('POST, OPTIONS'),
                'Access-Control-Allow-Headers': string(`Content-Type, ${AUTH_HEADER}`),
                'Access-Control-Max-Age': string('Seconds the preflight answer may be cached.'),
              },
            },
          },
        },
      },
      ...catalog.paths,
    },
    components: {
      securitySchemes: {
        ServiceEngineAuthorizer: {
          type: 'apiKey',
          in: 'header',
          name: AUTH_HEADER,
          description: 'API key from the developer portal (ctk_ + 43 base64url characters). Keep it server-side; a portal session cookie is never accepted.',
        },
        OidcBearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'Single sign-on, where the provider enabled it: `Authorization: Bearer <access token>`, a JWT access token from an OpenID Connect issuer the service trusts (signature, issuer, audience and expiry are checked), e.g. from the client credentials grant. The token acts for the account linked to its subject or to another claim; entitlements, limits and billing are those of the account. SAML 2.0 identity providers are federated through the OpenID Provider. Used only when Service-Engine-Authorizer is absent.',
        },
      },
      schemas: {
        CrosstabRequest: {
          type: 'object',
          required: ['SurveyCode', 'PopulationBaseCode', 'TargetCodes'],
          additionalProperties: false,
          properties: {
            SurveyCode: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, description: 'The one survey to query.', example: 'GSS' },
            AuthorizationGroup: {
              type: 'string',
              nullable: true,
              minLength: 1,
              maxLength: MAX_NAME_LENGTH,
              description: `Restricts expressions to one authorization group; ${ALL} (or absent) = every group the key is entitled to.`,
              example: ALL,
            },
            PopulationBaseCode: { type: 'string', minLength: 1, maxLength: MAX_EXPRESSION_LENGTH, description: 'The one population base (* = everyone).', example: 'year=2024' },
            TargetCodes: {
              type: 'array',
              minItems: MIN_TARGET_CODES,
              maxItems: MAX_TARGET_CODES,
              items: { type: 'string', minLength: 1, maxLength: MAX_EXPRESSION_LENGTH },
              description: 'Target segment codes; one result each, in this order.',
              example: ['sex=2'],
            },
          },
        },
        CrosstabResponse: {
          type: 'object',
          required: ['ResultCode', 'ResultDescription', 'Results', 'AudienceReportUnits'],
          additionalProperties: false,
          properties: {
            ResultCode: {
              type: 'integer',
              enum: [0, ConditionalResult.emptyBase, ConditionalResult.unstableBase],
              description: `0 = success; ${ConditionalResult.emptyBase} = empty population base; ${ConditionalResult.unstableBase} = unstable population base.`,
            },
            ResultDescription: { type: 'string', description: 'Empty on plain success; explains a ResultCode above 0.' },
            Results: { type: 'array', minItems: MIN_TARGET_CODES, maxItems: MAX_TARGET_CODES, items: { $ref: '#/components/schemas/CrosstabResult' } },
            AudienceReportUnits: { type: 'integer', minimum: 1, description: 'Multiplier of WgtAud: absolute audience = WgtAud x AudienceReportUnits.' },
          },
        },
        CrosstabResult: {
          type: 'object',
          required: ['WgtAud', 'Resps', 'Stbl'],
          additionalProperties: false,
          properties: {
            WgtAud: { type: 'number', format: 'float', minimum: 0, description: 'Weighted projected audience in AudienceReportUnits.' },
            Resps: { type: 'integer', minimum: 0, description: 'Unweighted respondents matching base AND target.' },
            Stbl: { type: 'integer', enum: [0, 1], description: '0 = stable; 1 = unstable (low respondent count; use with caution).' },
          },
        },
        OpenApiDocument: {
          type: 'object',
          required: ['openapi', 'info', 'paths'],
          properties: { openapi: { type: 'string' }, info: { type: 'object' }, paths: { type: 'object' } },
        },
        ...Object.fromEntries(errorStatuses.map((status) => [errorSchemaNames[status], errorSchema(status)])),
        ...catalog.schemas,
      },
    },
  };
}
