/**
 * The route table of the REST API: every operation, once.
 *
 * Where things go:
 * - A REST endpoint is one entry here: method, path below the base path (`{Name}` segments are
 *   path parameters, given percent-decoded in `params`), whether it needs a caller (`auth`),
 *   whether its 200 is billed, whether it reads a JSON body, its operation and its OpenAPI
 *   fragment. Dispatch, the 404 and 405 answers (with Allow), HEAD for GET, the OPTIONS
 *   preflight (for paths with a route that needs a credential or a body) and GET /docs all
 *   read this table. An operation's code goes in its own file (crosstab-operation.ts).
 * - An auth method is one authenticator in the ordered list of authenticators.ts.
 * - An error code is one entry of service-error.ts (its HTTP status, checked exhaustive).
 */
import { createAudienceDocs, deleteAudienceDocs, getAudienceDocs, listAudiencesDocs, updateAudienceDocs } from './audiences-openapi.js';
import { createAudienceOperation, deleteAudienceOperation, getAudienceOperation, listAudiencesOperation, updateAudienceOperation } from './audiences-operation.js';
import { describeSurveyDocs, listSurveysDocs, tablesDocs } from './catalog-openapi.js';
import { crosstabDocs } from './crosstab-docs.js';
import { answerHeaders, header } from './openapi-parts.js';
import { DOCS_CACHE_CONTROL, docsOperation } from './docs-operation.js';
import { crosstabOperation } from './crosstab-operation.js';
import { holdingDatasets } from './held-surveys.js';
import type { Route } from './route.js';
import { surveyOperation, surveysOperation } from './surveys-operation.js';
import { tablesAccept, tablesOperation } from './tables-operation.js';
import { tabbooksAccept, tabbooksOperation } from './tabbooks-operation.js';
import { tabbooksDocs } from './tabbooks-openapi.js';

/** The headers of GET /docs that make it cheap to ask again. */
const docsCacheHeaders = {
  ETag: header('A strong entity tag of this document in this content coding: send it back in If-None-Match to get 304 while the document has not changed.', { type: 'string' }, true),
  'Cache-Control': header(`${DOCS_CACHE_CONTROL}: keep it, but ask again (If-None-Match) before using it.`, { type: 'string' }, true),
  Vary: header('Accept-Encoding (after Origin when the service allows a list of origins).', { type: 'string' }, true),
};

export const ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/docs',
    auth: false,
    billed: false,
    handle: docsOperation,
    docs: () => ({
      operation: {
        operationId: 'docs',
        summary: 'The OpenAPI description of this service (free liveness probe).',
        tags: ['crosstab'],
        security: [],
        responses: {
          200: {
            description: 'This OpenAPI document, gzip or brotli compressed when Accept-Encoding asks for it.',
            headers: { ...answerHeaders(), ...docsCacheHeaders, 'Content-Encoding': header('br or gzip, as Accept-Encoding prefers; absent when it names neither.', { type: 'string', enum: ['br', 'gzip'] }) },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/OpenApiDocument' } } },
          },
          304: { description: 'Not modified: If-None-Match holds the ETag of the representation Accept-Encoding picks. No body.', headers: { ...answerHeaders(), ...docsCacheHeaders } },
        },
      },
      schemas: {
        OpenApiDocument: {
          type: 'object',
          required: ['openapi', 'info', 'paths'],
          description: 'An OpenAPI 3.0 document (this one).',
          additionalProperties: true,
          properties: {
            openapi: { type: 'string', example: '3.0.1' },
            info: { type: 'object', additionalProperties: true },
            paths: { type: 'object', additionalProperties: true },
          },
        },
      },
    }),
  },
  {
    method: 'POST',
    path: '/crosstab',
    auth: true,
    billed: true,
    body: 'json',
    tooLargeHint: 'A CrosstabRequest is small: send one survey, one population base and 1 to 2 target codes.',
    handle: crosstabOperation,
    docs: crosstabDocs,
  },
  // The survey catalog: free (never billed), counted against the account's rate limit.
  { method: 'GET', path: '/surveys', auth: true, billed: false, handle: surveysOperation, docs: listSurveysDocs },
  { method: 'GET', path: '/surveys/{SurveyCode}', auth: true, billed: false, handle: surveyOperation, docs: describeSurveyDocs },
  // A whole table, JSON or CSV by Accept; billed once per 200.
  {
    method: 'POST',
    path: '/tables',
    auth: true,
    billed: true,
    body: 'json',
    accepts: tablesAccept,
    tooLargeHint: 'Expand whole variables with {"Variable": ...} instead of listing their values, or ask the provider for a larger request limit.',
    // Held on the version it started on through its account's turn and its audiences.
    handle: holdingDatasets(tablesOperation),
    docs: tablesDocs,
  },
  // A tab book as XLSX; billed once (operation tabbook, its number of tables).
  { method: 'POST', path: '/tabbooks', auth: true, billed: true, body: 'json', accepts: tabbooksAccept, tooLargeHint: 'A tab book request names a banner and its stubs: send "Stubs": "all" rather than every name.', handle: holdingDatasets(tabbooksOperation), docs: tabbooksDocs },
  // Saved audiences (@name in expressions): free, counted against the account's rate limit.
  { method: 'POST', path: '/audiences', auth: true, billed: false, body: 'json', tooLargeHint: 'An audience is a name, an expression of at most 2000 characters and a label.', handle: createAudienceOperation, docs: createAudienceDocs },
  { method: 'GET', path: '/audiences', auth: true, billed: false, handle: listAudiencesOperation, docs: listAudiencesDocs },
  { method: 'GET', path: '/audiences/{AudienceId}', auth: true, billed: false, handle: getAudienceOperation, docs: getAudienceDocs },
  { method: 'PUT', path: '/audiences/{AudienceId}', auth: true, billed: false, body: 'json', tooLargeHint: 'An audience is a name, an expression of at most 2000 characters and a label.', handle: updateAudienceOperation, docs: updateAudienceDocs },
  { method: 'DELETE', path: '/audiences/{AudienceId}', auth: true, billed: false, handle: deleteAudienceOperation, docs: deleteAudienceDocs },
];
