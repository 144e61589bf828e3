import { ConditionalResult, MAX_AXIS } from '../index.js';
import { XLSX_TYPE } from './accept.js';
import { AUTH_HEADER } from './auth.js';
import { CORS_ALLOW_HEADERS } from './cors.js';
import { ALL } from './crosstab-request.js';
import { errorSchema, errorSchemaNames, string } from './openapi-parts.js';
import type { Route } from './route.js';
import { createRouter } from './router.js';
import { ROUTES } from './routes.js';

export { errorSchemaNames } from './openapi-parts.js';

/** info.version of the OpenAPI document; the base path carries the matching `v1`. */
export const API_VERSION = '1.0.0';

const description = `Weighted crosstab queries over survey microdata.

POST /crosstab evaluates one population base and 1 to 2 target codes against one survey and returns, per target, the weighted projected audience (WgtAud, in units of AudienceReportUnits), the unweighted respondent count (Resps) and a stability flag (Stbl).

Expressions (PopulationBaseCode and each target code): \`*\` | \`VAR=v\` | \`VAR=v1,v2\` | \`VAR=lo..hi\` | \`VAR=lo..\` | \`VAR=..hi\` | \`VAR=NA\` | \`CODE\`, combined with AND, OR, NOT and parentheses; names and values with spaces or other characters in double quotes, \\\" for a quote inside (\`\"two words\"=\"New York\"\`); numbers such as \`2\`, \`-0.5\`, \`1e-7\`.

ResultCode on a 200: 0 = success; ${ConditionalResult.emptyBase} = the population base matches no respondents (every result is 0); ${ConditionalResult.unstableBase} = the population base has too few respondents to be stable (results are exact but unstable). ResultDescription explains.

Errors carry ResultCode = HTTP status, ResultDescription = error.message and an error object {code, message, field?, hint}. A rejected request is not billed, and retrying it unchanged fails identically.

AuthorizationGroup: absent, null or \`${ALL}\` means every group the key is entitled to; a group name restricts the expressions to that group's variables and codes.

GET /docs is free, needs no key and is never billed: use it as a liveness probe.

GET /surveys lists the surveys your key may query; GET /surveys/{SurveyCode} lists a survey's variables, values (with rounded respondent counts, suppressed for low bases), ranges, codes and weights within your authorization groups, each with the expression that selects it. Both need the key, are never billed and send an ETag (If-None-Match gives 304). POST /tables computes a whole table (rows x columns, up to ${MAX_AXIS} entries per axis) as JSON or, with \`Accept: text/csv\`, CSV or, with \`Accept: ${XLSX_TYPE}\`, an Excel workbook; billed once per 200.`;

/** The preflight operation of a path whose routes a browser calls only after one. */
function preflightOperation(template: string, routes: readonly Route[], allow: readonly string[], operationId: string): Record<string, unknown> {
  const methods = routes.map((route) => route.method).join(' and ');
  return {
    operationId: `${operationId}Options`,
    summary: `CORS preflight for ${methods} ${template}.`,
    tags: ['crosstab'],
    security: [],
    responses: {
      200: {
        description: 'Preflight answer; no body.',
        headers: {
          'Access-Control-Allow-Origin': string('The request Origin when allowed, * when any origin is allowed (otherwise an allowed origin, which the browser refuses).'),
          'Access-Control-Allow-Methods': string(allow.filter((method) => method !== 'HEAD').join(', ')),
          'Access-Control-Allow-Headers': string(CORS_ALLOW_HEADERS),
          'Access-Control-Max-Age': string('Seconds the preflight answer may be cached.'),
        },
      },
    },
  };
}

/**
 * The OpenAPI 3.0.1 description served by GET /docs: one operation per entry of the route
 * table (its own fragment), a preflight operation where the path has one, and the schemas.
 */
export function buildOpenApiDocument(options: { serverUrl: string; maxBodyBytes: number; routes?: readonly Route[] }): Record<string, unknown> {
  const router = createRouter(options.routes ?? ROUTES);
  const settings = { maxBodyBytes: options.maxBodyBytes };
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, unknown> = {};
  for (const { template, routes, allow, preflight } of router.paths) {
    const operations: Record<string, unknown> = {};
    for (const route of routes) {
      const docs = route.docs(settings);
      operations[route.method.toLowerCase()] = docs.operation;
      Object.assign(schemas, docs.schemas);
    }
    if (preflight) {
      const first = routes.find((route) => route.auth || route.body !== undefined) as Route;
      operations['options'] = preflightOperation(template, routes, allow, String(first.docs(settings).operation['operationId']));
    }
    paths[template] = operations;
  }
  const errorStatuses = Object.keys(errorSchemaNames).map(Number);
  return {
    openapi: '3.0.1',
    info: { title: 'Crosstab Query Service', description, version: API_VERSION },
    servers: [{ url: options.serverUrl, description: 'This service; the path carries the API version segment v1.' }],
    tags: [{ name: 'crosstab' }, { name: 'catalog' }, { name: 'audiences' }],
    paths,
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
        ...schemas,
        ...Object.fromEntries(errorStatuses.map((status) => [errorSchemaNames[status], errorSchema(status)])),
      },
    },
  };
}
