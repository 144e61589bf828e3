import type { DatasetInfo } from '../index.js';
import { ALL } from './crosstab-request.js';
import { API_KEY_PATTERN, keyStatus, type ApiKeyRecord } from './key-file.js';
import type { KeyStore } from '../keys/index.js';
import { quote, serviceError, type ServiceError } from './service-error.js';

/** The request header carrying the API key. */
export const AUTH_HEADER = 'Service-Engine-Authorizer';

const NEW_KEY_HINT = 'Do not retry with the same value: send a valid API key from the developer portal in the Service-Engine-Authorizer header.';

function unauthorized(message: string, hint = NEW_KEY_HINT): ServiceError {
  return serviceError('unauthorized', message, hint);
}

/**
 * Establishes the caller's identity from the Service-Engine-Authorizer header. Any other
 * credential (a portal session cookie, an Authorization header) is refused with 401.
 * Synchronous when the key store answers synchronously (a cached key).
 */
export function authenticate(
  headerValue: string | undefined,
  otherCredentials: { cookie: boolean; authorization: boolean },
  keys: KeyStore,
): ApiKeyRecord | ServiceError | Promise<ApiKeyRecord | ServiceError> {
  const apiKey = headerValue?.trim();
  if (apiKey === undefined || apiKey === '') {
    if (otherCredentials.cookie) {
      return unauthorized(
        'A portal session cookie is not accepted by the API; the Service-Engine-Authorizer header is missing.',
        'Create an API key in the developer portal and send it in the Service-Engine-Authorizer header from your server; never from a browser session.',
      );
    }
    if (otherCredentials.authorization) {
      return unauthorized('The Authorization header is not used by this API; the Service-Engine-Authorizer header is missing.', 'Send the API key as `Service-Engine-Authorizer: <key>`, without a "Bearer" prefix.');
    }
    return unauthorized('The Service-Engine-Authorizer header is missing.', 'Send the API key as `Service-Engine-Authorizer: <key>`.');
  }
  if (!API_KEY_PATTERN.test(apiKey)) {
    return unauthorized('The Service-Engine-Authorizer header is malformed: an API key is "ctk_" followed by 43 base64url characters.', 'Send the API key exactly as issued, with no prefix such as "Bearer".');
  }
  const record = keys.lookup(apiKey);
  return record instanceof Promise ? record.then(checkKey) : checkKey(record);
}

function checkKey(record: ApiKeyRecord | undefined): ApiKeyRecord | ServiceError {
  if (record === undefined) return unauthorized('The API key is not valid (unknown or revoked).');
  const status = keyStatus(record);
  if (status === 'revoked') return unauthorized('The API key is not valid (unknown or revoked).');
  if (status === 'expired') return unauthorized(`The API key expired at ${record.expiresAt}.`);
  return record;
}

/** Establishes the caller from `Authorization: Bearer <access token>` (single sign-on). */
export async function authenticateBearer(headerValue: string, lookup: (token: string) => Promise<ApiKeyRecord | { problem: string }>): Promise<ApiKeyRecord | ServiceError> {
  const hint = 'Request a new access token from your identity provider (e.g. the client credentials grant) for this API\'s audience, and send it as `Authorization: Bearer <token>`.';
  const match = /^Bearer +([A-Za-z0-9_.~+/=-]+)$/i.exec(headerValue.trim());
  if (match === null) return unauthorized('The Authorization header must be `Bearer <access token>`.', hint);
  const caller = await lookup(match[1] as string);
  return 'problem' in caller ? unauthorized(caller.problem, hint) : caller;
}

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
