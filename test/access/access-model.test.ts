// The access model over real HTTP, on the embedded database (PGlite) and on a real
// PostgreSQL server: licences, permissions per survey, users, keys (expiry, revocation,
// rotation with a grace period), disabled accounts, and billing of exactly the 200s.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { join } from 'node:path';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import {
  addAccount,
  addKey,
  addUser,
  DbKeyStore,
  DbUsageSink,
  findAccount,
  listKeys,
  openDatabase,
  parseLicences,
  revokeKey,
  resetUserPassword,
  rotateKey,
  setUserDisabled,
  updateAccount,
  usageReport,
  verifyPassword,
  saveTable,
  listSavedTables,
  savedTable,
  setSavedTableShared,
  deleteSavedTable,
  type Database,
} from '../../src/access/index.js';
import { MIGRATIONS } from '../../src/access/migrations.js';
import { MAX_FAILED_SIGN_INS } from '../../src/portal/index.js';
import { sessionOf, signIn } from '../../src/portal/sessions.js';
import { tempDir } from '../http/support.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const paths = inject('testDatasets');
let postgres: PostgresServer;
const datasets: Dataset[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  datasets.push(await openDataset(paths.gss), await openDataset(paths.nhanes));
});
afterAll(() => {
  for (const dataset of datasets) dataset.close();
  postgres?.stop();
});

const stores: Array<[string, () => Promise<string>]> = [
  ['embedded PGlite', async () => newEmbeddedFolder(join(tempDir('crosstab-access-'), 'db'))],
  ['PostgreSQL server', async () => postgres.createDatabase(`model_${Date.now()}`)],
];

describe.each(stores)('access model on %s', (_name, location) => {
  let db: Database;
  let server: RunningServer;
  let keys: DbKeyStore;
  let okCalls = 0;
  let url: string;

  beforeAll(async () => {
    url = await location();
    db = await openDatabase(url);
    keys = new DbKeyStore(db);
    const handler = await createCrosstabHandler({ datasets, keys, usage: new DbUsageSink(db) });
    server = await listen(handler, { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await db?.close();
  });

  async function call(apiKey: string, body: Record<string, unknown>): Promise<{ status: number; code?: string }> {
    const response = await fetch(`${server.url}/crosstab`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey },
      body: JSON.stringify({ PopulationBaseCode: '*', TargetCodes: ['sex=1'], ...body }),
    });
    const json = (await response.json()) as { error?: { code: string } };
    if (response.status === 200) okCalls++;
    return { status: response.status, ...(json.error ? { code: json.error.code } : {}) };
  }

  /** Polls until `check` holds; revocations must reach the API within one second. */
  async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
    const started = Date.now();
    while (!(await check())) {
      if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return Date.now() - started;
  }

  it('runs the migrations once: opening again changes nothing', async () => {
    const { rows } = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
    expect(rows.map((row) => row.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('a key carries its account\'s licences and permissions per survey', async () => {
    await addAccount(db, 'acme', parseLicences(['GSS,NHANES'], ['GSS:_ALL_', 'NHANES:demographics']));
    const { apiKey } = await addKey(db, { account: 'acme', name: 'production' });
    expect(await call(apiKey, { SurveyCode: 'GSS' })).toEqual({ status: 200 });
    const nhanes = { SurveyCode: 'NHANES', TargetCodes: ['RIAGENDR=2'] };
    expect(await call(apiKey, { ...nhanes, AuthorizationGroup: 'demographics' })).toEqual({ status: 200 });
    expect(await call(apiKey, nhanes)).toEqual({ status: 200 });
    // The account may use the demographics group of NHANES only, not its health group.
    expect(await call(apiKey, { ...nhanes, AuthorizationGroup: 'health' })).toEqual({ status: 403, code: 'forbidden_survey' });
    expect(await call(apiKey, { ...nhanes, TargetCodes: ['HI_CHOL=1'] })).toEqual({ status: 400, code: 'unknown_variable' });
    expect(await call(apiKey, { SurveyCode: 'ACS' })).toEqual({ status: 403, code: 'forbidden_survey' });
    const { rows } = await db.query<{ hash: string }>('SELECT hash FROM api_keys');
    expect(JSON.stringify(rows)).not.toContain(apiKey);
  });

  it('a licence without permissions does not allow queries; withdrawing a licence applies within one second', async () => {
    await addAccount(db, 'beta', parseLicences(['GSS'], []));
    const { apiKey } = await addKey(db, { account: 'beta', name: 'staging' });
    expect(await call(apiKey, { SurveyCode: 'GSS' })).toEqual({ status: 403, code: 'forbidden_survey' });
    await updateAccount(db, 'beta', { licences: parseLicences(['GSS'], ['GSS:_ALL_']) });
    await within(1000, async () => (await call(apiKey, { SurveyCode: 'GSS' })).status === 200);
    await updateAccount(db, 'beta', { licences: parseLicences(['NHANES'], ['NHANES:_ALL_']) });
    await within(1000, async () => (await call(apiKey, { SurveyCode: 'GSS' })).status === 403);
  });

  it('revoked, expired and disabled-account keys are refused with 401 within one second', async () => {
    await addAccount(db, 'gamma', parseLicences(['GSS'], ['GSS:_ALL_']));
    const account = await findAccount(db, 'gamma');
    const first = await addKey(db, { account: 'gamma', name: 'production' });
    const second = await addKey(db, { account: 'gamma', name: 'staging', expiresAt: new Date(Date.now() + 1500) });
    expect((await call(first.apiKey, { SurveyCode: 'GSS' })).status).toBe(200);
    expect((await call(second.apiKey, { SurveyCode: 'GSS' })).status).toBe(200);
    await revokeKey(db, account.id, first.key.id);
    await within(1000, async () => (await call(first.apiKey, { SurveyCode: 'GSS' })).status === 401);
    await within(3000, async () => (await call(second.apiKey, { SurveyCode: 'GSS' })).status === 401);
    const third = await addKey(db, { account: 'gamma', name: 'production' });
    expect((await call(third.apiKey, { SurveyCode: 'GSS' })).status).toBe(200);
    await updateAccount(db, 'gamma', { disabled: true });
    await within(1000, async () => (await call(third.apiKey, { SurveyCode: 'GSS' })).status === 401);
    expect((await listKeys(db, account.id)).map((key) => key.status).sort()).toEqual(['active', 'expired', 'revoked']);
  });

  it('rotation: the new key works at once, the old one until its grace period ends', async () => {
    await addAccount(db, 'delta', parseLicences(['GSS'], ['GSS:_ALL_']));
    const account = await findAccount(db, 'delta');
    const old = await addKey(db, { account: 'delta', name: 'production' });
    const rotated = await rotateKey(db, account.id, old.key.id, { graceSeconds: 2 });
    expect(rotated.key.name).toBe('production');
    expect(rotated.old.status).toBe('revoking');
    expect((await call(rotated.apiKey, { SurveyCode: 'GSS' })).status).toBe(200);
    expect((await call(old.apiKey, { SurveyCode: 'GSS' })).status).toBe(200);
    await within(4000, async () => (await call(old.apiKey, { SurveyCode: 'GSS' })).status === 401);
    await expect(rotateKey(db, account.id, old.key.id)).rejects.toThrow(/revoked/);
  });

  it('users get a one-time password stored only as a scrypt hash; a second user with the same e-mail is refused', async () => {
    const { user, oneTimePassword } = await addUser(db, 'acme', 'Analyst@Acme.example');
    expect(user.email).toBe('analyst@acme.example');
    expect(user.mustChangePassword).toBe(true);
    const { rows } = await db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [user.id]);
    expect(rows[0]?.password_hash).toMatch(/^scrypt\$/);
    expect(await verifyPassword(oneTimePassword, rows[0]?.password_hash as string)).toBe(true);
    expect(await verifyPassword(`${oneTimePassword}x`, rows[0]?.password_hash as string)).toBe(false);
    await expect(addUser(db, 'acme', 'analyst@acme.example')).rejects.toThrow(/already has a user/);
    await expect(addUser(db, 'nobody', 'x@acme.example')).rejects.toThrow(/no account "nobody"/);
  });

  it('a password reset lifts a lockout, ends the sessions and forces a new password; a disabled user cannot sign in', async () => {
    const { user, oneTimePassword } = await addUser(db, 'acme', 'locked@acme.example');
    const first = await signIn(db, user.email, oneTimePassword);
    expect(first.ok).toBe(true);
    const sessionId = (first as { sessionId: string }).sessionId;
    expect(await sessionOf(db, sessionId)).toBeDefined();
    for (let attempt = 0; attempt < MAX_FAILED_SIGN_INS; attempt++) await signIn(db, user.email, 'wrong password');
    expect(await signIn(db, user.email, oneTimePassword)).toMatchObject({ ok: false, message: expect.stringMatching(/locked/) });

    const reset = await resetUserPassword(db, 'Locked@Acme.example');
    expect(reset.user).toMatchObject({ email: user.email, mustChangePassword: true, disabled: false });
    expect(reset.oneTimePassword).not.toBe(oneTimePassword);
    expect(await sessionOf(db, sessionId)).toBeUndefined();
    expect((await signIn(db, user.email, oneTimePassword)).ok).toBe(false);
    const again = await signIn(db, user.email, reset.oneTimePassword);
    expect(again.ok).toBe(true);

    expect((await setUserDisabled(db, user.email, true)).disabled).toBe(true);
    expect(await sessionOf(db, (again as { sessionId: string }).sessionId)).toBeUndefined();
    expect(await signIn(db, user.email, reset.oneTimePassword)).toMatchObject({ ok: false, message: expect.stringMatching(/disabled/) });
    expect((await setUserDisabled(db, user.email, false)).disabled).toBe(false);
    expect((await signIn(db, user.email, reset.oneTimePassword)).ok).toBe(true);

    await expect(resetUserPassword(db, 'nobody@acme.example')).rejects.toThrow(/no user has the e-mail address nobody@acme\.example/);
    await expect(setUserDisabled(db, 'not an e-mail', true)).rejects.toThrow(/must be an e-mail address/);
  });

  it('bad input leaves nothing half-written', async () => {
    await expect(addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:_ALL_']))).rejects.toThrow(/already taken/);
    expect(() => parseLicences(['GSS'], ['NHANES:demographics'])).toThrow(/which is not in surveys \(GSS\)/);
    expect(() => parseLicences([], [])).toThrow(/^surveys must name/);
    expect(() => parseLicences(['GSS'], ['GSS'])).toThrow(/SURVEY:GROUP/);
    // A licence insert that fails half-way (a permission of a survey the account does not
    // license violates the foreign key) rolls the whole account back.
    await expect(
      db.transaction(async (tx) => {
        await tx.query("INSERT INTO accounts (id, name) VALUES ('acc_half', 'half')");
        await tx.query("INSERT INTO survey_permissions (account_id, survey, authorization_group) VALUES ('acc_half', 'GSS', '_ALL_')");
      }),
    ).rejects.toThrow();
    expect((await db.query("SELECT 1 FROM accounts WHERE name = 'half'")).rows).toEqual([]);
  });

  async function rawCall(origin: string, apiKey: string): Promise<{ status: number; retryAfter: string | null; body: { ResultCode?: number; error?: { code: string } } }> {
    const response = await fetch(`${origin}/crosstab`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey },
      body: JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=1'] }),
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as never };
  }

  it('rate limit: 429 with Retry-After and the error body, never billed, counted across two replicas', async () => {
    await addAccount(db, 'limited', parseLicences(['GSS'], ['GSS:_ALL_']), { rateLimitPerMinute: 4 });
    const { apiKey } = await addKey(db, { account: 'limited', name: 'production' });
    // A second replica: its own key store, sink and server; on PostgreSQL its own connection pool.
    const db2 = url.startsWith('postgres://') ? await openDatabase(url) : db;
    const server2 = await listen(await createCrosstabHandler({ datasets, keys: new DbKeyStore(db2), usage: new DbUsageSink(db2) }), { port: 0 });
    try {
      const minuteBefore = Math.floor(Date.now() / 60_000);
      const answers = [];
      for (let i = 0; i < 10; i++) answers.push(await rawCall(i % 2 === 0 ? server.url : server2.url, apiKey));
      const sameMinute = Math.floor(Date.now() / 60_000) === minuteBefore;
      const ok = answers.filter((answer) => answer.status === 200).length;
      // Fixed one-minute windows: within one window exactly the limit passes; across a window boundary at most twice.
      if (sameMinute) expect(ok).toBe(4);
      else expect(ok).toBeLessThanOrEqual(8);
      const refused = answers.filter((answer) => answer.status !== 200);
      expect(refused.length).toBeGreaterThan(0);
      for (const answer of refused) {
        expect(answer.status).toBe(429);
        expect(answer.body).toMatchObject({ ResultCode: 429, error: { code: 'rate_limited' } });
        expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(Number(answer.retryAfter)).toBeLessThanOrEqual(60);
      }
      const billed = await usageReport(db, { account: 'limited' });
      expect(billed.calls).toBe(ok);
      // A server shares the windows as rows; an embedded database (one process) counts them in memory.
      const windows = await db.query<{ calls: number }>("SELECT calls FROM rate_windows w JOIN accounts a ON a.id = w.account_id WHERE a.name = 'limited'");
      if (db.kind === 'postgres') expect(windows.rows.reduce((sum, row) => sum + row.calls, 0)).toBe(10);
      else expect(windows.rows).toEqual([]);
    } finally {
      await server2.close();
      if (db2 !== db) await db2.close();
    }
  });

  it('monthly quota: billed calls up to the quota, then 429 quota_exceeded until next month', async () => {
    await addAccount(db, 'quota', parseLicences(['GSS'], ['GSS:_ALL_']), { monthlyQuota: 2 });
    const { apiKey } = await addKey(db, { account: 'quota', name: 'production' });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await rawCall(server.url, apiKey));
    expect(statuses.map((answer) => answer.status)).toEqual([200, 200, 429, 429]);
    expect(statuses[2]?.body.error?.code).toBe('quota_exceeded');
    const now = new Date();
    const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    expect(Math.abs(Number(statuses[2]?.retryAfter) - (nextMonth - Date.now()) / 1000)).toBeLessThan(5);
    expect((await usageReport(db, { account: 'quota' })).calls).toBe(2);
  });

  it('monthly quota under a burst of concurrent calls: no more billed than the quota', async () => {
    await addAccount(db, 'burst', parseLicences(['GSS'], ['GSS:_ALL_']), { monthlyQuota: 20 });
    const { apiKey } = await addKey(db, { account: 'burst', name: 'production' });
    const answers = await Promise.all(Array.from({ length: 60 }, () => rawCall(server.url, apiKey)));
    const ok = answers.filter((answer) => answer.status === 200).length;
    expect(ok).toBe(20);
    expect(answers.filter((answer) => answer.status === 429 && answer.body.error?.code === 'quota_exceeded')).toHaveLength(40);
    // A second burst after the count is read again (1 s): nothing more.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const later = await Promise.all(Array.from({ length: 20 }, () => rawCall(server.url, apiKey)));
    expect(later.filter((answer) => answer.status === 200)).toHaveLength(0);
    expect((await usageReport(db, { account: 'burst' })).calls).toBe(20);
  });

  it('bills exactly the 200s, per key, day and survey', async () => {
    const report = await usageReport(db, { account: 'acme', by: 'survey' });
    expect(report.rows).toEqual([
      { survey: 'GSS', calls: 1 },
      { survey: 'NHANES', calls: 2 },
    ]);
    const all = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM usage u JOIN accounts a ON a.id = u.account_id WHERE a.name NOT IN ('limited', 'quota', 'burst')");
    expect(all.rows[0]?.n).toBe(okCalls);
    const byKey = await usageReport(db, { account: 'acme', by: 'key' });
    expect(byKey.rows).toEqual([expect.objectContaining({ name: 'production', calls: 3 })]);
    expect((await usageReport(db, { account: 'acme', by: 'operation' })).rows).toEqual([{ operation: 'crosstab', calls: 3 }]);
    const today = new Date().toISOString().slice(0, 10);
    expect((await usageReport(db, { account: 'acme', by: 'day', from: today, to: today })).rows).toEqual([{ day: today, calls: 3 }]);
    expect((await usageReport(db, { account: 'acme', from: '2000-01-01', to: '2000-01-31' })).calls).toBe(0);
    await expect(usageReport(db, { account: 'acme', by: 'week' })).rejects.toThrow(/key, day, survey or operation/);
    await expect(usageReport(db, { account: 'acme', from: 'yesterday' })).rejects.toMatchObject({ details: { field: 'from' } });
  });

  it('keeps saved tables per user, shared within their account only', async () => {
    await addAccount(db, 'tables-a', parseLicences(['GSS'], ['GSS:_ALL_']));
    await addAccount(db, 'tables-b', parseLicences(['GSS'], ['GSS:_ALL_']));
    const owner = (await addUser(db, 'tables-a', 'owner@tables-a.example')).user;
    const colleague = (await addUser(db, 'tables-a', 'colleague@tables-a.example')).user;
    const stranger = (await addUser(db, 'tables-b', 'stranger@tables-b.example')).user;
    const as = (user: typeof owner) => ({ accountId: user.accountId, userId: user.id });
    const saved = await saveTable(db, as(owner), { name: 'Degree by sex', spec: '{"SurveyCode":"GSS"}', result: '{"cells":[]}', shared: false });
    expect(saved).toMatchObject({ name: 'Degree by sex', owner: 'owner@tables-a.example', shared: false, result: '{"cells":[]}' });
    expect(saved.computedAt).not.toBeNull();
    expect((await listSavedTables(db, as(colleague))).map((table) => table.id)).toEqual([]);
    expect(await savedTable(db, as(colleague), saved.id)).toBeUndefined();
    // Only the owner shares; then the colleague sees it, and nobody of another account ever does.
    expect(await setSavedTableShared(db, as(colleague), saved.id, true)).toBe(false);
    expect(await setSavedTableShared(db, as(owner), saved.id, true)).toBe(true);
    expect((await listSavedTables(db, as(colleague))).map((table) => table.id)).toEqual([saved.id]);
    expect((await savedTable(db, as(colleague), saved.id))?.spec).toBe('{"SurveyCode":"GSS"}');
    expect(await listSavedTables(db, as(stranger))).toEqual([]);
    expect(await savedTable(db, { accountId: stranger.accountId, userId: owner.id }, saved.id)).toBeUndefined();
    expect(await savedTable(db, as(stranger), saved.id)).toBeUndefined();
    expect(await deleteSavedTable(db, as(colleague), saved.id)).toBe(false);
    await expect(saveTable(db, as(owner), { name: ' ', spec: '{}', result: null, shared: false })).rejects.toMatchObject({ details: { field: 'tableName' } });
    expect(await deleteSavedTable(db, as(owner), saved.id)).toBe(true);
    expect(await listSavedTables(db, as(owner))).toEqual([]);
  });
});
