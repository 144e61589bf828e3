import type { Authenticator } from './authenticator.js';
import { authenticateWith } from './authenticators.js';
import type { AccessLogEntry, HandlerRequest } from './handler-types.js';
import type { ApiKeyRecord } from './key-file.js';
import type { AdmissionRefusal, KeyStore } from './key-store.js';
import { isServiceError, serviceError, type ServiceError } from './service-error.js';

/**
 * Establishes and admits the caller of a route with `auth: true`; `billed` says whether the
 * route's 200 is billed (a free call counts against the rate limit only, not the monthly quota).
 */
export type CallerCheck = (request: HandlerRequest, entry: AccessLogEntry, billed: boolean, identified?: ApiKeyRecord) => ApiKeyRecord | ServiceError | Promise<ApiKeyRecord | ServiceError>;

/**
 * The caller by the authenticators (401, or 429 for failed keys), then the account limits (429).
 * `identified`: a caller its in-process code already knows (the portal's signed-in user); it
 * is admitted by the same limits. A promise only when an answer is asynchronous this time (a
 * key not in the store's cache, a limit read from the database): a settled value costs no
 * turn of the event loop.
 */
export function createCallerCheck(authenticators: readonly Authenticator[], keys: KeyStore): CallerCheck {
  const verdict = (key: ApiKeyRecord, refusal: AdmissionRefusal | undefined): ApiKeyRecord | ServiceError => {
    if (refusal === undefined) return key;
    const hint = refusal.code === 'rate_limited' ? 'Slow down: retry after the Retry-After header\'s seconds; ask the provider for a higher contracted rate.' : 'Retry after the Retry-After header\'s seconds (the next month), or ask the provider to raise the quota.';
    return { ...serviceError(refusal.code, refusal.message, hint), retryAfterSeconds: refusal.retryAfterSeconds };
  };
  const admitted = (key: ApiKeyRecord | ServiceError, entry: AccessLogEntry, billed: boolean): ApiKeyRecord | ServiceError | Promise<ApiKeyRecord | ServiceError> => {
    if (isServiceError(key)) return key;
    entry.keyId = key.id;
    if (key.accountId !== undefined) entry.accountId = key.accountId;
    const admission = keys.admit === undefined ? undefined : keys.admit(key, { billed });
    return admission instanceof Promise ? admission.then((refusal) => verdict(key, refusal)) : verdict(key, admission);
  };
  return (request, entry, billed, known) => {
    const identified = known ?? authenticateWith(authenticators, request);
    return identified instanceof Promise ? identified.then((key) => admitted(key, entry, billed)) : admitted(identified, entry, billed);
  };
}
