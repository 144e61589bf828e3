// A saved table of the portal whose base or entries use a saved audience: it opens while the
// account may use what the audience uses, and its stored result stays hidden once it may not.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addUser, createAudience, DbAudienceStore, DbKeyStore, DbUsageSink, openDatabase, parseLicences, updateAccount, type Database } from '../../src/access/index.js';
import { createPortal, mountPortal } from '../../src/portal/index.js';
import { tempDir } from '../http/support.js';
import { alertOf, cookieOf, csrfOf, postSignIn, send, signInForm } from './portal-client.js';

const paths = inject('testDatasets');

describe('a saved table using a saved audience (portal, embedded database)', () => {
  let db: Database;
  let gss: Dataset;
  let server: RunningServer;
  let origin: string;
  let cookie: string;
  let csrf: string;

  beforeAll(async () => {
    db = await openDatabase(join(tempDir('crosstab-portal-audience-tables-'), 'db'));
    const account = await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:_ALL_']));
    await createAudience(db, { accountId: account.id }, { survey: 'GSS', name: 'liberals', expression: 'polviews=1..3', label: null, shared: true });
    gss = await openDataset(paths.gss);
    const keys = new DbKeyStore(db, { ttlMs: 0 });
    const api = await createCrosstabHandler({ datasets: [gss], keys, usage: new DbUsageSink(db), audiences: new DbAudienceStore(db) });
    server = await listen(mountPortal(api, createPortal({ db, keys, apiUrl: 'http://127.0.0.1/v1', exampleBody: '{}', surveys: [gss] })), { port: 0 });
    origin = server.url.replace(/\/v1$/, '');
    const { user, oneTimePassword } = await addUser(db, 'acme', 'analyst@acme.example');
    await db.query('UPDATE users SET must_change_password = false WHERE id = $1', [user.id]);
    const signed = await postSignIn(origin, await signInForm(origin), user.email, oneTimePassword);
    cookie = cookieOf(signed, 'crosstab_portal') as string;
    csrf = csrfOf(await send(origin, 'GET', '/portal/tables', { cookie }));
  });
  afterAll(async () => {
    await server?.close();
    await db?.close();
    await gss?.close();
  });

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
});
