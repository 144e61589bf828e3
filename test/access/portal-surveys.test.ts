// The portal's Surveys page over real HTTP on the embedded database: a signed-in user sees
// the surveys and the variables, values and codes of the account's groups, and nothing else.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addUser, DbKeyStore, DbUsageSink, openDatabase, parseLicences, type Database } from '../../src/access/index.js';
import { createPortal, mountPortal } from '../../src/portal/index.js';
import { tempDir } from '../http/support.js';
import { cookieOf, postSignIn, send, signInForm } from './portal-client.js';

const paths = inject('testDatasets');

describe('portal Surveys page (embedded database)', () => {
  let db: Database;
  let gss: Dataset;
  let nhanes: Dataset;
  let server: RunningServer;
  let origin: string;
  let cookie: string;

  beforeAll(async () => {
    db = await openDatabase(join(tempDir('crosstab-portal-surveys-'), 'db'));
    await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:demographics']));
    const { user, oneTimePassword } = await addUser(db, 'acme', 'analyst@acme.example');
    await db.query('UPDATE users SET must_change_password = false WHERE id = $1', [user.id]);
    gss = await openDataset(paths.gss);
    nhanes = await openDataset(paths.nhanes);
    const keys = new DbKeyStore(db);
    const api = await createCrosstabHandler({ datasets: [gss, nhanes], keys, usage: new DbUsageSink(db) });
    server = await listen(mountPortal(api, createPortal({ db, keys, apiUrl: 'http://127.0.0.1/v1', exampleBody: '{}', surveys: [gss, nhanes] })), { port: 0 });
    origin = server.url.replace(/\/v1$/, '');
    const signed = await postSignIn(origin, await signInForm(origin), user.email, oneTimePassword);
    expect(signed.status).toBe(303);
    cookie = cookieOf(signed, 'crosstab_portal') as string;
  });
  afterAll(async () => {
    await server?.close();
    await db?.close();
    await gss?.close();
    await nhanes?.close();
  });

  it('lists the licensed surveys only, and a survey\'s variables, values and codes of the account\'s groups', async () => {
    const list = await send(origin, 'GET', '/portal/surveys', { cookie });
    expect(list.status).toBe(200);
    expect(list.body).toContain('/portal/surveys?survey=GSS');
    expect(list.body).not.toContain('NHANES');
    const page = await send(origin, 'GET', '/portal/surveys?survey=GSS', { cookie });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<code>sex=2</code> Female');
    expect(page.body).toContain('<code>degree=3..4</code>');
    // The page's text and every attribute value but the markup's own (id="main", class names).
    const text = page.body.replace(/<[^>]*>/g, ' ');
    const links = [...page.body.matchAll(/href="([^"]*)"/g)].map((match) => match[1]).join(' ');
    for (const variable of gss.info.variables) {
      if (variable.group === 'demographics') expect(page.body).toContain(`<code>${variable.name}</code>`);
      else expect(`${text} ${links}`, variable.name).not.toMatch(new RegExp(`(?<![A-Za-z0-9_])${variable.name}(?![A-Za-z0-9_])`));
    }
    expect(page.body).not.toMatch(/attitudes|LIBERAL|CONSERVATIVE|NONES/);
  });

  it('answers 404 for a survey the account does not license, and sends a signed-out visitor to sign in', async () => {
    const other = await send(origin, 'GET', '/portal/surveys?survey=NHANES', { cookie });
    expect(other.status).toBe(404);
    expect(other.body).toContain('Your account has no survey NHANES.');
    expect(other.body).not.toContain('RIAGENDR');
    expect((await send(origin, 'GET', '/portal/surveys?survey=GSS')).status).toBe(401);
  });
});
