import type { HandlerRequest } from './handler-types.js';
import type { ApiKeyRecord } from './key-file.js';
import type { ServiceError } from './service-error.js';

/**
 * One way for a caller to prove who it is (an API key header, a Bearer access token...). The
 * handler keeps them in an ordered list: the first that claims a request decides it; when
 * none does, the first of the list answers (its "credential missing" 401).
 */
export interface Authenticator {
  /**
   * This method's challenge in the WWW-Authenticate header of a 401 (RFC 9110 section 11.6.1):
   * its scheme and parameters, e.g. `Bearer realm="crosstab"`.
   */
  readonly challenge: string;
  /** Whether the request carries this method's credential; from the headers alone. */
  claims(request: HandlerRequest): boolean;
  /**
   * The caller (its key record: entitlements, account), or the refusal (401, or 429 for an
   * address that failed too often). May answer synchronously (a cached key): the handler then
   * does not wait a turn of the event loop for it.
   */
  authenticate(request: HandlerRequest): ApiKeyRecord | ServiceError | Promise<ApiKeyRecord | ServiceError>;
}
