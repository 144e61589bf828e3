import type { AuthFailureLimiter } from './auth-failures.js';
import { apiKeyAuthenticator } from './api-key-authenticator.js';
import { bearerAuthenticator } from './bearer-authenticator.js';
import type { ProxyTrust } from './client-address.js';
import type { HandlerRequest } from './handler-types.js';
import type { ApiKeyRecord } from './key-file.js';
import type { Authenticator } from './authenticator.js';
import type { KeyStore } from './key-store.js';
import type { ServiceError } from './service-error.js';

/**
 * The authenticators, in order: the `Service-Engine-Authorizer` API key first (it wins when a
 * request carries both), then `Authorization: Bearer` access tokens where the key store looks
 * them up (single sign-on). A new auth method is one more entry here.
 */
export function defaultAuthenticators(keys: KeyStore, context: { proxies: ProxyTrust; authFailures: AuthFailureLimiter }): Authenticator[] {
  const bearer = keys.lookupBearer === undefined ? [] : [bearerAuthenticator(keys.lookupBearer.bind(keys))];
  return [apiKeyAuthenticator(keys, context), ...bearer];
}

/** The WWW-Authenticate value of a 401: each authenticator's challenge, in order. */
export function challengesOf(authenticators: readonly Authenticator[]): string {
  return authenticators.map((authenticator) => authenticator.challenge).join(', ');
}

/** The caller according to the first authenticator that claims the request (else the first one). */
export function authenticateWith(authenticators: readonly Authenticator[], request: HandlerRequest): ApiKeyRecord | ServiceError | Promise<ApiKeyRecord | ServiceError> {
  // A loop, not find() with a closure: this runs for every request.
  for (const authenticator of authenticators) if (authenticator.claims(request)) return authenticator.authenticate(request);
  return (authenticators[0] as Authenticator).authenticate(request);
}
