import { AUTH_HEADER, authenticate, authenticateBearer } from './auth.js';
import type { AuthFailureLimiter } from './auth-failures.js';
import { clientAddress, type ProxyTrust } from './client-address.js';
import type { AccessLogEntry, HandlerRequest } from './handler-types.js';
import { headerOf } from './headers.js';
import { API_KEY_PATTERN, type ApiKeyRecord } from './key-file.js';
import type { KeyStore } from './key-store.js';
import { isServiceError, serviceError, type ServiceError } from './service-error.js';

/** Establishes and admits the caller of a route with `auth: true`. */
export type CallerCheck = (request: HandlerRequest, entry: AccessLogEntry) => Promise<ApiKeyRecord | ServiceError>;

/** Failed keys from the address (429), key or Bearer token (401), account limits (429). */
export function createCallerCheck(context: { keys: KeyStore; proxies: ProxyTrust; authFailures: AuthFailureLimiter }): CallerCheck {
  const { keys, proxies, authFailures } = context;
  return async (request, entry) => {
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
    return key;
  };
}
