import type { DatasetInfo } from '../index.js';
import { ALL } from './crosstab-request.js';
import type { ApiKeyRecord } from './key-file.js';
import { quote, serviceError, type ServiceError } from './service-error.js';

/** The request header carrying the API key. */
export const AUTH_HEADER = 'Service-Engine-Authorizer';

/** The realm the WWW-Authenticate challenges of a 401 name: one protection space for the whole API. */
export const AUTH_REALM = 'crosstab';

/**
 * Checks that the key may query `info.survey` with `requestedGroup`, and returns the groups
 * the engine may use (`undefined` = no restriction).
 */
export function authorize(key: ApiKeyRecord, info: DatasetInfo, requestedGroup: string | undefined): { allowedGroups: string[] | undefined } | ServiceError {
  const groups = key.groupsBySurvey?.[info.survey] ?? key.groups;
  const everyGroup = groups.includes(ALL);
  const entitledGroups = everyGroup ? info.groups : info.groups.filter((group) => groups.includes(group));
  if (entitledGroups.length === 0) {
    // A key whose groups do not exist in this survey may use nothing of it, not even "*".
    return serviceError(
      'forbidden_survey',
      `This API key is not entitled to any authorization group of survey ${info.survey}.`,
      'Ask the provider to extend the key to a group of this survey.',
      'AuthorizationGroup',
    );
  }
  if (requestedGroup === undefined || requestedGroup === ALL) {
    return { allowedGroups: everyGroup ? undefined : entitledGroups };
  }
  if (!everyGroup && !groups.includes(requestedGroup)) {
    return serviceError(
      'forbidden_survey',
      `This API key is not entitled to authorization group ${quote(requestedGroup)} of survey ${info.survey}.`,
      `Use one of the groups the key is entitled to (${entitledGroups.join(', ') || 'none in this survey'}) or "_ALL_", or ask the provider to extend the key.`,
      'AuthorizationGroup',
    );
  }
  if (!info.groups.includes(requestedGroup)) {
    return serviceError(
      'unknown_authorization_group',
      `Survey ${info.survey} has no authorization group ${quote(requestedGroup)}.`,
      `Use one of ${entitledGroups.join(', ')} or "_ALL_" (group names are case-sensitive).`,
      'AuthorizationGroup',
    );
  }
  return { allowedGroups: [requestedGroup] };
}

/** Whether the key may query this survey at all. */
export function entitledToSurvey(key: ApiKeyRecord, survey: string): boolean {
  return key.surveys.includes(ALL) || key.surveys.includes(survey);
}
