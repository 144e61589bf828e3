// A saved table of the portal whose base or entries use a saved audience: it opens while the
// account may use what the audience uses, and its stored result stays hidden once it may not.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAudience, parseLicences, updateAccount, type Database } from '../../src/access/index.js';
import { alertOf, csrfOf, send } from './portal-client.js';
import { startPortalServer, type PortalServer } from './portal-server.js';

const paths = inject('testDatasets');

describe('a saved table using a saved audience (portal, embedded database)', () => {
  let portal: PortalServer | undefined;
  let db: Database;
  let origin: string;
  let cookie: string;
  let csrf: string;

  beforeAll(async () => {
    portal = await startPortalServer({ datasets: [paths.gss], prefix: 'crosstab-portal-audience-tables-', mustChangePassword: false, audiences: true, keys: { ttlMs: 0 } });
    ({ db, origin } = portal);
    await createAudience(db, { accountId: portal.accountId }, { survey: 'GSS', name: 'liberals', expression: 'polviews=1..3', label: null, shared: true });
    cookie = await portal.signInCookie('analyst@acme.example');
    csrf = csrfOf(await send(origin, 'GET', '/portal/tables', { cookie }));
  });
  afterAll(() => portal?.close());

  it('opens while the account may use the audience, and not once it may not', async () => {
    const form = new URLSearchParams({ csrf, survey: 'GSS', base: '@liberals', rows: 'race', columns: 'sex', weight: '', missing: 'hide', action: 'save', tableName: 'Liberals by race' });
    const saved = await send(origin, 'POST', '/portal/tables', { cookie, form });
    expect(saved.status, alertOf(saved)).toBe(303);
    const location = String(saved.headers.location);
    const opened = await send(origin, 'GET', location.replace(/^https?:\/\/[^/]+/, ''), { cookie });
    expect(opened.status, alertOf(opened)).toBe(200);
    expect(opened.body).toContain('Stored result computed');
    const list = await send(origin, 'GET', '/portal/tables', { cookie });
    expect(list.body).not.toContain('uses what your account may no longer use');
    await updateAccount(db, 'acme', { licences: parseLicences(['GSS'], ['GSS:demographics']) });
    const refused = await send(origin, 'GET', location.replace(/^https?:\/\/[^/]+/, ''), { cookie });
    expect(refused.status).toBe(403);
    expect(refused.body).not.toContain('Stored result computed');
    expect(refused.body).not.toContain('polviews');
  });

  it('lists several tables using audiences with one read of the audiences, each listed as openable as opening it is', async () => {
    await updateAccount(db, 'acme', { licences: parseLicences(['GSS'], ['GSS:_ALL_']) });
    const account = { accountId: portal!.accountId };
    await createAudience(db, account, { survey: 'GSS', name: 'women', expression: 'sex=2', label: null, shared: true });
    await createAudience(db, account, { survey: 'GSS', name: 'liberal-women', expression: '@liberals AND @women', label: null, shared: true });
    const bases = { 'Women by race': '@women', 'Liberal women by race': '@liberal-women', 'Women, year 2024': '@women AND year=2024', 'Liberals by sex': '@liberals' };
    const locations = new Map<string, string>();
    for (const [tableName, base] of Object.entries(bases)) {
      const form = new URLSearchParams({ csrf, survey: 'GSS', base, rows: 'race', columns: 'sex', weight: '', missing: 'hide', action: 'save', tableName });
      const saved = await send(origin, 'POST', '/portal/tables', { cookie, form });
      expect(saved.status, alertOf(saved)).toBe(303);
      locations.set(tableName, String(saved.headers.location).replace(/^https?:\/\/[^/]+/, ''));
    }
    await updateAccount(db, 'acme', { licences: parseLicences(['GSS'], ['GSS:demographics']) });
    // The statements that read audiences while the list is made (the real ones, counted).
    const reads: string[] = [];
    const query = db.query.bind(db);
    db.query = ((text: string, params?: unknown[]) => {
      if (/\baudiences\b/.test(text)) reads.push(text);
      return query(text, params);
    }) as typeof db.query;
    let list;
    try {
      list = await send(origin, 'GET', '/portal/tables', { cookie });
    } finally {
      db.query = query;
    }
    expect(list.status).toBe(200);
    // @liberal-women uses others: the named ones, then the closure of all of them (one statement each).
    expect(reads.length).toBe(2);
    const rowOf = (tableName: string) => new RegExp(`<tr><td data-label="Table"><a [^>]*>${tableName}</a>[\\s\\S]*?</tr>`).exec(list.body)?.[0] ?? '';
    for (const [tableName, location] of locations) {
      const opened = await send(origin, 'GET', location, { cookie });
      expect([tableName, rowOf(tableName).includes('uses what your account may no longer use')]).toEqual([tableName, opened.status === 403]);
      expect([tableName, opened.status]).toEqual([tableName, tableName.includes('iberal') ? 403 : 200]);
    }
  });
});
