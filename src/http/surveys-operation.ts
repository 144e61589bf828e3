import { entitledToSurvey } from './auth.js';
import { identifyCaller, type CallerContext } from './caller.js';
import { MAX_NAME_LENGTH } from './crosstab-request.js';
import type { AccessLogEntry, HandlerRequest } from './handler-types.js';
import { headerOf } from './headers.js';
import { sha256 } from './key-file.js';
import type { OperationReply } from './operation-reply.js';
import { quote, serviceError, isServiceError, type ServiceError } from './service-error.js';
import { callerGroups, surveyDetail, surveySummary, type CatalogDataset } from './survey-catalog.js';

/** GET /surveys (`surveyCode` undefined) or GET /surveys/{SurveyCode} (the path segment, still percent-encoded). */
export type SurveysOperation = (request: HandlerRequest, surveyCode: string | undefined, entry: AccessLogEntry) => Promise<OperationReply | ServiceError>;

/** Seconds a client may use a catalog answer without asking again (then If-None-Match makes asking cheap). */
export const CATALOG_MAX_AGE_SECONDS = 60;

/** Most catalog bodies kept (per survey and set of groups): a dataset never changes. */
const MAX_CACHED_BODIES = 256;

/**
 * The survey catalog: which surveys the caller licenses, and one survey's variables, values,
 * ranges, codes and weights within the caller's authorization groups. Authenticated like POST
 * /crosstab and counted against the account's rate limit, never billed. Answers carry an ETag
 * (a hash of the body, which depends on the caller's rights) and `Cache-Control: private`;
 * If-None-Match with the current ETag gets 304 with no body.
 */
export function createSurveysOperation(context: CallerContext & { surveys: ReadonlyMap<string, CatalogDataset> }): SurveysOperation {
  const { surveys } = context;
  const details = new Map<string, Tagged>();

  const detailBody = (dataset: CatalogDataset, groups: string[]): Tagged => {
    const cacheKey = JSON.stringify([dataset.info.survey, groups]);
    let tagged = details.get(cacheKey);
    if (tagged === undefined) {
      tagged = tag(JSON.stringify(surveyDetail(dataset, groups)));
      if (details.size >= MAX_CACHED_BODIES) details.clear();
      details.set(cacheKey, tagged);
    }
    return tagged;
  };

  return async (request, surveyCode, entry) => {
    const key = await identifyCaller(context, request, entry, false);
    if (isServiceError(key)) return key;
    const usable = (dataset: CatalogDataset): boolean => entitledToSurvey(key, dataset.info.survey) && callerGroups(key, dataset.info) !== undefined;
    let answer: Tagged;
    if (surveyCode === undefined) {
      answer = tag(JSON.stringify({ Surveys: [...surveys.values()].filter(usable).map((dataset) => surveySummary(dataset.info)) }));
    } else {
      const code = decodeSegment(surveyCode);
      if (isServiceError(code)) return code;
      entry.survey = code.slice(0, 64);
      const listed = (): string => [...surveys.values()].filter(usable).map((dataset) => dataset.info.survey).join(', ') || 'no survey served here';
      if (!entitledToSurvey(key, code)) {
        // 403 whether or not the survey exists, so keys cannot probe for surveys.
        return serviceError('forbidden_survey', `This API key is not entitled to survey ${quote(code)}.`, `The key is entitled to: ${listed()}. Ask the provider to license the survey for your key.`, 'SurveyCode');
      }
      const dataset = surveys.get(code);
      if (dataset === undefined) return serviceError('not_found', `No survey ${quote(code)} is served here.`, `Use one of: ${listed()} (SurveyCodes are case-sensitive); GET /surveys lists them.`, 'SurveyCode');
      const groups = callerGroups(key, dataset.info);
      if (groups === undefined) {
        return serviceError('forbidden_survey', `This API key is not entitled to any authorization group of survey ${dataset.info.survey}.`, 'Ask the provider to extend the key to a group of this survey.', 'SurveyCode');
      }
      answer = detailBody(dataset, groups);
    }
    const headers = { etag: answer.etag, 'cache-control': `private, max-age=${CATALOG_MAX_AGE_SECONDS}`, vary: 'Service-Engine-Authorizer, Authorization' };
    if (matchesETag(headerOf(request.headers, 'if-none-match'), answer.etag)) return { status: 304, headers, body: '' };
    return { status: 200, headers, body: answer.body };
  };
}

/** A catalog body and its entity tag (a hash of the body, which depends on the caller's rights). */
interface Tagged {
  body: string;
  etag: string;
}

function tag(body: string): Tagged {
  return { body, etag: `"${sha256(body, 'hex').slice(0, 32)}"` };
}

/** The SurveyCode of the path, percent-decoded. */
function decodeSegment(segment: string): string | ServiceError {
  let code: string;
  try {
    code = decodeURIComponent(segment);
  } catch {
    return serviceError('invalid_request', `The SurveyCode in the path is not valid percent-encoding: ${quote(segment)}.`, 'Percent-encode the SurveyCode as UTF-8 (encodeURIComponent).', 'SurveyCode');
  }
  if (code.length === 0 || code.length > MAX_NAME_LENGTH) {
    return serviceError('invalid_request', `SurveyCode must be 1 to ${MAX_NAME_LENGTH} characters long; got ${code.length}.`, 'GET /surveys lists the SurveyCodes of your key.', 'SurveyCode');
  }
  return code;
}

/** If-None-Match: `*`, or a list of entity tags (weak ones compared by their opaque part). */
function matchesETag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag;
  });
}
