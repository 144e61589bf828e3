import { describe, expect, it } from 'vitest';
import { AuthFailureLimiter } from '../../src/http/auth-failures.js';
import type { Authenticator } from '../../src/http/authenticator.js';
import { authenticateWith, challengesOf, defaultAuthenticators } from '../../src/http/authenticators.js';
import { proxyTrust } from '../../src/http/client-address.js';
import type { HandlerRequest } from '../../src/http/handler-types.js';
import { FileKeyStore, type KeyStore } from '../../src/http/key-store.js';
import { isServiceError } from '../../src/http/service-error.js';
import { makeKeyFile, tempDir } from './support.js';

const request = (headers: Record<string, string>): HandlerRequest => ({ method: 'POST', path: '/v1/crosstab', headers, remoteAddress: '127.0.0.1' });
const context = () => ({ proxies: proxyTrust(false, 'trustProxy'), authFailures: new AuthFailureLimiter() });

async function answerOf(authenticators: readonly Authenticator[], headers: Record<string, string>): Promise<string> {
  const answer = await authenticateWith(authenticators, request(headers));
  return isServiceError(answer) ? `${answer.code}: ${answer.message}` : `caller ${answer.id}`;
}

describe('authenticators', () => {
  it('try the API key, then Bearer tokens where the store has them; the first that claims a request decides', async () => {
    const keys = await makeKeyFile(tempDir());
    const file = await FileKeyStore.open(keys.path);
    // The same keys, plus single sign-on: a token "good" acts for the key `all`.
    const allRecord = await file.lookup(keys.all);
    const sso: KeyStore = Object.assign(Object.create(file) as FileKeyStore, {
      lookupBearer: async (token: string) => (token === 'good' && allRecord ? allRecord : { problem: 'The access token is not valid.' }),
    });
    const withSso = defaultAuthenticators(sso, context());
    const keyOnly = defaultAuthenticators(file, context());
    expect(withSso).toHaveLength(2);
    expect(keyOnly).toHaveLength(1);

    const key = { 'service-engine-authorizer': keys.all };
    expect(await answerOf(withSso, key)).toBe(`caller ${keys.allId}`);
    expect(await answerOf(withSso, { authorization: 'Bearer good' })).toBe(`caller ${keys.allId}`);
    expect(await answerOf(withSso, { authorization: 'Bearer bad' })).toBe('unauthorized: The access token is not valid.');
    // Both credentials: the API key, first in the list, decides.
    expect(await answerOf(withSso, { ...key, authorization: 'Bearer bad' })).toBe(`caller ${keys.allId}`);
    expect(await answerOf(withSso, { 'service-engine-authorizer': keys.revoked, authorization: 'Bearer good' })).toMatch(/^unauthorized: The API key is not valid/);
    // No authenticator claims the request: the first one (the API key) says what is missing.
    expect(await answerOf(keyOnly, { authorization: 'Bearer good' })).toMatch(/^unauthorized: The Authorization header is not used by this API/);
    expect(await answerOf(withSso, { cookie: 'session=1' })).toMatch(/^unauthorized: A portal session cookie is not accepted/);
    expect(await answerOf(withSso, {})).toBe('unauthorized: The Service-Engine-Authorizer header is missing.');
    await file.close();
  });

  it('take a new method as one more entry of the list', async () => {
    const keys = await makeKeyFile(tempDir());
    const file = await FileKeyStore.open(keys.path);
    const allRecord = await file.lookup(keys.all);
    const mutualTls: Authenticator = {
      challenge: 'MutualTLS realm="crosstab"',
      claims: (candidate) => 'x-client-certificate' in (candidate.headers as Record<string, string>),
      authenticate: () => allRecord ?? { code: 'unauthorized', message: 'no such client', hint: 'x' },
    };
    const authenticators = [...defaultAuthenticators(file, context()), mutualTls];
    expect(await answerOf(authenticators, { 'x-client-certificate': 'cn=reporting' })).toBe(`caller ${keys.allId}`);
    expect(await answerOf(authenticators, { 'service-engine-authorizer': keys.all, 'x-client-certificate': 'cn=reporting' })).toBe(`caller ${keys.allId}`);
    expect(await answerOf(authenticators, {})).toBe('unauthorized: The Service-Engine-Authorizer header is missing.');
    // A 401 names every method's challenge, in order (WWW-Authenticate).
    expect(challengesOf(authenticators)).toBe('ApiKey realm="crosstab", header="Service-Engine-Authorizer", MutualTLS realm="crosstab"');
    await file.close();
  });
});
