// Single sign-on for API calls: `Authorization: Bearer` JWT access tokens from a real OpenID
// Provider on loopback (oidc-provider, client credentials grant), verified through discovery
// and JWKS (issuer, audience, expiry, signature), mapped to accounts by `sub` or another claim,
// billed and limited like API keys; signing-key rotation at the provider is picked up, a key
// removed there stops verifying within the JWKS cache bound, and tokens issued in the future
// or living longer than the maximum lifetime are refused.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { join } from 'node:path';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, DbKeyStore, DbUsageSink, linkIssuer, OidcVerifier, openDatabase, parseLicences, updateAccount, usageReport, type Database } from '../../src/access/index.js';
import { tempDir } from '../http/support.js';
import { startProvider, type TestProvider } from './oidc-provider.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const paths = inject('testDatasets');
const AUDIENCE = 'https://crosstab.test/v1';
const BODY = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=1'] });

describe('single sign-on with a real OpenID Provider', () => {
  let db: Database;
  let dataset: Dataset;
  let provider: TestProvider;
  let stranger: TestProvider;
  let server: RunningServer;
  let otherAudience: RunningServer;

  beforeAll(async () => {
    db = await openDatabase(await newEmbeddedFolder(join(tempDir('crosstab-sso-'), 'db')));
    dataset = await openDataset(paths.gss);
    provider = await startProvider({ audience: AUDIENCE, clients: [{ id: 'acme-reporting' }, { id: 'beta-etl', claims: { org: 'beta' } }, { id: 'unlinked' }] });
    stranger = await startProvider({ audience: AUDIENCE, clients: [{ id: 'acme-reporting' }] });
    await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:_ALL_']));
    await addAccount(db, 'beta', parseLicences(['GSS'], ['GSS:demographics']));
    await linkIssuer(db, { account: 'acme', issuer: provider.issuer, subject: 'acme-reporting' });
    await linkIssuer(db, { account: 'beta', issuer: provider.issuer, claim: 'org=beta' });
    const store = (audience: string) => new DbKeyStore(db, { oidc: { issuers: [{ issuer: provider.issuer, audience }], jwksCooldownMs: 0 } });
    server = await listen(await createCrosstabHandler({ datasets: [dataset], keys: store(AUDIENCE), usage: new DbUsageSink(db) }), { port: 0 });
    otherAudience = await listen(await createCrosstabHandler({ datasets: [dataset], keys: store('https://another-api.test/v1'), usage: new DbUsageSink(db) }), { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await otherAudience?.close();
    await provider?.close();
    await stranger?.close();
    await db?.close();
    dataset?.close();
  });

  async function call(token: string, target = server, body = BODY): Promise<{ status: number; code?: string; message?: string }> {
    const response = await fetch(`${target.url}/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body });
    const json = (await response.json()) as { error?: { code: string; message: string } };
    return { status: response.status, ...(json.error ? { code: json.error.code, message: json.error.message } : {}) };
  }

  // Calls billed to acme so far: each test counts what it adds, whichever tests ran before it.
  const acmeCalls = async () => (await usageReport(db, { account: 'acme' })).calls;

  it('a token linked by its subject queries with the account\'s rights and is billed to it', async () => {
    const before = await acmeCalls();
    expect(await call(await provider.token('acme-reporting'))).toEqual({ status: 200 });
    const report = await usageReport(db, { account: 'acme', by: 'key' });
    expect(report).toMatchObject({ calls: before + 1, rows: [{ key: 'sso:acme-reporting', calls: before + 1 }] });
  });

  it('a token linked by a claim (org=beta) gets that account\'s permissions per survey', async () => {
    const token = await provider.token('beta-etl');
    expect(await call(token, server, JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=1'], AuthorizationGroup: 'demographics' }))).toEqual({ status: 200 });
    expect((await call(token, server, JSON.stringify({ SurveyCode: 'NHANES', PopulationBaseCode: '*', TargetCodes: ['RIAGENDR=1'] }))).code).toBe('forbidden_survey');
    expect((await usageReport(db, { account: 'beta' })).calls).toBe(1);
  });

  it('a valid token of no account is 403 forbidden_survey; a disabled account is 401', async () => {
    expect(await call(await provider.token('unlinked'))).toMatchObject({ status: 403, code: 'forbidden_survey' });
    await updateAccount(db, 'beta', { disabled: true });
    expect(await call(await provider.token('beta-etl'))).toMatchObject({ status: 401, code: 'unauthorized', message: expect.stringMatching(/disabled/) });
    await updateAccount(db, 'beta', { disabled: false });
  });

  it('refuses with 401: unknown issuer, wrong audience, bad signature, expired, not a JWT', async () => {
    const billed = await acmeCalls();
    expect(await call(await stranger.token('acme-reporting'))).toMatchObject({ status: 401, code: 'unauthorized', message: expect.stringMatching(/issuer .* is not trusted/) });
    const token = await provider.token('acme-reporting');
    expect(await call(token, otherAudience)).toMatchObject({ status: 401, message: expect.stringMatching(/"aud" claim/) });
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'beta-etl' })).toString('base64url')}.${signature}`;
    expect(await call(forged)).toMatchObject({ status: 401, message: expect.stringMatching(/signature does not verify/) });
    const now = Math.floor(Date.now() / 1000);
    const expired = await provider.sign({ iss: provider.issuer, aud: AUDIENCE, sub: 'acme-reporting', iat: now - 7200, exp: now - 3600 });
    expect(await call(expired)).toMatchObject({ status: 401, message: expect.stringMatching(/expired/) });
    expect(await call('not-a-jwt')).toMatchObject({ status: 401, message: expect.stringMatching(/not a JWT/) });
    // With single sign-on on, a 401 names both credentials it accepts.
    const refused = await fetch(`${server.url}/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-jwt' }, body: BODY });
    expect(refused.headers.get('www-authenticate')).toBe('ApiKey realm="crosstab", header="Service-Engine-Authorizer", Bearer realm="crosstab"');
    const basic = await fetch(`${server.url}/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Basic YTpi' }, body: BODY });
    expect(basic.status).toBe(401);
    // None of the refused calls is billed.
    expect(await acmeCalls()).toBe(billed);
  });

  it('refuses an "iat" in the future and a lifetime past the maximum (24 h by default); ordinary tokens pass', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: provider.issuer, aud: AUDIENCE, sub: 'acme-reporting' };
    const fromTheFuture = await provider.sign({ ...claims, iat: now + 365 * 86_400, exp: now + 10 * 365 * 86_400 });
    expect(await call(fromTheFuture)).toMatchObject({ status: 401, code: 'unauthorized', message: expect.stringMatching(/"iat" .* in the future/) });
    const tenYears = await provider.sign({ ...claims, iat: now, exp: now + 10 * 365 * 86_400 });
    expect(await call(tenYears)).toMatchObject({ status: 401, code: 'unauthorized', message: expect.stringMatching(/lives 315360000 s .*at most 86400 s/) });
    const noIat = await provider.sign({ ...claims, exp: now + 2 * 86_400 });
    expect(await call(noIat)).toMatchObject({ status: 401, code: 'unauthorized', message: expect.stringMatching(/lives \d+ s .*at most 86400 s/) });
    // A provider clock a few seconds ahead is within the tolerance; a day-long token is the maximum.
    expect(await call(await provider.sign({ ...claims, iat: now + 10, exp: now + 3600 }))).toEqual({ status: 200 });
    expect(await call(await provider.sign({ ...claims, iat: now, exp: now + 86_400 }))).toEqual({ status: 200 });
    expect(await call(await provider.sign({ ...claims, exp: now + 3600 }))).toEqual({ status: 200 });
    expect(await call(await provider.token('acme-reporting'))).toEqual({ status: 200 });
  });

  it('picks up rotated signing keys from the provider\'s JWKS', async () => {
    expect((await call(await provider.token('acme-reporting'))).status).toBe(200);
    await provider.rotateKeys();
    const token = await provider.token('acme-reporting');
    expect(JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString()).kid).toBe('key-2');
    expect(await call(token)).toEqual({ status: 200 });
  });
});

describe('single sign-on: a signing key removed at the provider, configured bounds', () => {
  let db: Database;
  let dataset: Dataset;
  let provider: TestProvider;
  let server: RunningServer;

  beforeAll(async () => {
    db = await openDatabase(await newEmbeddedFolder(join(tempDir('crosstab-sso-keys-'), 'db')));
    dataset = await openDataset(paths.gss);
    provider = await startProvider({ audience: AUDIENCE, clients: [{ id: 'acme-reporting' }] });
    await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:_ALL_']));
    await linkIssuer(db, { account: 'acme', issuer: provider.issuer, subject: 'acme-reporting' });
    // The JWKS is re-read at least every 300 ms; the provider's tokens live 600 s, under 1200 s.
    const keys = new DbKeyStore(db, { oidc: { issuers: [{ issuer: provider.issuer, audience: AUDIENCE }], jwksMaxAgeMs: 300, maxTokenLifetimeSeconds: 1200 } });
    server = await listen(await createCrosstabHandler({ datasets: [dataset], keys, usage: new DbUsageSink(db) }), { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await provider?.close();
    await db?.close();
    dataset?.close();
  });

  async function call(token: string): Promise<{ status: number; code?: string; message?: string }> {
    const response = await fetch(`${server.url}/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: BODY });
    const json = (await response.json()) as { error?: { code: string; message: string } };
    return { status: response.status, ...(json.error ? { code: json.error.code, message: json.error.message } : {}) };
  }

  it('a token signed by a key the provider no longer publishes is refused once the JWKS cache bound has passed', async () => {
    const signedByOldKey = await provider.token('acme-reporting');
    expect(await call(signedByOldKey)).toEqual({ status: 200 });
    await provider.rotateKeys();
    // Past the bound (300 ms) the service has re-read the JWKS, whatever it held before.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await call(signedByOldKey)).toMatchObject({ status: 401, code: 'unauthorized', message: expect.stringMatching(/signature does not verify/) });
    expect(await call(await provider.token('acme-reporting'))).toEqual({ status: 200 });
  });

  it('maxTokenLifetimeSeconds is the configured maximum', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: provider.issuer, aud: AUDIENCE, sub: 'acme-reporting' };
    expect(await call(await provider.sign({ ...claims, iat: now, exp: now + 1800 }))).toMatchObject({ status: 401, message: expect.stringMatching(/lives 1800 s .*at most 1200 s/) });
    expect(await call(await provider.sign({ ...claims, iat: now, exp: now + 1200 }))).toEqual({ status: 200 });
  });

  it('rejects invalid bounds naming the option', () => {
    const issuers = [{ issuer: provider.issuer, audience: AUDIENCE }];
    expect(() => new OidcVerifier({ issuers, maxTokenLifetimeSeconds: 0 })).toThrow(/maxTokenLifetimeSeconds must be a positive integer/);
    expect(() => new OidcVerifier({ issuers, jwksMaxAgeMs: -1 })).toThrow(/jwksMaxAgeMs must be a positive integer/);
    expect(() => new OidcVerifier({ issuers, clockToleranceSeconds: 1.5 })).toThrow(/clockToleranceSeconds must be/);
  });
});
