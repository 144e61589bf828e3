import { AUTH_HEADER, AUTH_REALM } from './auth.js';
import type { AuthFailureLimiter } from './auth-failures.js';
import type { Authenticator } from './authenticator.js';
import { clientAddress, type ProxyTrust } from './client-address.js';
import type { HandlerRequest } from './handler-types.js';
import { headerOf } from './headers.js';
import { API_KEY_PATTERN, keyStatus, type ApiKeyRecord } from './key-file.js';
import type { KeyStore } from './key-store.js';
import { isServiceError, serviceError, type ServiceError } from './service-error.js';

const NEW_KEY_HINT = 'Do not retry with the same value: send a valid API key from the developer portal in the Service-Engine-Authorizer header.';

function unauthorized(message: string, hint = NEW_KEY_HINT): ServiceError {
  return serviceError('unauthorized', message, hint);
}

/** Why a request with no API key is refused: it may carry a credential the API does not take. */
function missingKey(request: HandlerRequest): ServiceError {
  if (headerOf(request.headers, 'cookie') !== undefined) {
    return unauthorized(
      'A portal session cookie is not accepted by the API; the Service-Engine-Authorizer header is missing.',
      'Create an API key in the developer portal and send it in the Service-Engine-Authorizer header from your server; never from a browser session.',
    );
  }
  if (headerOf(request.headers, 'authorization') !== undefined) {
    return unauthorized('The Authorization header is not used by this API; the Service-Engine-Authorizer header is missing.', 'Send the API key as `Service-Engine-Authorizer: <key>`, without a "Bearer" prefix.');
  }
  return unauthorized('The Service-Engine-Authorizer header is missing.', 'Send the API key as `Service-Engine-Authorizer: <key>`.');
}

function checkKey(record: ApiKeyRecord | undefined): ApiKeyRecord | ServiceError {
  if (record === undefined) return unauthorized('The API key is not valid (unknown or revoked).');
  const status = keyStatus(record);
  if (status === 'revoked') return unauthorized('The API key is not valid (unknown or revoked).');
  if (status === 'expired') return unauthorized(`The API key expired at ${record.expiresAt}.`);
  return record;
}

/**
 * The `Service-Engine-Authorizer` API key, looked up in the key store. Claims requests that
 * carry the header; as the first authenticator it also answers requests with no credential
 * it knows (a portal session cookie alone is refused). A well-formed key the store does not
 * know counts as a failure of the client's address; an address with too many gets 429
 * without a lookup (keys the store knows still work).
 */
export function apiKeyAuthenticator(keys: KeyStore, context: { proxies: ProxyTrust; authFailures: AuthFailureLimiter }): Authenticator {
  const { proxies, authFailures } = context;
  /** `answer`, a failure counted against the client's address first. */
  const counted = (answer: ApiKeyRecord | ServiceError, request: HandlerRequest): ApiKeyRecord | ServiceError => {
    if (isServiceError(answer)) authFailures.recordFailure(clientAddress(request, proxies));
    return answer;
  };
  return {
    // No registered scheme fits a key in a header of its own: ApiKey names the header it goes in.
    challenge: `ApiKey realm="${AUTH_REALM}", header="${AUTH_HEADER}"`,
    claims: (request) => headerOf(request.headers, AUTH_HEADER) !== undefined,
    authenticate(request) {
      const apiKey = headerOf(request.headers, AUTH_HEADER)?.trim();
      if (apiKey === undefined || apiKey === '') return missingKey(request);
      if (!API_KEY_PATTERN.test(apiKey)) {
        return unauthorized('The Service-Engine-Authorizer header is malformed: an API key is "ctk_" followed by 43 base64url characters.', 'Send the API key exactly as issued, with no prefix such as "Bearer".');
      }
      // A well-formed key is looked up (a database query when not cached): counted per address
      // when it fails. The address is worked out only then: a known key that is valid never needs it.
      if (!(keys.knows?.(apiKey) ?? false)) {
        const wait = authFailures.retryAfter(clientAddress(request, proxies));
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
      const record = keys.lookup(apiKey);
      return record instanceof Promise ? record.then((found) => counted(checkKey(found), request)) : counted(checkKey(record), request);
    },
  };
}
