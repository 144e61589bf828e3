/** The OpenAPI fragments of the audiences operations. */
import { MAX_AUDIENCE_DEPTH } from '../index.js';
import { MAX_AUDIENCE_LABEL } from './audiences-operation.js';
import { MAX_EXPRESSION_LENGTH, MAX_NAME_LENGTH } from './crosstab-request.js';
import { corsHeaders, errorResponses } from './openapi-parts.js';
import type { RouteDocs } from './route.js';

const security = [{ ServiceEngineAuthorizer: [] }, { OidcBearer: [] }];
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const idParameter = { name: 'AudienceId', in: 'path', required: true, schema: { type: 'string', pattern: '^aud_[0-9a-f]{16}$' }, example: 'aud_0123456789abcdef' };
const free = 'Free (never billed), counted against the account\'s rate limit.';
const name = {
  type: 'string',
  pattern: '^[a-z0-9][a-z0-9_-]{0,63}$',
  description: 'Written `@name` in any expression (`@heavy-streamers AND region=3`): 1 to 64 lower-case letters, digits, `-` and `_`. A bare term starting with `@` is always an audience; a variable or code whose name starts with `@` is written in double quotes.',
  example: 'women-25-40',
};

const schemas = {
  Audience: {
    type: 'object',
    required: ['AudienceId', 'SurveyCode', 'Name', 'Reference', 'Expression', 'Label', 'Shared', 'Owner', 'Editable', 'Usable', 'CreatedAt', 'UpdatedAt'],
    additionalProperties: false,
    properties: {
      AudienceId: { type: 'string', pattern: '^aud_[0-9a-f]{16}$' },
      SurveyCode: { type: 'string' },
      Name: name,
      Reference: { type: 'string', description: 'How expressions refer to it: `@` and the name.', example: '@women-25-40' },
      Expression: { type: 'string', nullable: true, description: 'Its expression; null when it, or an audience it uses, uses variables outside the caller\'s authorization groups (using it is then refused).' },
      Label: { type: 'string', nullable: true },
      Shared: { type: 'boolean', description: 'Seen and used by every caller of the account; else only by the user who saved it.' },
      Owner: { type: 'string', nullable: true, description: 'E-mail of the user who saved it; null when it belongs to the account (saved by a key of no user or single sign-on).' },
      Editable: { type: 'boolean', description: 'Whether the caller may edit and delete it (its owner; anyone of the account for one the account owns).' },
      Usable: { type: 'boolean', description: "Whether its variables, and those of the audiences it uses, are all within the caller's authorization groups, and those audiences are there without a loop (else using it is refused)." },
      CreatedAt: { type: 'string', format: 'date-time' },
      UpdatedAt: { type: 'string', format: 'date-time' },
    },
  },
  AudienceList: {
    type: 'object',
    required: ['Audiences', 'MaxPerAccount'],
    properties: { Audiences: { type: 'array', items: ref('Audience') }, MaxPerAccount: { type: 'integer', description: 'Most audiences the account may hold, all surveys together.' } },
  },
  AudienceRequest: {
    type: 'object',
    additionalProperties: false,
    properties: {
      SurveyCode: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH, description: 'Required on POST; on PUT, if given, must be the audience\'s own.' },
      Name: name,
      Expression: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_EXPRESSION_LENGTH,
        description: `An expression of the survey, checked now against its data and the caller's groups; it may use other audiences (@name; at most ${MAX_AUDIENCE_DEPTH} deep, no cycles; a shared audience only shared ones).`,
        example: 'sex=2 AND age=25..40',
      },
      Label: { type: 'string', nullable: true, maxLength: MAX_AUDIENCE_LABEL },
      Shared: { type: 'boolean', default: false, description: 'Share with every caller of the account. A key of no user can save shared audiences only.' },
    },
  },
};

const audienceAnswer = (description: string) => ({ description, headers: corsHeaders, content: { 'application/json': { schema: ref('Audience') } } });

export const createAudienceDocs = (settings: { maxBodyBytes: number }): RouteDocs => ({
  operation: {
    operationId: 'createAudience',
    summary: `Saves an audience: an expression of a survey, used by name as @name in the expressions of every request afterwards. ${free}`,
    tags: ['audiences'],
    security,
    requestBody: { required: true, description: `At most ${settings.maxBodyBytes} bytes; SurveyCode, Name and Expression required.`, content: { 'application/json': { schema: ref('AudienceRequest') } } },
    responses: { 201: { ...audienceAnswer('The saved audience.'), headers: { ...corsHeaders, Location: { description: 'Its URL.', schema: { type: 'string' } } } }, ...errorResponses([400, 401, 403, 404, 409, 413, 415, 429, 500, 503]) },
  },
  schemas,
});

export const listAudiencesDocs = (): RouteDocs => ({
  operation: {
    operationId: 'listAudiences',
    summary: `The audiences the caller may use: their own and those shared in their account. ${free}`,
    tags: ['audiences'],
    security,
    parameters: [{ name: 'SurveyCode', in: 'query', required: false, schema: { type: 'string', minLength: 1, maxLength: MAX_NAME_LENGTH }, description: 'Only this survey\'s.' }],
    responses: { 200: { description: 'By survey and name.', headers: corsHeaders, content: { 'application/json': { schema: ref('AudienceList') } } }, ...errorResponses([401, 403, 404, 429, 500, 503]) },
  },
  schemas,
});

export const getAudienceDocs = (): RouteDocs => ({
  operation: { operationId: 'getAudience', summary: `One audience. ${free}`, tags: ['audiences'], security, parameters: [idParameter], responses: { 200: audienceAnswer('The audience.'), ...errorResponses([401, 403, 404, 429, 500, 503]) } },
  schemas,
});

export const updateAudienceDocs = (settings: { maxBodyBytes: number }): RouteDocs => ({
  operation: {
    operationId: 'updateAudience',
    summary: `Edits an audience (fields left out keep their value); every use afterwards sees the new expression. Only its owner. ${free}`,
    tags: ['audiences'],
    security,
    parameters: [idParameter],
    requestBody: { required: true, description: `At most ${settings.maxBodyBytes} bytes.`, content: { 'application/json': { schema: ref('AudienceRequest') } } },
    responses: { 200: audienceAnswer('The audience as saved.'), ...errorResponses([400, 401, 403, 404, 409, 413, 415, 429, 500, 503]) },
  },
  schemas,
});

export const deleteAudienceDocs = (): RouteDocs => ({
  operation: {
    operationId: 'deleteAudience',
    summary: `Deletes an audience; expressions that use it are refused afterwards (unknown_audience). Only its owner. ${free}`,
    tags: ['audiences'],
    security,
    parameters: [idParameter],
    responses: { 204: { description: 'Deleted.', headers: corsHeaders }, ...errorResponses([401, 403, 404, 429, 500, 503]) },
  },
  schemas,
});
