import type { Authenticator } from './authenticator.js';
import { authenticateWith } from './authenticators.js';
import type { AccessLogEntry, HandlerRequest } from './handler-types.js';
import type { ApiKeyRecord } from './key-file.js';
import type { KeyStore } from './key-store.js';
import { isServiceError, serviceError, type ServiceError } from './service-error.js';

/**
 * Establishes and admits the caller of a route with `auth: true`; `billed` says whether the
 * route's 200 is billed (a free call counts against the rate limit only, not the monthly quota).
 */
export type CallerCheck = (request: HandlerRequest, entry: AccessLogEntry, billed: boolean, identified?: ApiKeyRecord) => Promise<ApiKeyRecord | ServiceError>;

/**
 * The caller by the authenticators (401, or 429 for failed keys), then the account limits (429).
 * `identified`: a caller its in-process code already knows (the portal's signed-in user); it
 * is admitted by the same limits.
 */
export function createCallerCheck(authenticators: readonly Authenticator[], keys: KeyStore): CallerCheck {
  return async (request, entry, billed, known) => {
    // Awaited only when the answer is asynchronous this time (a key not in the store's cache):
    // a settled value costs no extra turn of the event loop.
    const identified = known ?? authenticateWith(authenticators, request);
    const key = identified instanceof Promise ? await identified : identified;
    if (isServiceError(key)) return key;
    entry.keyId = key.id;
    if (key.accountId !== undefined) entry.accountId = key.accountId;
    const admission = keys.admit === undefined ? undefined : keys.admit(key, { billed });
    const refusal = admission instanceof Promise ? await admission : admission;
    if (refusal !== undefined) {
      const hint = refusal.code === 'rate_limited' ? 'Slow down: retry after the Retry-After header\'s seconds; ask the provider for a higher contracted rate.' : 'Retry after the Retry-After header\'s seconds (the next month), or ask the provider to raise the quota.';
      return { ...serviceError(refusal.code, refusal.message, hint), retryAfterSeconds: refusal.retryAfterSeconds };
    }
    return key;
  };
}
