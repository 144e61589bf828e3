// Saved tables cannot take the service down, on PGlite and on PostgreSQL: the Tables page
// lists them without reading their results (30 saves of 1 MB: a page view reads kilobytes),
// opening one reads that one only, and the bounds per user, per account and per result refuse
// a save with an error naming the limit (before anything is billed where it can be known).
// Only the owner's computing refreshes a stored result; a result whose groups the account
// lost is not shown.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addUser, DbKeyStore, DbUsageSink, openDatabase, parseLicences, saveTable, updateAccount, type Database } from '../../src/access/index.js';
import { createPortal, mountPortal } from '../../src/portal/index.js';
import { tempDir } from '../http/support.js';
import { alertOf, cookieOf, csrfOf, postSignIn, send } from './portal-client.js';
import { signInForm } from './portal-client.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const paths = inject('testDatasets');
let postgres: PostgresServer | undefined;
afterAll(() => postgres?.stop());
const stores: Array<[string, () => Promise<string>]> = [
  ['embedded PGlite', async () => newEmbeddedFolder(join(tempDir('crosstab-saved-'), 'db'))],
  ['PostgreSQL server', async () => (postgres ??= await startPostgres()).createDatabase(`saved_${Date.now()}`)],
];

interface Person {
  id: string;
  cookie: string;
  csrf: string;
}

describe.each(stores)('saved tables (%s)', (_store, location) => {
  let db: Database;
  let gss: Dataset;
  const servers: RunningServer[] = [];
  let roomy: string;
  let tight: string;
  /** Bytes of the rows the portal's queries read since the last reset. */
  let bytesRead = 0;

  /** The database as the portal sees it, counting the bytes of every row its queries read. */
  function counting(database: Database): Database {
    return new Proxy(database, {
      get(target, property) {
        if (property === 'query') {
          return async (...args: Parameters<Database['query']>) => {
            const result = await target.query(...args);
            bytesRead += Buffer.byteLength(JSON.stringify(result.rows));
            return result;
          };
        }
        const value = Reflect.get(target, property) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  async function person(origin: string, account: string, email: string): Promise<Person> {
    const { user, oneTimePassword } = await addUser(db, account, email);
    await db.query('UPDATE users SET must_change_password = false WHERE id = $1', [user.id]);
    const signed = await postSignIn(origin, await signInForm(origin), user.email, oneTimePassword);
    const cookie = cookieOf(signed, 'crosstab_portal') as string;
    return { id: user.id, cookie, csrf: csrfOf(await send(origin, 'GET', '/portal/tables', { cookie })) };
  }
  const form = (who: Person, fields: Record<string, string>) => {
    const posted = new URLSearchParams({ csrf: who.csrf, survey: 'GSS', base: 'year=2024', rows: 'race', columns: 'sex', weight: '', missing: 'hide', action: 'compute', ...fields });
    posted.append('stat', 'sig');
    return posted;
  };
  const usageCount = async () => Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM usage')).rows[0]!.n);

  beforeAll(async () => {
    db = await openDatabase(await location());
    await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:demographics']));
    await addAccount(db, 'small', parseLicences(['GSS'], ['GSS:demographics']));
    await addAccount(db, 'wide', parseLicences(['GSS'], ['GSS:demographics', 'GSS:attitudes']));
    gss = await openDataset(paths.gss);
    const keys = new DbKeyStore(db);
    for (const savedTables of [undefined, { perUser: 2, perAccount: 3, resultBytes: 64 * 1024, accountBytes: 20 * 1024 * 1024 }]) {
      const api = await createCrosstabHandler({ datasets: [gss], keys, usage: new DbUsageSink(db) });
      const portal = createPortal({ db: counting(db), keys, apiUrl: 'http://127.0.0.1/v1', exampleBody: '{}', surveys: [gss], ...(savedTables ? { savedTables } : {}) });
      servers.push(await listen(mountPortal(api, portal), { port: 0 }));
    }
    [roomy, tight] = servers.map((server) => server.url.replace(/\/v1$/, '')) as [string, string];
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    await db?.close();
    gss?.close();
  });

  it('lists 30 saves of 1 MB each without reading their results; opening one reads that one only', async () => {
    const analyst = await person(roomy, 'acme', 'analyst@acme.example');
    const saved = await send(roomy, 'POST', '/portal/tables', { cookie: analyst.cookie, form: form(analyst, { action: 'save', tableName: 'Seed' }) });
    expect(saved.status, alertOf(saved)).toBe(303);
    const seed = (await db.query<{ result: string; spec: string }>('SELECT result, spec FROM saved_tables')).rows[0]!;
    const padded = JSON.stringify({ ...JSON.parse(seed.result), padding: 'x'.repeat(1024 * 1024) });
    const owner = { accountId: (await db.query<{ id: string }>("SELECT id FROM accounts WHERE name = 'acme'")).rows[0]!.id, userId: analyst.id };
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push((await saveTable(db, owner, { name: `Large ${i}`, spec: seed.spec, result: padded, shared: i % 2 === 0 }, { perUser: 100, perAccount: 100, resultBytes: 2 * 1024 * 1024, accountBytes: 64 * 1024 * 1024 })).id);

    bytesRead = 0;
    const page = await send(roomy, 'GET', '/portal/tables', { cookie: analyst.cookie });
    expect(page.status).toBe(200);
    for (const id of ids) expect(page.body).toContain(`/portal/tables/saved/${id}`);
    // 31 MB stored; the page view reads the list's names, specs and sizes.
    expect(bytesRead).toBeLessThan(100 * 1024);
    expect(page.body.length).toBeLessThan(200 * 1024);

    bytesRead = 0;
    const opened = await send(roomy, 'GET', `/portal/tables/saved/${ids[7]}`, { cookie: analyst.cookie });
    expect(opened.status, alertOf(opened)).toBe(200);
    expect(opened.body).toContain('data-line="vpct"');
    expect(bytesRead).toBeGreaterThan(1024 * 1024);
    expect(bytesRead).toBeLessThan(1.2 * 1024 * 1024);

    // A result stored before a smaller bound is not read when opened on a portal bounded at 64 KB.
    bytesRead = 0;
    const bounded = await send(tight, 'GET', `/portal/tables/saved/${ids[7]}`, { cookie: analyst.cookie });
    expect(bounded.status).toBe(200);
    expect(alertOf(bounded)).toMatch(/more than a saved table may store now/);
    expect(bounded.body).not.toContain('data-line="vpct"');
    expect(bytesRead).toBeLessThan(100 * 1024);
  });

  it('refuses a save past the bounds per user, per account and per result, naming the limit', async () => {
    const first = await person(tight, 'small', 'first@small.example');
    const second = await person(tight, 'small', 'second@small.example');
    for (const name of ['One', 'Two']) expect((await send(tight, 'POST', '/portal/tables', { cookie: first.cookie, form: form(first, { action: 'save', tableName: name }) })).status).toBe(303);
    const billed = await usageCount();
    const third = await send(tight, 'POST', '/portal/tables', { cookie: first.cookie, form: form(first, { action: 'save', tableName: 'Three' }) });
    expect(third.status).toBe(409);
    expect(alertOf(third)).toMatch(/You have 2 saved tables, the most one user may keep \(2, the limit savedTables\.perUser\)\..*Nothing was computed or billed\./);
    expect(await usageCount()).toBe(billed);

    expect((await send(tight, 'POST', '/portal/tables', { cookie: second.cookie, form: form(second, { action: 'save', tableName: 'Three' }) })).status).toBe(303);
    const fourth = await send(tight, 'POST', '/portal/tables', { cookie: second.cookie, form: form(second, { action: 'save', tableName: 'Four' }) });
    expect(fourth.status).toBe(409);
    expect(alertOf(fourth)).toMatch(/Your account has 3 saved tables, the most it may keep \(3, the limit savedTables\.perAccount\)/);
    expect(Number((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM saved_tables t JOIN accounts a ON a.id = t.account_id WHERE a.name = 'small'")).rows[0]!.n)).toBe(3);

    // A result over 64 KB: computed, billed and shown, but not stored.
    const wide = await person(tight, 'wide', 'large@wide.example');
    const before = await usageCount();
    const large = await send(tight, 'POST', '/portal/tables', { cookie: wide.cookie, form: form(wide, { action: 'save', tableName: 'Large', base: '*', rows: 'age', columns: 'degree\nrace' }) });
    expect(large.status).toBe(409);
    expect(alertOf(large)).toMatch(/^Not saved: This table&#39;s result is [\d.]+ MB, more than a saved table may store \(0\.06 MB, the limit savedTables\.resultBytes\)/);
    expect(large.body).toContain('data-line="vpct"');
    expect(await usageCount()).toBe(before + 1);
    expect((await db.query("SELECT 1 FROM saved_tables WHERE name = 'Large'")).rows).toEqual([]);
  });

  it('refreshes a stored result only for its owner: a colleague computing a shared table does not rewrite it', async () => {
    const owner = await person(roomy, 'acme', 'owner@acme.example');
    const colleague = await person(roomy, 'acme', 'colleague@acme.example');
    const saved = await send(roomy, 'POST', '/portal/tables', { cookie: owner.cookie, form: form(owner, { action: 'save', tableName: 'Shared one', shared: '1' }) });
    const id = /(tbl_[0-9a-f]{16})/.exec(saved.headers['location'] as string)![1]!;
    const stamp = async () => (await db.query<{ computed_at: Date | string; result: string }>('SELECT computed_at, result FROM saved_tables WHERE id = $1', [id])).rows[0]!;
    await db.query("UPDATE saved_tables SET computed_at = '2020-01-01T00:00:00Z', result = result || ' ' WHERE id = $1", [id]);
    const before = await stamp();
    expect((await send(roomy, 'GET', `/portal/tables/saved/${id}`, { cookie: colleague.cookie })).status).toBe(200);
    const computed = await send(roomy, 'POST', '/portal/tables', { cookie: colleague.cookie, form: form(colleague, { saved: id }) });
    expect(computed.status, alertOf(computed)).toBe(200);
    expect(await stamp()).toEqual(before);
    const refreshed = await send(roomy, 'POST', '/portal/tables', { cookie: owner.cookie, form: form(owner, { saved: id }) });
    expect(refreshed.status, alertOf(refreshed)).toBe(200);
    expect((await stamp()).result).not.toBe(before.result);
  });

  it('keeps one table per name and user: two saves of a new name at once make one table, and saving the reopened table updates it', async () => {
    const analyst = await person(roomy, 'acme', 'twice@acme.example');
    const [a, b] = await Promise.all([0, 1].map(() => send(roomy, 'POST', '/portal/tables', { cookie: analyst.cookie, form: form(analyst, { action: 'save', tableName: 'Twice' }) })));
    expect([a!.status, b!.status].sort()).toEqual([303, 409]);
    expect(alertOf([a!, b!].find((reply) => reply.status === 409)!)).toMatch(/You already have a saved table named/);
    const rows = async () => (await db.query<{ id: string; spec: string }>("SELECT t.id, t.spec FROM saved_tables t JOIN users u ON u.id = t.user_id WHERE u.email = 'twice@acme.example'")).rows;
    expect(await rows()).toHaveLength(1);
    const id = (await rows())[0]!.id;
    const updated = await send(roomy, 'POST', '/portal/tables', { cookie: analyst.cookie, form: form(analyst, { action: 'save', tableName: 'Twice', saved: id, base: 'year=2022' }) });
    expect(updated.status, alertOf(updated)).toBe(303);
    expect(await rows()).toHaveLength(1);
    expect(JSON.parse((await rows())[0]!.spec).PopulationBaseCode).toBe('year=2022');
    expect((await send(roomy, 'POST', `/portal/tables/saved/${id}/rename`, { cookie: analyst.cookie, form: { csrf: analyst.csrf, tableName: 'Once' } })).status).toBe(303);
    expect((await db.query('SELECT name FROM saved_tables WHERE id = $1', [id])).rows).toEqual([{ name: 'Once' }]);
  });

  it('does not show a stored result after the account lost the group it used', async () => {
    const analyst = await person(roomy, 'wide', 'analyst@wide.example');
    const saved = await send(roomy, 'POST', '/portal/tables', { cookie: analyst.cookie, form: form(analyst, { action: 'save', tableName: 'Views by sex', rows: 'polviews' }) });
    expect(saved.status, alertOf(saved)).toBe(303);
    const id = /(tbl_[0-9a-f]{16})/.exec(saved.headers['location'] as string)![1]!;
    expect((await send(roomy, 'GET', `/portal/tables/saved/${id}`, { cookie: analyst.cookie })).body).toContain('Extremely liberal');
    await updateAccount(db, 'wide', { licences: parseLicences(['GSS'], ['GSS:demographics']) });
    const opened = await send(roomy, 'GET', `/portal/tables/saved/${id}`, { cookie: analyst.cookie });
    expect(opened.status).toBe(403);
    expect(alertOf(opened)).toMatch(/may no longer use/);
    expect(opened.body).not.toContain('data-line="vpct"');
    expect(opened.body).not.toContain('Extremely liberal');
    expect(opened.body).not.toContain('polviews');
  });
});
