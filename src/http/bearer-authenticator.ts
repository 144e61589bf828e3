import { AUTH_REALM } from './auth.js';
import type { Authenticator } from './authenticator.js';
import { headerOf } from './headers.js';
import type { ApiKeyRecord } from './key-file.js';
import { serviceError } from './service-error.js';

const HINT = 'Request a new access token from your identity provider (e.g. the client credentials grant) for this API\'s audience, and send it as `Authorization: Bearer <token>`.';

/**
 * Single sign-on: the caller of `Authorization: Bearer <access token>`, as `lookup` finds it
 * (a refusal's `problem` becomes the 401 message). Claims every request with an Authorization
 * header: put it after the API key, which wins when a request carries both.
 */
export function bearerAuthenticator(lookup: (token: string) => Promise<ApiKeyRecord | { problem: string }>): Authenticator {
  return {
    challenge: `Bearer realm="${AUTH_REALM}"`,
    claims: (request) => headerOf(request.headers, 'authorization') !== undefined,
    async authenticate(request) {
      const match = /^Bearer +([A-Za-z0-9_.~+/=-]+)$/i.exec((headerOf(request.headers, 'authorization') ?? '').trim());
      if (match === null) return serviceError('unauthorized', 'The Authorization header must be `Bearer <access token>`.', HINT);
      const caller = await lookup(match[1] as string);
      return 'problem' in caller ? serviceError('unauthorized', caller.problem, HINT) : caller;
    },
  };
}
