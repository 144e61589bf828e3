// A real OpenID Provider on loopback (the `oidc-provider` package) issuing JWT access tokens
// through the client credentials grant, with signing keys that can be rotated by restarting
// it with a new key on the same port.
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import type { Server } from 'node:http';
import Provider from 'oidc-provider';

export interface TestProvider {
  issuer: string;
  /** An access token for `clientId` (client credentials grant, resource = audience). */
  token(clientId: string): Promise<string>;
  /** Replaces the signing keys: new tokens are signed by a key the API has not seen. */
  rotateKeys(): Promise<void>;
  /** Signs arbitrary claims with the provider's current key (for tokens it would not issue, e.g. expired). */
  sign(claims: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export const CLIENT_SECRET = 'a-client-secret-long-enough-for-hs256-0123456789';

async function signingKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

export async function startProvider(options: { audience: string; clients: Array<{ id: string; claims?: Record<string, unknown> }> }): Promise<TestProvider> {
  let server: Server | undefined;
  let port = 0;
  let generation = 0;
  let issuer = '';
  let current: JWK | undefined;

  async function start(): Promise<void> {
    generation++;
    current = await signingKey(`key-${generation}`);
    const keys = [current];
    const build = (url: string) =>
      new Provider(url, {
        clients: options.clients.map((client) => ({ client_id: client.id, client_secret: CLIENT_SECRET, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] })),
        features: {
          clientCredentials: { enabled: true },
          devInteractions: { enabled: false },
          resourceIndicators: {
            enabled: true,
            defaultResource: () => options.audience,
            useGrantedResource: () => true,
            getResourceServerInfo: () => ({ scope: 'crosstab', audience: options.audience, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } }),
          },
        },
        extraTokenClaims: (_ctx: unknown, token: unknown) => options.clients.find((client) => client.id === (token as { clientId?: string }).clientId)?.claims ?? {},
        jwks: { keys },
      });
    if (port === 0) {
      // Learn a free port first, then build the provider for its final issuer URL.
      const probe = build('http://127.0.0.1').listen(0, '127.0.0.1');
      await new Promise((resolve) => probe.once('listening', resolve));
      port = (probe.address() as { port: number }).port;
      await new Promise((resolve) => probe.close(resolve));
    }
    issuer = `http://127.0.0.1:${port}`;
    server = build(issuer).listen(port, '127.0.0.1');
    await new Promise((resolve) => server?.once('listening', resolve));
  }
  await start();

  const close = async (): Promise<void> => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  };
  return {
    get issuer() {
      return issuer;
    },
    async token(clientId) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${CLIENT_SECRET}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource: options.audience, scope: 'crosstab' }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string };
      if (body.access_token === undefined) throw new Error(`token request failed: ${response.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async rotateKeys() {
      await close();
      await start();
    },
    async sign(claims) {
      const key = current as JWK;
      return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid as string, typ: 'at+jwt' }).sign(await importJWK(key, 'RS256'));
    },
    close,
  };
}
