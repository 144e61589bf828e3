import { ConditionalResult, MAX_AXIS } from '../index.js';
import { PPTX_TYPE, XLSX_TYPE } from './accept.js';
import { AUTH_HEADER } from './auth.js';
import { CORS_ALLOW_HEADERS } from './cors.js';
import { ALL } from './crosstab-request.js';
import { answerHeaders, errorResponses, errorSchema, errorSchemaNames, header } from './openapi-parts.js';
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

Errors carry ResultCode = HTTP status, ResultDescription = error.message and an error object {code, message, field?, hint}. A rejected request is not billed, and retrying it unchanged fails identically. A billed 200 whose answer is not delivered whole (the connection closes before its last byte is sent) is credited: billed calls are those delivered.

AuthorizationGroup: absent, null or \`${ALL}\` means every group the key is entitled to; a group name restricts the expressions to that group's variables and codes.

GET /docs is free, needs no key and is never billed: use it as a liveness probe. HEAD answers every GET operation with its headers and no body.

Every answer carries X-Request-Id, X-Content-Type-Options: nosniff, Access-Control-Allow-Origin and Access-Control-Expose-Headers, and Cache-Control: no-store unless the operation says otherwise. A path this document does not list answers 404, a method a path does not list 405 with an Allow header, a 401 a WWW-Authenticate header naming the accepted credentials.

GET /surveys lists the surveys your key may query; GET /surveys/{SurveyCode} lists a survey's variables, values (with rounded respondent counts, suppressed for low bases), ranges, codes and weights within your authorization groups, each with the expression that selects it. Both need the key, are never billed and send an ETag (If-None-Match gives 304). POST /tables computes a whole table (rows x columns, up to ${MAX_AXIS} entries per axis) as JSON or, with \`Accept: text/csv\`, CSV or, with \`Accept: ${XLSX_TYPE}\`, an Excel workbook or, with \`Accept: ${PPTX_TYPE}\`, a PowerPoint deck of native charts; billed once per 200.`;

/** The tags of the document and what each groups; a route may describe a tag of its own (RouteDocs.tags). */
const TAGS: Record<string, string> = {
  crosstab: 'POST /crosstab (audience, respondents and stability of 1 to 2 target codes), GET /docs, and the CORS preflights.',
  catalog: "The survey catalog: the caller's surveys and each survey's variables, values, ranges, codes and weights. Free, with ETags.",
  tables: 'POST /tables: a whole weighted table with margins and statistics, as JSON, CSV or an Excel workbook. Billed.',
};

/**
 * Statuses every operation may answer besides its own: 404 and 405 (the router's answers
 * for the paths and methods the document does not list), 408 and 431 (`listen()`'s limits on
 * any request), 500 and 503 (a bug; shutting down).
 */
const EVERY_OPERATION_STATUSES = [404, 405, 408, 431, 500, 503];

type Operation = Record<string, unknown> & { responses: Record<string, Record<string, unknown>> };

/** Adds the statuses of EVERY_OPERATION_STATUSES an operation does not already describe. */
function withEveryStatus(operation: Record<string, unknown>): Operation {
  const responses = { ...(operation['responses'] as Record<string, Record<string, unknown>>) };
  for (const [status, response] of Object.entries(errorResponses(EVERY_OPERATION_STATUSES.filter((status) => responses[status] === undefined)))) {
    responses[status] = response as Record<string, unknown>;
  }
  return { ...operation, responses };
}

/** HEAD of a GET operation: the same statuses and headers, never a body. */
function headOperation(get: Operation, template: string): Operation {
  const responses = Object.fromEntries(Object.entries(get.responses).map(([status, response]) => [status, { description: response['description'], ...(response['headers'] ? { headers: response['headers'] } : {}) }]));
  const { requestBody: _body, responses: _responses, ...rest } = get;
  return { ...rest, operationId: `${String(get['operationId'])}Head`, summary: `The headers GET ${template} answers with, without its body.`, responses };
}

/** The preflight operation of a path whose routes a browser calls only after one. */
function preflightOperation(template: string, routes: readonly Route[], allow: readonly string[], operationId: string, tags: unknown): Operation {
  const methods = routes.map((route) => route.method).join(' and ');
  const { 'Cache-Control': _none, ...headers } = answerHeaders();
  return withEveryStatus({
    operationId: `${operationId}Options`,
    summary: `CORS preflight for ${methods} ${template}.`,
    tags,
    security: [],
    responses: {
      200: {
        description: 'Preflight answer; no body.',
        headers: {
          ...headers,
          'Access-Control-Allow-Methods': header(allow.filter((method) => method !== 'HEAD').join(', '), { type: 'string' }, true),
          'Access-Control-Allow-Headers': header(CORS_ALLOW_HEADERS, { type: 'string' }, true),
          'Access-Control-Max-Age': header('Seconds the preflight answer may be cached.', { type: 'string' }, true),
        },
      },
    },
  });
}

/** The path parameters of a template, as the routes declare them (a plain string otherwise). */
function pathParameters(template: string, operations: readonly Record<string, unknown>[]): object[] {
  const declared = operations.flatMap((operation) => (operation['parameters'] as Array<Record<string, unknown>> | undefined) ?? []).filter((parameter) => parameter['in'] === 'path');
  return [...template.matchAll(/\{([^}]+)\}/g)].map(([, name]) => declared.find((parameter) => parameter['name'] === name) ?? { name, in: 'path', required: true, schema: { type: 'string', minLength: 1 } });
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
  const tags: Record<string, string> = { ...TAGS };
  for (const { template, routes, allow, preflight } of router.paths) {
    const operations: Record<string, Operation> = {};
    for (const route of routes) {
      const docs = route.docs(settings);
      const operation = withEveryStatus(docs.operation);
      operations[route.method.toLowerCase()] = operation;
      // HEAD answers every GET route (router.ts): the same headers, no body.
      if (route.method === 'GET') operations['head'] = headOperation(operation, template);
      Object.assign(schemas, docs.schemas);
      for (const [name, description] of Object.entries(docs.tags ?? {})) tags[name] ??= description;
    }
    if (preflight) {
      const first = routes.find((route) => route.auth || route.body !== undefined) as Route;
      const operation = operations[first.method.toLowerCase()] as Operation;
      operations['options'] = preflightOperation(template, routes, allow, String(operation['operationId']), operation['tags']);
    }
    const parameters = pathParameters(template, Object.values(operations));
    paths[template] = { ...(parameters.length > 0 ? { parameters } : {}), ...operations };
  }
  // A tag an operation uses but nobody described is listed with the operations it groups.
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      for (const tag of ((operation as Record<string, unknown>)['tags'] as string[] | undefined) ?? []) tags[tag] ??= `Operations tagged ${tag}.`;
    }
  }
  const errorStatuses = Object.keys(errorSchemaNames).map(Number);
  return {
    openapi: '3.0.1',
    info: { title: 'Crosstab Query Service', description, version: API_VERSION, license: { name: 'MIT' } },
    servers: [{ url: options.serverUrl, description: 'This service; the path carries the API version segment v1.' }],
    tags: Object.entries(tags).map(([name, tagDescription]) => ({ name, description: tagDescription })),
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
