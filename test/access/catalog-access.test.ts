// The survey catalog and tables on the accounts database: single sign-on tokens and API keys
// see their account's groups; the catalog is counted against the rate limit but never billed
// and still answers when the monthly quota is used up; usage rows say which operation was billed.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { join } from 'node:path';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addKey, DbKeyStore, DbUsageSink, linkIssuer, openDatabase, parseLicences, usageReport, type Database } from '../../src/access/index.js';
import { tempDir } from '../http/support.js';
import { startProvider, type TestProvider } from './oidc-provider.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const paths = inject('testDatasets');
const AUDIENCE = 'https://crosstab.test/v1';
const TABLE = { SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Variable: 'sex' }], Columns: ['degree=3..4', 'BA+'] };

describe('catalog and tables on the accounts database', () => {
  let db: Database;
  let gss: Dataset;
  let provider: TestProvider;
  let server: RunningServer;

  beforeAll(async () => {
    db = await openDatabase(await newEmbeddedFolder(join(tempDir('crosstab-catalog-'), 'db')));
    gss = await openDataset(paths.gss);
    provider = await startProvider({ audience: AUDIENCE, clients: [{ id: 'beta-etl' }] });
    await addAccount(db, 'beta', parseLicences(['GSS'], ['GSS:demographics']));
    await linkIssuer(db, { account: 'beta', issuer: provider.issuer, subject: 'beta-etl' });
    const keys = new DbKeyStore(db, { oidc: { issuers: [{ issuer: provider.issuer, audience: AUDIENCE }], jwksCooldownMs: 0 } });
    server = await listen(await createCrosstabHandler({ datasets: [gss], keys, usage: new DbUsageSink(db) }), { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await provider?.close();
    await db?.close();
    await gss?.close();
  });

  const billedCalls = async (account: string) => (await usageReport(db, { account })).calls;
  const get = (path: string, headers: Record<string, string>) => fetch(`${server.url}${path}`, { headers });
  const post = (path: string, headers: Record<string, string>, body: unknown) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it("a Bearer token sees its account's groups only, free", async () => {
    const bearer = { authorization: `Bearer ${await provider.token('beta-etl')}` };
    const list = await get('/surveys', bearer);
    expect(list.status).toBe(200);
    expect(((await list.json()) as { Surveys: Array<{ SurveyCode: string }> }).Surveys.map((survey) => survey.SurveyCode)).toEqual(['GSS']);
    const detail = await get('/surveys/GSS', bearer);
    expect(detail.status).toBe(200);
    const text = await detail.text();
    expect(JSON.parse(text).AuthorizationGroups).toEqual(['demographics']);
    expect(text).not.toMatch(/attitudes|polviews|LIBERAL/);
    expect(await billedCalls('beta')).toBe(0);
    const table = await post('/tables', bearer, TABLE);
    expect(table.status, await table.clone().text()).toBe(200);
    expect(await billedCalls('beta')).toBe(1);
  });

  it('usage rows say crosstab or table', async () => {
    await addAccount(db, 'rows', parseLicences(['GSS'], ['GSS:_ALL_']));
    const { apiKey } = await addKey(db, { account: 'rows', name: 'production' });
    const key = { 'service-engine-authorizer': apiKey };
    expect((await post('/tables', key, TABLE)).status).toBe(200);
    expect((await post('/crosstab', key, { SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=1', 'sex=2'] })).status).toBe(200);
    expect((await post('/tables', key, { ...TABLE, Rows: ['nope=1'] })).status).toBe(400);
    const { rows } = await db.query<{ operation: string; targets: number }>(
      "SELECT u.operation, u.targets FROM usage u JOIN accounts a ON a.id = u.account_id WHERE a.name = 'rows' ORDER BY u.time",
    );
    // The table's entries: sex's two values and its "No answer" entry (Missing defaults to show), and two columns.
    expect(rows).toEqual([
      { operation: 'table', targets: 5 },
      { operation: 'crosstab', targets: 2 },
    ]);
  });

  it('the catalog counts against the rate limit, and answers through a used-up monthly quota', async () => {
    await addAccount(db, 'limited', parseLicences(['GSS'], ['GSS:_ALL_']), { rateLimitPerMinute: 3 });
    const limited = { 'service-engine-authorizer': (await addKey(db, { account: 'limited', name: 'production' })).apiKey };
    const minute = Math.floor(Date.now() / 60_000);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await get('/surveys/GSS', limited)).status);
    // Fixed one-minute windows: within one, exactly the limit passes.
    if (Math.floor(Date.now() / 60_000) === minute) expect(statuses).toEqual([200, 200, 200, 429]);

    await addAccount(db, 'quota', parseLicences(['GSS'], ['GSS:_ALL_']), { monthlyQuota: 1 });
    const quota = { 'service-engine-authorizer': (await addKey(db, { account: 'quota', name: 'production' })).apiKey };
    expect((await post('/tables', quota, TABLE)).status).toBe(200);
    const refused = await post('/tables', quota, TABLE);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('quota_exceeded');
    expect((await get('/surveys', quota)).status).toBe(200);
    expect((await get('/surveys/GSS', quota)).status).toBe(200);
    expect(await billedCalls('quota')).toBe(1);
  });

  it('catalog calls do not count towards the monthly quota', async () => {
    await addAccount(db, 'browsing', parseLicences(['GSS'], ['GSS:_ALL_']), { monthlyQuota: 2 });
    const key = { 'service-engine-authorizer': (await addKey(db, { account: 'browsing', name: 'production' })).apiKey };
    for (let i = 0; i < 5; i++) expect((await get('/surveys/GSS', key)).status).toBe(200);
    expect((await post('/tables', key, TABLE)).status).toBe(200);
    expect((await post('/tables', key, TABLE)).status).toBe(200);
    expect((await post('/tables', key, TABLE)).status).toBe(429);
    expect(await billedCalls('browsing')).toBe(2);
  });
});
