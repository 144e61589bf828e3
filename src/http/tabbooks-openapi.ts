/** The OpenAPI fragment of POST /tabbooks. */
import { STAT_NAMES } from '../index.js';
import { XLSX_TYPE } from './accept.js';
import { corsHeaders, datasetVersionHeader, errorResponses } from './openapi-parts.js';
import type { RouteDocs } from './route.js';

export const tabbooksDocs = (settings: { maxBodyBytes: number }): RouteDocs => ({
  operation: {
    operationId: 'tabbooks',
    summary: 'A tab book: one banner across one table per stub variable, as the XLSX workbook `crosstab tabbook` writes (an index sheet, a sheet per table). Bounded by the table limits (cells of all its tables together, sig comparisons); billed once, operation tabbook, targets = its number of tables.',
    tags: ['crosstab'],
    security: [{ ServiceEngineAuthorizer: [] }, { OidcBearer: [] }],
    requestBody: { required: true, description: `At most ${settings.maxBodyBytes} bytes; SurveyCode, Banner and Stubs required.`, content: { 'application/json': { schema: { $ref: '#/components/schemas/TabbooksRequest' } } } },
    responses: {
      200: { description: 'The workbook.', headers: { ...corsHeaders, ...datasetVersionHeader }, content: { [XLSX_TYPE]: { schema: { type: 'string', format: 'binary' } } } },
      ...errorResponses([400, 401, 403, 404, 406, 413, 415, 429, 500, 503]),
    },
  },
  schemas: {
    TabbooksRequest: {
      type: 'object',
      additionalProperties: false,
      required: ['SurveyCode', 'Banner', 'Stubs'],
      properties: {
        SurveyCode: { type: 'string', minLength: 1, example: 'GSS' },
        AuthorizationGroup: { type: 'string', minLength: 1, description: 'Only this group of the caller\'s; default all of them.' },
        PopulationBaseCode: { type: 'string', minLength: 1, default: '*', example: 'year=2024' },
        Banner: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 2000 }, description: 'Variables (a column per value), codebook codes or expressions (a column each); a Total column comes first.', example: ['sex', 'race'] },
        Stubs: { oneOf: [{ type: 'array', minItems: 1, maxItems: 1000, items: { type: 'string', minLength: 1 } }, { type: 'string', enum: ['all'] }], description: 'Stub variables, a table each, or "all": every variable of the caller\'s groups with a value list.', example: ['degree', 'relig'] },
        Weight: { type: 'string', nullable: true, description: 'A weight column; null: unweighted; default the survey\'s first.' },
        Statistics: { type: 'array', items: { type: 'string', enum: [...STAT_NAMES] }, default: ['vpct', 'sig'] },
        Missing: { type: 'string', enum: ['show', 'hide'], default: 'show' },
      },
    },
  },
});
