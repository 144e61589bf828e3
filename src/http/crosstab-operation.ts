import { isCrosstabError, type CrosstabQuery, type CrosstabResult } from '../index.js';
import { serviceResponseJson } from '../facade/service-shape.js';
import { expandRequestAudiences } from './audience-expansion.js';
import { authorize, entitledToSurvey } from './auth.js';
import { validateCrosstabRequest } from './crosstab-request.js';
import type { CrosstabDataset } from './handler-types.js';
import type { AuthenticatedContext, RouteResult } from './route.js';
import { fromEngineError, isServiceError, quote, serviceError } from './service-error.js';

/** The surveys `key` is entitled to among those served: named only in refusals. */
function visibleSurveys(surveys: ReadonlyMap<string, unknown>, key: AuthenticatedContext['caller']): string[] {
  return [...surveys.keys()].filter((survey) => entitledToSurvey(key, survey));
}

/** The survey's catalog path, which error hints point at. */
function catalogPath(service: AuthenticatedContext['service'], survey: string): string {
  return `${service.basePath}/surveys/${encodeURIComponent(survey)}`;
}

/**
 * POST /crosstab, after the caller, Content-Type, size and JSON were checked (in that order,
 * by the handler): fields, survey entitlement, survey, group, expressions. So an unchanged
 * request fails identically. The 200 is billed (recorded by the handler before it is sent).
 */
export function crosstabOperation(context: AuthenticatedContext): RouteResult | Promise<RouteResult> {
  const { caller: key, entry, service } = context;
  const { surveys } = service;
  const body = validateCrosstabRequest(context.json);
  if (isServiceError(body)) return body;
  entry.survey = body.SurveyCode.slice(0, 64);

  if (!entitledToSurvey(key, body.SurveyCode)) {
    // Not entitled: 403 whether or not the survey exists, so keys cannot probe for surveys.
    return serviceError('forbidden_survey', `This API key is not entitled to survey ${quote(body.SurveyCode)}.`, `The key is entitled to: ${visibleSurveys(surveys, key).join(', ') || 'no survey served here'}. Ask the provider to license the survey for your key.`, 'SurveyCode');
  }
  const dataset = surveys.get(body.SurveyCode);
  if (dataset === undefined) {
    return serviceError('unknown_survey', `No survey ${quote(body.SurveyCode)} is served here.`, `Use one of: ${visibleSurveys(surveys, key).join(', ')} (SurveyCodes are case-sensitive).`, 'SurveyCode');
  }
  entry.datasetVersion = dataset.info.checksum;
  const access = authorize(key, dataset.info, body.AuthorizationGroup);
  if (isServiceError(access)) return access;

  // Expressions naming no saved audience (no `@`) are used as they are, without the expansion's await.
  if (!body.PopulationBaseCode.includes('@') && body.TargetCodes.every((text) => !text.includes('@'))) {
    return crosstabAnswer(context, dataset, body, body.PopulationBaseCode, body.TargetCodes, access.allowedGroups, undefined);
  }
  // Held while its audiences are read: a reload meanwhile lets the request finish on this version.
  const release = dataset.hold?.();
  return expandRequestAudiences({
    store: service.audiences,
    caller: key,
    dataset,
    allowedGroups: access.allowedGroups,
    expressions: [
      { text: body.PopulationBaseCode, field: 'PopulationBaseCode', label: 'PopulationBaseCode' },
      ...body.TargetCodes.map((text, i) => ({ text, field: 'TargetCodes', label: `TargetCodes[${i}]` })),
    ],
    catalog: catalogPath(service, body.SurveyCode),
  }).then(
    (expanded) => {
      if (isServiceError(expanded)) {
        release?.();
        return expanded;
      }
      const [base, ...targets] = expanded as [string, ...string[]];
      return crosstabAnswer(context, dataset, body, base, targets, access.allowedGroups, release);
    },
    (error: unknown) => {
      release?.();
      throw error;
    },
  );
}

/**
 * The engine's answer as the operation's result: at once when the dataset answers from memory
 * (crosstabNow: no promise made on the way), else once its promise settles. `release` ends the
 * request's hold on the dataset once the call is in flight.
 */
function crosstabAnswer(
  context: AuthenticatedContext,
  dataset: CrosstabDataset,
  body: { SurveyCode: string; TargetCodes: string[] },
  base: string,
  targets: string[],
  allowedGroups: string[] | undefined,
  release: (() => void) | undefined,
): RouteResult | Promise<RouteResult> {
  const query: CrosstabQuery = allowedGroups === undefined ? { base, targets } : { base, targets, allowedGroups };
  const refused = (error: unknown): RouteResult => {
    if (!isCrosstabError(error)) throw error;
    return fromEngineError(error, catalogPath(context.service, body.SurveyCode), body.SurveyCode);
  };
  const answered = (result: CrosstabResult): RouteResult => ({ body: serviceResponseJson(result), usage: { survey: body.SurveyCode, targets: body.TargetCodes.length, operation: 'crosstab' } });
  let pending: CrosstabResult | Promise<CrosstabResult>;
  try {
    pending = dataset.crosstabNow === undefined ? dataset.crosstab(query) : dataset.crosstabNow(query);
  } catch (error) {
    release?.();
    return refused(error);
  }
  // The call is in flight (a draining close waits for it), or answered: the hold has done its part.
  release?.();
  return pending instanceof Promise ? pending.then(answered, refused) : answered(pending);
}
