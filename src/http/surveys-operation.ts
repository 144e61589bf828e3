import { audienceViewer } from './audience-expansion.js';
import { audienceJson } from './audiences-operation.js';
import { entitledToSurvey } from './auth.js';
import { MAX_NAME_LENGTH } from './crosstab-request.js';
import { headerOf, matchesETag } from './headers.js';
import { sha256 } from './key-file.js';
import type { OperationReply } from './operation-reply.js';
import type { AuthenticatedContext } from './route.js';
import { quote, serviceError, type ServiceError } from './service-error.js';
import { callerGroups, surveyDetail, surveySummary, type CatalogDataset } from './survey-catalog.js';

/** Seconds a client may use a catalog answer without asking again (then If-None-Match makes asking cheap). */
export const CATALOG_MAX_AGE_SECONDS = 60;

/** Most catalog bodies kept per dataset (one per set of groups): a dataset never changes. */
const MAX_CACHED_BODIES = 256;

/** A catalog body and its entity tag (a hash of the body, which depends on the caller's rights). */
interface Tagged {
  body: string;
  etag: string;
}

const details = new WeakMap<CatalogDataset, Map<string, Tagged>>();

function detailBody(dataset: CatalogDataset, groups: string[]): Tagged {
  let cache = details.get(dataset);
  if (cache === undefined) details.set(dataset, (cache = new Map()));
  const cacheKey = JSON.stringify(groups);
  let tagged = cache.get(cacheKey);
  if (tagged === undefined) {
    tagged = tag(JSON.stringify(surveyDetail(dataset, groups)));
    if (cache.size >= MAX_CACHED_BODIES) cache.clear();
    cache.set(cacheKey, tagged);
  }
  return tagged;
}

/**
 * The survey catalog: which surveys the caller licenses (GET /surveys), and one survey's
 * variables, values, ranges, codes and weights within the caller's authorization groups (GET
 * /surveys/{SurveyCode}). Routes with a caller, never billed (counted against the account's
 * rate limit only). Answers carry an ETag (a hash of the body, which depends on the caller's
 * rights) and `Cache-Control: private`; If-None-Match with the current ETag gets 304.
 */
export function surveysOperation(context: AuthenticatedContext): OperationReply {
  const { caller: key, request, service } = context;
  const surveys = service.surveys as ReadonlyMap<string, CatalogDataset>;
  const usable = (dataset: CatalogDataset): boolean => entitledToSurvey(key, dataset.info.survey) && callerGroups(key, dataset.info) !== undefined;
  return reply(context, tag(JSON.stringify({ Surveys: [...surveys.values()].filter(usable).map((dataset) => surveySummary(dataset.info)) })));
}

/** GET /surveys/{SurveyCode}: see surveysOperation. Lists the caller's audiences of the survey where the service keeps them. */
export async function surveyOperation(context: AuthenticatedContext): Promise<OperationReply | ServiceError> {
  const { caller: key, service, entry } = context;
  const surveys = service.surveys as ReadonlyMap<string, CatalogDataset>;
  const code = context.params['SurveyCode'] ?? '';
  if (code.length === 0 || code.length > MAX_NAME_LENGTH) {
    return serviceError('invalid_request', `SurveyCode must be 1 to ${MAX_NAME_LENGTH} characters long; got ${code.length}.`, 'GET /surveys lists the SurveyCodes of your key.', 'SurveyCode');
  }
  entry.survey = code.slice(0, 64);
  const usable = (dataset: CatalogDataset): boolean => entitledToSurvey(key, dataset.info.survey) && callerGroups(key, dataset.info) !== undefined;
  const listed = (): string => [...surveys.values()].filter(usable).map((dataset) => dataset.info.survey).join(', ') || 'no survey served here';
  if (!entitledToSurvey(key, code)) {
    // 403 whether or not the survey exists, so keys cannot probe for surveys.
    return serviceError('forbidden_survey', `This API key is not entitled to survey ${quote(code)}.`, `The key is entitled to: ${listed()}. Ask the provider to license the survey for your key.`, 'SurveyCode');
  }
  const dataset = surveys.get(code);
  if (dataset === undefined) return serviceError('not_found', `No survey ${quote(code)} is served here.`, `Use one of: ${listed()} (SurveyCodes are case-sensitive); GET /surveys lists them.`, 'SurveyCode');
  entry.datasetVersion = dataset.info.checksum;
  const groups = callerGroups(key, dataset.info);
  if (groups === undefined) {
    return serviceError('forbidden_survey', `This API key is not entitled to any authorization group of survey ${dataset.info.survey}.`, 'Ask the provider to extend the key to a group of this survey.', 'SurveyCode');
  }
  const detail = detailBody(dataset, groups);
  const viewer = audienceViewer(key);
  if (service.audiences === undefined || viewer === undefined) return reply(context, detail);
  const saved = await service.audiences.list(viewer, code);
  const audiences = saved.map((audience) => audienceJson(context, viewer, audience, saved));
  // The cached detail is one JSON object: its audiences go in before its closing brace.
  return reply(context, tag(`${detail.body.slice(0, -1)},"Audiences":${JSON.stringify(audiences)}}`));
}

function reply(context: AuthenticatedContext, answer: Tagged): OperationReply {
  const headers = { etag: answer.etag, 'cache-control': `private, max-age=${CATALOG_MAX_AGE_SECONDS}`, vary: 'Service-Engine-Authorizer, Authorization' };
  if (matchesETag(headerOf(context.request.headers, 'if-none-match'), answer.etag)) return { status: 304, headers, body: '' };
  return { status: 200, headers, body: answer.body };
}

function tag(body: string): Tagged {
  return { body, etag: `"${sha256(body, 'hex').slice(0, 32)}"` };
}
