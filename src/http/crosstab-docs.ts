import { ConditionalResult } from '../index.js';
import { ALL, MAX_EXPRESSION_LENGTH, MAX_NAME_LENGTH, MAX_TARGET_CODES, MIN_TARGET_CODES } from './crosstab-request.js';
import { corsHeaders, datasetVersionHeader, errorResponses } from './openapi-parts.js';
import type { RouteDocs } from './route.js';

/** The OpenAPI fragment of POST /crosstab: its operation and the schemas it refers to. */
export function crosstabDocs(settings: { maxBodyBytes: number }): RouteDocs {
  return {
    operation: {
      operationId: 'crosstab',
      summary: 'Weighted audience, respondents and stability of 1 to 2 target codes within a population base.',
      tags: ['crosstab'],
      security: [{ ServiceEngineAuthorizer: [] }, { OidcBearer: [] }],
      requestBody: {
        required: true,
        description: `At most ${settings.maxBodyBytes} bytes.`,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/CrosstabRequest' } } },
      },
      responses: {
        200: {
          description: 'One result per target code, in request order. Billed.',
          headers: { ...corsHeaders, ...datasetVersionHeader },
          content: { 'application/json': { schema: { $ref: '#/components/schemas/CrosstabResponse' } } },
        },
        ...errorResponses([400, 401, 403, 408, 413, 415, 429, 500, 503]),
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
    },
  };
}
