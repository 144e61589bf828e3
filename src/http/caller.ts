import { AUTH_HEADER, authenticate, authenticateBearer } from './auth.js';
import type { AuthFailureLimiter } from './auth-failures.js';
import { clientAddress, type ProxyTrust } from './client-address.js';
import type { ApiKeyRecord } from './key-file.js';
import { API_KEY_PATTERN } from './key-file.js';
import type { AccessLogEntry, HandlerRequest } from './handler-types.js';
import { headerOf } from './headers.js';
import type { KeyStore } from './key-store.js';
import { isServiceError, serviceError, type ServiceError } from './service-error.js';

/** What identifying a caller needs: the key store and the limits on failed keys. */
export interface CallerContext {
  keys: KeyStore;
  proxies: ProxyTrust;
  authFailures: AuthFailureLimiter;
}

/**
 * The caller of an authenticated operation, as POST /crosstab establishes it: the
 * Service-Engine-Authorizer key (or, where single sign-on is on and no key is sent, the
 * Bearer access token), failed keys counted per client address, then the account's
 * admission (rate limit; the monthly quota only for billed operations: a free call is
 * neither counted towards the quota nor refused by it).
 */
export async function identifyCaller(context: CallerContext, request: HandlerRequest, entry: AccessLogEntry, billed: boolean): Promise<ApiKeyRecord | ServiceError> {
  const { keys, proxies, authFailures } = context;
  const authorization = headerOf(request.headers, 'authorization');
  const keyHeader = headerOf(request.headers, AUTH_HEADER);
  const bearer = authorization !== undefined && keys.lookupBearer !== undefined && keyHeader === undefined;
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
          "Check the key your client sends (the developer portal lists your keys) and retry after the Retry-After header's seconds.",
        ),
        retryAfterSeconds: wait,
      };
    }
  }
  const key = bearer
    ? await authenticateBearer(authorization as string, (token) => (keys.lookupBearer as NonNullable<KeyStore['lookupBearer']>).call(keys, token))
    : await authenticate(keyHeader, { cookie: headerOf(request.headers, 'cookie') !== undefined, authorization: authorization !== undefined }, keys);
  if (isServiceError(key)) {
    if (lookedUp) authFailures.recordFailure(address);
    return key;
  }
  entry.keyId = key.id;
  const refusal = keys.admit === undefined ? undefined : await keys.admit(key, { billed });
  if (refusal !== undefined) {
    const hint = refusal.code === 'rate_limited' ? "Slow down: retry after the Retry-After header's seconds; ask the provider for a higher contracted rate." : "Retry after the Retry-After header's seconds (the next month), or ask the provider to raise the quota.";
    return { ...serviceError(refusal.code, refusal.message, hint), retryAfterSeconds: refusal.retryAfterSeconds };
  }
  return key;
}
