// The portal reads a form as the API reads a body: within the body timeout (408 after it,
// not held until the server's 30 s request timeout) and at most maxBodyBytes (413 "Form too
// large", not 403 "Form refused").
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addUser, DbKeyStore, DbUsageSink, openDatabase, parseLicences, type Database } from '../../src/access/index.js';
import { createPortal, mountPortal } from '../../src/portal/index.js';
import { tempDir } from '../http/support.js';
import { cookieOf, csrfOf, postSignIn, send, signInForm } from './portal-client.js';

describe('portal form bodies', () => {
  let db: Database;
  let server: RunningServer;
  let origin: string;
  let cookie: string;
  let csrf: string;
  let gss: Dataset;

  beforeAll(async () => {
    db = await openDatabase(join(tempDir('crosstab-portal-body-'), 'db'));
    await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:demographics']));
    const keys = new DbKeyStore(db);
    const api = await createCrosstabHandler({ datasets: [(gss = await openDataset(inject('testDatasets').gss))], keys, usage: new DbUsageSink(db), bodyTimeoutMs: 400 });
    server = await listen(mountPortal(api, createPortal({ db, keys, apiUrl: 'http://127.0.0.1/v1', exampleBody: '{}' })), { port: 0 });
    origin = server.url.replace(/\/v1$/, '');
    const { user, oneTimePassword } = await addUser(db, 'acme', 'analyst@acme.example');
    await db.query('UPDATE users SET must_change_password = false WHERE id = $1', [user.id]);
    cookie = cookieOf(await postSignIn(origin, await signInForm(origin), user.email, oneTimePassword), 'crosstab_portal') as string;
    csrf = csrfOf(await send(origin, 'GET', '/portal/keys', { cookie }));
  });
  afterAll(async () => {
    await server?.close();
    await db?.close();
    gss?.close();
  });

  it('answers a form larger than maxBodyBytes with 413, naming the limit', async () => {
    const reply = await send(origin, 'POST', '/portal/keys', { cookie, form: { csrf, name: 'x'.repeat(20_000) } });
    expect(reply.status).toBe(413);
    expect(reply.body).toContain('larger than 16384 bytes');
    expect(reply.headers['connection']).toBe('close');
    // A form within the limit still works.
    expect((await send(origin, 'POST', '/portal/keys', { cookie, form: { csrf, name: 'ci' } })).status).toBe(200);
  });

  it('answers a form whose body stops coming with 408 after the body timeout', async () => {
    const { port } = new URL(origin);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(`POST /portal/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\ncsrf=`);
      });
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('did not arrive within 400 ms');
  });
});
