import { isCrosstabError, type CrosstabResult } from '../index.js';
import { serviceResponseJson } from '../facade/service-shape.js';
import { expandRequestAudiences } from './audience-expansion.js';
import { authorize, entitledToSurvey } from './auth.js';
import { validateCrosstabRequest } from './crosstab-request.js';
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
export async function crosstabOperation(context: AuthenticatedContext): Promise<RouteResult> {
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
  let base: string;
  let targets: string[];
  // Held while its audiences are read: a reload meanwhile lets the request finish on this version.
  let release: (() => void) | undefined;
  if (!body.PopulationBaseCode.includes('@') && body.TargetCodes.every((text) => !text.includes('@'))) {
    base = body.PopulationBaseCode;
    targets = body.TargetCodes;
  } else {
    release = dataset.hold?.();
    const expanded = await expandRequestAudiences({
      store: service.audiences,
      caller: key,
      dataset,
      allowedGroups: access.allowedGroups,
      expressions: [
        { text: body.PopulationBaseCode, field: 'PopulationBaseCode', label: 'PopulationBaseCode' },
        ...body.TargetCodes.map((text, i) => ({ text, field: 'TargetCodes', label: `TargetCodes[${i}]` })),
      ],
      catalog: catalogPath(service, body.SurveyCode),
    }).catch((error: unknown) => {
      release?.();
      throw error;
    });
    if (isServiceError(expanded)) {
      release?.();
      return expanded;
    }
    [base, ...targets] = expanded as [string, ...string[]];
  }

  let result: CrosstabResult;
  try {
    const pending = dataset.crosstab(access.allowedGroups === undefined ? { base, targets } : { base, targets, allowedGroups: access.allowedGroups });
    // The call is in flight (a draining close waits for it): the hold has done its part.
    release?.();
    result = await pending;
  } catch (error) {
    release?.();
    if (!isCrosstabError(error)) throw error;
    return fromEngineError(error, catalogPath(service, body.SurveyCode));
  }
  return { body: serviceResponseJson(result), usage: { survey: body.SurveyCode, targets: body.TargetCodes.length, operation: 'crosstab' } };
}
