// A saved table of the portal whose base or entries use a saved audience: it opens while the
// account may use what the audience uses, and its stored result stays hidden once it may not.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAudience, deleteAudience, parseLicences, updateAccount, updateAudience, type Database } from '../../src/access/index.js';
import type { AudienceRecord } from '../../src/keys/index.js';
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

  it('says a stored result is as of its save when an audience it uses was edited or deleted since', async () => {
    await updateAccount(db, 'acme', { licences: parseLicences(['GSS'], ['GSS:_ALL_']) });
    const account = { accountId: portal!.accountId };
    const whites = (await createAudience(db, account, { survey: 'GSS', name: 'whites', expression: 'race=1', label: null, shared: true })) as AudienceRecord;
    await createAudience(db, account, { survey: 'GSS', name: 'white-men', expression: '@whites AND sex=1', label: null, shared: true });
    const open = async (tableName: string, base: string) => {
      const form = new URLSearchParams({ csrf, survey: 'GSS', base, rows: 'race', columns: 'sex', weight: '', missing: 'hide', action: 'save', tableName });
      const saved = await send(origin, 'POST', '/portal/tables', { cookie, form });
      expect(saved.status, alertOf(saved)).toBe(303);
      const location = String(saved.headers.location).replace(/^https?:\/\/[^/]+/, '');
      return () => send(origin, 'GET', location, { cookie });
    };
    const direct = await open('Whites by race', '@whites');
    const nested = await open('White men by race', '@white-men AND year=2000..');
    for (const page of [await direct(), await nested()]) {
      expect(page.status, alertOf(page)).toBe(200);
      expect(page.body).toContain('Stored result computed');
      expect(page.body).not.toContain('changed since');
    }
    // @whites now means other respondents: the stored figures counted the old ones.
    expect(await updateAudience(db, account, whites.id, { survey: 'GSS', name: 'whites', expression: 'race=2', label: null, shared: true })).toMatchObject({ expression: 'race=2' });
    for (const page of [await direct(), await nested()]) {
      expect(page.status, alertOf(page)).toBe(200);
      const said = /<div class="notice info" role="status">([^<]*)<\/div>/.exec(page.body)?.[1] ?? '';
      expect(said).toMatch(/^These figures are as of \d{4}-\d\d-\d\d \d\d:\d\d UTC, when the table was saved: the audience @whites it uses was changed since \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)/);
    }
    // Deleted: the page does not show the stored figures, and says why.
    expect(await deleteAudience(db, account, whites.id)).toBe(true);
    const gone = await direct();
    expect(gone.body).not.toContain('Stored result computed');
    expect(alertOf(gone)).toContain('@whites');
  });
});
