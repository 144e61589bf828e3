import { isCrosstabError, toServiceResponse, type CrosstabResult } from '../index.js';
import { AUTH_HEADER, authenticate, authenticateBearer, authorize, entitledToSurvey } from './auth.js';
import type { AuthFailureLimiter } from './auth-failures.js';
import { clientAddress, type ProxyTrust } from './client-address.js';
import { API_KEY_PATTERN } from './key-file.js';
import { parseJsonBody, validateCrosstabRequest } from './crosstab-request.js';
import type { AccessLogEntry, CrosstabDataset, HandlerRequest } from './handler-types.js';
import { headerOf, isJsonContentType } from './headers.js';
import type { KeyStore } from './key-store.js';
import { fromEngineError, fromThrown, isServiceError, quote, serviceError, type ServiceError } from './service-error.js';
import type { UsageSink } from './usage-ledger.js';

/** Answers POST /crosstab: the 200 body, or the error that refused the request. */
export type CrosstabOperation = (request: HandlerRequest, requestId: string, entry: AccessLogEntry) => Promise<ServiceError | string>;

/**
 * POST /crosstab, checks in a fixed order (so an unchanged request fails identically):
 * key, Content-Type, size, JSON, fields, survey entitlement, survey, group, expressions.
 * Usage is recorded (durably) before the result is returned, and only for a result.
 */
export function createCrosstabOperation(context: {
  surveys: ReadonlyMap<string, CrosstabDataset>;
  keys: KeyStore;
  usage: UsageSink;
  maxBodyBytes: number;
  proxies: ProxyTrust;
  authFailures: AuthFailureLimiter;
  /** Mount path: hints point at GET {basePath}/surveys/{SurveyCode}. */
  basePath: string;
}): CrosstabOperation {
  const { surveys, keys, usage, maxBodyBytes, proxies, authFailures, basePath } = context;
  return async (request, requestId, entry) => {
    const authorization = headerOf(request.headers, 'authorization');
    const keyHeader = headerOf(request.headers, AUTH_HEADER);
    const bearer = authorization !== undefined && keys.lookupBearer !== undefined && keyHeader === undefined;
    // A well-formed key is looked up (a database query when not cached): counted per address when it fails.
    const apiKey = bearer ? undefined : keyHeader?.trim();
    const lookedUp = apiKey !== undefined && API_KEY_PATTERN.test(apiKey);
    const address = lookedUp ? clientAddress(request, proxies) : '';
    if (lookedUp && !(keys.knows?.(apiKey) ?? false)) {
      const wait = authFailures.retryAfter(address);
      if (wait !== undefined) {
        return {
          ...serviceError(
            'too_many_failed_keys',
            `Too many requests with an unknown, revoked or expired API key from your address (${authFailures.maxFailures} within ${authFailures.windowMs / 1000} s).`,
            'Check the key your client sends (the developer portal lists your keys) and retry after the Retry-After header\'s seconds.',
          ),
          retryAfterSeconds: wait,
        };
      }
    }
    // Awaited only when the store is asynchronous this time (a key not in its cache): a
    // settled value costs no extra turn of the event loop.
    const identified = bearer
      ? authenticateBearer(authorization as string, (token) => (keys.lookupBearer as NonNullable<KeyStore['lookupBearer']>).call(keys, token))
      : authenticate(keyHeader, { cookie: headerOf(request.headers, 'cookie') !== undefined, authorization: authorization !== undefined }, keys);
    const key = identified instanceof Promise ? await identified : identified;
    if (isServiceError(key)) {
      if (lookedUp) authFailures.recordFailure(address);
      return key;
    }
    entry.keyId = key.id;
    const admission = keys.admit === undefined ? undefined : keys.admit(key);
    const refusal = admission instanceof Promise ? await admission : admission;
    if (refusal !== undefined) {
      const hint = refusal.code === 'rate_limited' ? 'Slow down: retry after the Retry-After header\'s seconds; ask the provider for a higher contracted rate.' : 'Retry after the Retry-After header\'s seconds (the next month), or ask the provider to raise the quota.';
      return { ...serviceError(refusal.code, refusal.message, hint), retryAfterSeconds: refusal.retryAfterSeconds };
    }

    if (!isJsonContentType(headerOf(request.headers, 'content-type'))) {
      return serviceError('unsupported_media_type', 'Content-Type must be application/json.', 'Send the body as JSON with the header `Content-Type: application/json`.');
    }
    const declaredLength = Number(headerOf(request.headers, 'content-length') ?? 0);
    const bodyLength = typeof request.body === 'string' ? Buffer.byteLength(request.body) : (request.body?.byteLength ?? 0);
    if (declaredLength > maxBodyBytes || bodyLength > maxBodyBytes) {
      return serviceError('payload_too_large', `The request body is larger than ${maxBodyBytes} bytes.`, 'A CrosstabRequest is small: send one survey, one population base and 1 to 2 target codes.');
    }
    const parsed = parseJsonBody(request.body);
    if (isServiceError(parsed)) return parsed;
    const body = validateCrosstabRequest(parsed.json);
    if (isServiceError(body)) return body;
    entry.survey = body.SurveyCode.slice(0, 64);

    // Named only in the two refusals below; not computed for a request that passes.
    const visible = (): string[] => [...surveys.keys()].filter((survey) => entitledToSurvey(key, survey));
    if (!entitledToSurvey(key, body.SurveyCode)) {
      // Not entitled: 403 whether or not the survey exists, so keys cannot probe for surveys.
      return serviceError('forbidden_survey', `This API key is not entitled to survey ${quote(body.SurveyCode)}.`, `The key is entitled to: ${visible().join(', ') || 'no survey served here'}. Ask the provider to license the survey for your key.`, 'SurveyCode');
    }
    const dataset = surveys.get(body.SurveyCode);
    if (dataset === undefined) {
      return serviceError('unknown_survey', `No survey ${quote(body.SurveyCode)} is served here.`, `Use one of: ${visible().join(', ')} (SurveyCodes are case-sensitive).`, 'SurveyCode');
    }
    const access = authorize(key, dataset.info, body.AuthorizationGroup);
    if (isServiceError(access)) return access;

    let result: CrosstabResult;
    try {
      result = await dataset.crosstab({
        base: body.PopulationBaseCode,
        targets: body.TargetCodes,
        ...(access.allowedGroups === undefined ? {} : { allowedGroups: access.allowedGroups }),
      });
    } catch (error) {
      if (!isCrosstabError(error)) throw error;
      return fromEngineError(error, `${basePath}/surveys/${encodeURIComponent(body.SurveyCode)}`);
    }
    const response = JSON.stringify(toServiceResponse(result));
    try {
      await usage.record({
        time: new Date().toISOString(),
        requestId,
        keyId: key.id,
        survey: body.SurveyCode,
        targets: body.TargetCodes.length,
        operation: 'crosstab',
        ...(key.accountId === undefined ? {} : { accountId: key.accountId }),
      });
    } catch (error) {
      // A store that is unavailable says so once in its own event; any other failure is logged here.
      const known = fromThrown(error);
      if (known !== undefined) return known;
      entry.error = (error as Error).stack ?? String(error);
      return serviceError('unavailable', 'The usage of this request could not be recorded; it was not billed.', 'Retry later; if it persists, report the X-Request-Id response header to the provider.');
    }
    return response;
  };
}
