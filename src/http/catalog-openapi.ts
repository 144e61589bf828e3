/** The OpenAPI fragments of GET /surveys, GET /surveys/{SurveyCode} and POST /tables: their operations and schemas. */
import { MAX_AXIS, STAT_NAMES, tableJsonSchemas } from '../index.js';
import { MAX_EXPRESSION_LENGTH, MAX_NAME_LENGTH } from './crosstab-request.js';
import { answerHeaders, datasetVersionHeader, errorResponses, header } from './openapi-parts.js';
import type { RouteDocs } from './route.js';
import { MAX_LISTED_NUMERIC_VALUES } from './survey-catalog.js';
import { CATALOG_MAX_AGE_SECONDS } from './surveys-operation.js';
import { PPTX_TYPE, XLSX_TYPE } from './accept.js';
import { MAX_DECK_CELLS, MAX_TABLE_CELLS } from './tables-operation.js';
import { TABLE_FIELDS } from './tables-request.js';

const security = [{ ServiceEngineAuthorizer: [] }, { OidcBearer: [] }];
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const count = { type: 'integer', nullable: true, minimum: 0, description: 'Respondents, rounded to a multiple of CountRounding; null when SuppressedAtOrBelow or fewer.' };

const cacheHeaders = {
  ETag: header('Identifies this answer: send it back in If-None-Match to get 304 while it has not changed.', { type: 'string' }, true),
  'Cache-Control': header(`private, max-age=${CATALOG_MAX_AGE_SECONDS}`, { type: 'string' }, true),
  Vary: header('Service-Engine-Authorizer, Authorization (and Origin first when the service allows a list of origins): the answer depends on the caller.', { type: 'string' }, true),
};

/** The catalog's operations by route, and the schemas they share. */
function catalogOpenApi(options: { maxBodyBytes: number }): { paths: Record<string, Record<string, Record<string, unknown>>>; schemas: Record<string, object> } {
  const errors = (statuses: number[]) => errorResponses(statuses);
  const catalogResponses = (schema: string, description: string, statuses: number[], versioned = false) => ({
    200: { description, headers: { ...answerHeaders(), ...cacheHeaders, ...(versioned ? datasetVersionHeader : {}) }, content: { 'application/json': { schema: ref(schema) } } },
    304: { description: 'Not modified: the If-None-Match ETag is still current. No body.', headers: { ...answerHeaders(), ...cacheHeaders, ...(versioned ? datasetVersionHeader : {}) } },
    ...errors(statuses),
  });
  const axis = {
    type: 'array',
    minItems: 1,
    maxItems: MAX_AXIS,
    items: {
      oneOf: [
        { type: 'string', minLength: 1, maxLength: MAX_EXPRESSION_LENGTH, description: 'An expression (a code, VAR=value, a range...).' },
        ref('TableExpressionEntry'),
        ref('TableVariableEntry'),
      ],
    },
  };
  const paths = {
    '/surveys': {
      get: {
        operationId: 'listSurveys',
        summary: "The caller's licensed surveys. Free (never billed), counted against the account's rate limit.",
        tags: ['catalog'],
        security,
        responses: catalogResponses('SurveyList', 'The surveys the caller may query.', [401, 429, 500, 503]),
      },
    },
    '/surveys/{SurveyCode}': {
      get: {
        operationId: 'describeSurvey',
        summary: "A survey's variables, values, ranges, codes and weights within the caller's authorization groups. Free, rate-limited.",
        tags: ['catalog'],
        security,
        parameters: [{ name: 'SurveyCode', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH }, example: 'GSS' }],
        responses: {
          ...catalogResponses('SurveyDetail', 'Only variables and codes of the caller\'s authorization groups; every Expression selects exactly the respondents it describes.', [400, 401, 403, 404, 429, 500, 503], true),
          404: { ...errors([404])[404], description: 'No survey SurveyCode is served here (error.field SurveyCode); the key is entitled to every survey.' },
        },
      },
    },
    '/tables': {
      post: {
        operationId: 'table',
        summary: 'A weighted table of base AND row AND column cells, with margins and the requested statistics. Billed once per 200.',
        tags: ['tables'],
        security,
        requestBody: { required: true, description: `At most ${options.maxBodyBytes} bytes.`, content: { 'application/json': { schema: ref('TableRequest') } } },
        responses: {
          200: {
            description: `The table: JSON by default, CSV (one line per cell) with \`Accept: text/csv\`, an Excel workbook with \`Accept: ${XLSX_TYPE}\`, a PowerPoint deck with \`Accept: ${PPTX_TYPE}\` (at most ${MAX_DECK_CELLS} cells). At most ${MAX_TABLE_CELLS} cells. Billed.`,
            headers: {
              ...answerHeaders(),
              ...datasetVersionHeader,
              'Content-Disposition': { description: 'With the workbook and the deck only: `attachment; filename="<SurveyCode>-table.xlsx"` (or `.pptx`).', schema: { type: 'string' } },
            },
            content: {
              'application/json': { schema: ref('TableResponse') },
              'text/csv': { schema: { type: 'string', description: 'Header row, then one line per cell: row, rowLabel, rowExpr, column, columnLabel, columnExpr, columnLetter, weighted, respondents, sumSqWeights, stability, then each statistic.' } },
              [XLSX_TYPE]: {
                schema: {
                  type: 'string',
                  format: 'binary',
                  description: 'One sheet, as `crosstab table --format xlsx` writes it: title, base note, banner, base rows, then per row its weighted count (in units of AudienceReportUnits), respondents and each requested statistic as numbers (percentages as proportions under a % format), significance letters, footnotes.',
                },
              },
              [PPTX_TYPE]: {
                schema: {
                  type: 'string',
                  format: 'binary',
                  description: 'A deck, as `crosstab table --format pptx` writes it: a slide per row variable with its title, the base, a native bar chart whose data sheet holds the vertical % of each column (vpct is computed whatever Statistics asks), and the table as a native table (Total column, banner, base rows, vertical % with low-base marks and significance letters).',
                },
              },
            },
          },
          ...errors([400, 401, 403, 404, 406, 408, 413, 415, 429, 500, 503]),
          404: { ...errors([404])[404], description: 'The survey is served for POST /crosstab only, not for tables (error.field SurveyCode).' },
        },
      },
    },
  };
  const schemas = {
    SurveyList: { type: 'object', required: ['Surveys'], additionalProperties: false, properties: { Surveys: { type: 'array', items: ref('SurveySummary') } } },
    SurveySummary: {
      type: 'object',
      required: ['SurveyCode', 'Name', 'Respondents', 'AudienceReportUnits', 'Weights', 'Design', 'Version'],
      properties: {
        SurveyCode: { type: 'string' },
        Name: { type: 'string' },
        Respondents: { type: 'integer', minimum: 0 },
        AudienceReportUnits: { type: 'integer', minimum: 1 },
        Weights: { type: 'array', items: { type: 'string' }, description: 'Weight columns; the first is the default.' },
        Design: { type: 'string', enum: ['simple', 'taylor', 'replicate'], description: 'The survey design variances use.' },
        Version: {
          type: 'object',
          required: ['Checksum', 'BuiltAt'],
          additionalProperties: false,
          description: 'The build of the survey data served now; a new wave or build published to the service changes it.',
          properties: {
            Checksum: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The dataset checksum: the X-Dataset-Version header of every answer computed from this build.' },
            BuiltAt: { type: 'string', format: 'date-time', description: 'When this build was made.' },
          },
        },
      },
    },
    SurveyDetail: {
      allOf: [
        ref('SurveySummary'),
        {
          type: 'object',
          required: ['AuthorizationGroups', 'SuppressedAtOrBelow', 'CountRounding', 'Variables', 'Codes'],
          properties: {
            AuthorizationGroups: { type: 'array', items: { type: 'string' }, description: "The caller's groups in this survey; no other group is named." },
            SuppressedAtOrBelow: { type: 'integer', minimum: 0 },
            CountRounding: { type: 'integer', minimum: 1 },
            Variables: { type: 'array', items: ref('CatalogVariable') },
            Codes: { type: 'array', items: ref('CatalogCode') },
            Audiences: {
              type: 'array',
              items: { $ref: '#/components/schemas/Audience' },
              description: "The saved audiences of this survey the caller may use (their own and those shared in their account), as GET /audiences?SurveyCode= lists them; present where the service keeps audiences (an accounts database).",
            },
          },
        },
      ],
    },
    CatalogVariable: {
      type: 'object',
      required: ['Name', 'Kind', 'AuthorizationGroup', 'Distinct'],
      additionalProperties: false,
      properties: {
        Name: { type: 'string' },
        Label: { type: 'string' },
        Kind: { type: 'string', enum: ['numeric', 'text', 'multi'], description: 'multi: a multi-response variable; a respondent holds any number of its Values (VAR=v1,v2 is any of them, VAR=all(v1,v2) all of them, VAR=none(v1,v2) none of them, VAR=NA no answer at all).' },
        AuthorizationGroup: { type: 'string' },
        Distinct: { type: 'integer', minimum: 0 },
        Values: {
          type: 'array',
          description: `Absent for a variable of more than ${MAX_AXIS} distinct values, and for a numeric variable without value labels of more than ${MAX_LISTED_NUMERIC_VALUES} (its Range describes it).`,
          items: {
            type: 'object',
            required: ['Value', 'Expression', 'Respondents'],
            additionalProperties: false,
            properties: { Value: { type: 'string' }, Label: { type: 'string' }, Expression: { type: 'string', example: 'sex=2' }, Respondents: count },
          },
        },
        Range: {
          type: 'object',
          required: ['Min', 'Max', 'Expression'],
          additionalProperties: false,
          properties: { Min: { type: 'number' }, Max: { type: 'number' }, Expression: { type: 'string', example: 'age=18..89' } },
        },
        Missing: { type: 'object', required: ['Expression', 'Respondents'], additionalProperties: false, properties: { Expression: { type: 'string', example: 'age=NA' }, Respondents: count } },
      },
    },
    CatalogCode: {
      type: 'object',
      required: ['Name', 'AuthorizationGroup', 'Expression'],
      additionalProperties: false,
      properties: {
        Name: { type: 'string' },
        Label: { type: 'string' },
        AuthorizationGroup: { type: 'string' },
        Expression: { type: 'string', description: 'The code as an expression.' },
        Definition: { type: 'string', description: "Its definition, when it uses only the caller's groups." },
      },
    },
    TableExpressionEntry: {
      type: 'object',
      required: ['Expression'],
      additionalProperties: false,
      properties: { Expression: { type: 'string', minLength: 1, maxLength: MAX_EXPRESSION_LENGTH }, Label: { type: 'string', maxLength: MAX_EXPRESSION_LENGTH } },
    },
    TableVariableEntry: {
      type: 'object',
      required: ['Variable'],
      additionalProperties: false,
      properties: { Variable: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, description: 'A whole variable: one entry per value, labelled from the codebook.' } },
    },
    TableRequest: {
      type: 'object',
      required: ['SurveyCode', 'PopulationBaseCode', 'Rows', 'Columns'],
      additionalProperties: false,
      properties: {
        SurveyCode: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, example: 'GSS' },
        AuthorizationGroup: { type: 'string', nullable: true, minLength: 1, maxLength: MAX_NAME_LENGTH },
        PopulationBaseCode: { type: 'string', minLength: 1, maxLength: MAX_EXPRESSION_LENGTH, example: '*' },
        Rows: axis,
        Columns: axis,
        Weight: { type: 'string', nullable: true, minLength: 1, maxLength: MAX_NAME_LENGTH, description: "A weight column; null = unweighted; absent = the survey's first weight." },
        Statistics: { type: 'array', items: { type: 'string', enum: [...STAT_NAMES] }, description: 'Derived statistics per cell (vpct = column proportion, index, se, sig ...).' },
        Missing: {
          type: 'string',
          enum: ['show', 'hide'],
          description: 'show (default): each whole variable gets a "No answer" entry for the base\'s respondents with a blank answer, so its entries add up to the base; hide: no such entry.',
        },
        PercentBase: {
          type: 'string',
          enum: ['total', 'valid'],
          description: 'What the percentage statistics are of: total (default), every respondent of the base; valid, the respondents of the base who answered (the "No answer" entry is left out of the percentages\' base).',
        },
        ColumnGroups: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_AXIS,
          items: { type: 'array', minItems: 1, maxItems: MAX_AXIS, items: { type: 'integer', minimum: 0, maximum: MAX_AXIS - 1 } },
          description: 'Groups of columns to compare for sig (0-based indexes of the columns as the answer lists them, whole variables expanded); replaces the default groups (each whole variable\'s values). Columns may share respondents: the tests add their covariance.',
        },
      },
    },
    TableResponse: {
      type: 'object',
      required: ['ResultCode', 'ResultDescription', 'SurveyCode', 'AudienceReportUnits', 'Table'],
      additionalProperties: false,
      properties: {
        ResultCode: { type: 'integer', enum: [0] },
        ResultDescription: { type: 'string' },
        SurveyCode: { type: 'string' },
        AudienceReportUnits: { type: 'integer', minimum: 1 },
        Table: ref('TableDocument'),
      },
    },
    ...tableJsonSchemas(ref),
  };
  // Every TableRequest field is declared (the validator and the schema list the same names).
  void (TABLE_FIELDS satisfies readonly (keyof typeof schemas.TableRequest.properties)[]);
  return { paths, schemas };
}

let built: { maxBodyBytes: number; docs: ReturnType<typeof catalogOpenApi> } | undefined;

/** The fragment of one catalog operation (built once per maxBodyBytes), with every catalog schema. */
function fragment(path: string, method: string, settings: { maxBodyBytes: number }): RouteDocs {
  if (built === undefined || built.maxBodyBytes !== settings.maxBodyBytes) built = { maxBodyBytes: settings.maxBodyBytes, docs: catalogOpenApi(settings) };
  return { operation: built.docs.paths[path]?.[method] as Record<string, unknown>, schemas: built.docs.schemas };
}

export const listSurveysDocs = (settings: { maxBodyBytes: number }): RouteDocs => fragment('/surveys', 'get', settings);
export const describeSurveyDocs = (settings: { maxBodyBytes: number }): RouteDocs => fragment('/surveys/{SurveyCode}', 'get', settings);
export const tablesDocs = (settings: { maxBodyBytes: number }): RouteDocs => fragment('/tables', 'post', settings);
