// Portal requests over real HTTP on the embedded database, as a signed-in user sends them:
// usage ranges typed by hand (never a header built from them, never a crashed server, errors
// in the form's words with the entered values kept) and a new-key form sent twice.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addAccount, addUser, findAccount, listKeys, parseLicences, updateAccount, type Database } from '../../src/access/index.js';
import { alertOf, cookieOf, csrfOf, postSignIn, send, signInForm, type Reply } from './portal-client.js';
import { startPortalServer, type PortalServer } from './portal-server.js';

const paths = inject('testDatasets');

const valueOf = (reply: Reply, id: string): string | undefined => new RegExp(`id="${id}"[^>]*value="([^"]*)"`).exec(reply.body)?.[1];

describe('portal requests of a signed-in user (embedded database)', () => {
  let served: PortalServer;
  let db: Database;
  let origin: string;
  let cookie: string;
  let csrf: string;

  beforeAll(async () => {
    // The one-time password is accepted as the user's own: these tests are about other pages.
    served = await startPortalServer({ datasets: [paths.gss], prefix: 'crosstab-portal-requests-', mustChangePassword: false });
    ({ db, origin } = served);
    cookie = await served.signInCookie('analyst@acme.example');
    csrf = csrfOf(await send(origin, 'GET', '/portal/keys', { cookie }));
  });
  afterAll(() => served?.close());

  it('usage.csv with a date Date.parse would take (text in parentheses, a non-Latin-1 or CR LF) is a 400 page, and the server keeps serving', async () => {
    for (const from of ['Nov%201%202026%20(%C4%80)', '2026-11-01%20(%0D%0AX:%201)', 'Nov%201%202026', '2026-02-30']) {
      const reply = await send(origin, 'GET', `/portal/usage.csv?from=${from}&to=2026-12-01`, { cookie });
      expect(reply.status, from).toBe(400);
      expect(reply.headers['content-disposition']).toBeUndefined();
      expect(alertOf(reply)).toMatch(/^From must be a date \(2026-11-01\)/);
      expect((await send(origin, 'GET', '/portal/usage', { cookie })).status).toBe(200);
    }
    const csv = await send(origin, 'GET', '/portal/usage.csv?from=2026-11-01&to=2026-11-30', { cookie });
    expect(csv.status).toBe(200);
    expect(csv.headers['content-disposition']).toBe('attachment; filename="usage-acme-2026-11-01-2026-11-30.csv"');
    expect(csv.body).toBe('day,key,name,survey,calls\r\n');
  });

  it('a reversed range is reported with the form\'s labels, and the fields keep the entered values', async () => {
    const reply = await send(origin, 'GET', '/portal/usage?from=2026-11-20&to=2026-11-02', { cookie });
    expect(reply.status).toBe(400);
    expect(alertOf(reply)).toBe('To (2026-11-03T00:00:00.000Z) must be after From (2026-11-20T00:00:00.000Z).');
    expect(reply.body).not.toMatch(/--(from|to)/);
    expect(valueOf(reply, 'from')).toBe('2026-11-20');
    expect(valueOf(reply, 'to')).toBe('2026-11-02');
    const typo = await send(origin, 'GET', '/portal/usage?from=2026-11-01&to=2026-13-01', { cookie });
    expect(typo.status).toBe(400);
    expect(alertOf(typo)).toMatch(/^To must be a date/);
    expect(valueOf(typo, 'to')).toBe('2026-13-01');
  });

  /** The hidden fields of the form posting to `action` on the keys page. */
  async function keysForm(action: string): Promise<Record<string, string>> {
    const reply = await send(origin, 'GET', '/portal/keys', { cookie });
    const form = new RegExp(`<form[^>]*action="${action}"[^>]*>([\\s\\S]*?)</form>`).exec(reply.body)?.[1] as string;
    return Object.fromEntries([...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [match[1] as string, match[2] as string]));
  }

  it('a new-key form sent twice (a reload, a double click, two at once) creates one key and shows its secret once', async () => {
    const { id: accountId } = await findAccount(db, 'acme');
    const before = (await listKeys(db, accountId)).length;
    const form = { ...(await keysForm('/portal/keys')), name: 'production' };
    const first = await send(origin, 'POST', '/portal/keys', { cookie, form });
    expect(first.status).toBe(200);
    expect(first.body).toMatch(/ctk_[A-Za-z0-9_-]{43}/);
    const again = await send(origin, 'POST', '/portal/keys', { cookie, form });
    expect(again.status).toBe(409);
    expect(again.body).not.toMatch(/ctk_/);
    expect(alertOf(again)).toMatch(/^This form was already sent: it created key production \(key_[0-9a-f]{16}\)/);
    expect((await listKeys(db, accountId)).length).toBe(before + 1);

    const twin = { ...(await keysForm('/portal/keys')), name: 'staging' };
    const both = await Promise.all([send(origin, 'POST', '/portal/keys', { cookie, form: twin }), send(origin, 'POST', '/portal/keys', { cookie, form: twin })]);
    expect(both.map((reply) => reply.status).sort()).toEqual([200, 409]);
    expect(both.filter((reply) => /ctk_/.test(reply.body))).toHaveLength(1);
    expect((await listKeys(db, accountId)).length).toBe(before + 2);
  });

  it('a rotate form sent twice rotates once', async () => {
    const { id: accountId } = await findAccount(db, 'acme');
    const keys = await listKeys(db, accountId);
    const key = keys.find((candidate) => candidate.status === 'active') as { id: string };
    const form = { ...(await keysForm(`/portal/keys/${key.id}/rotate`)), grace: '3600' };
    const first = await send(origin, 'POST', `/portal/keys/${key.id}/rotate`, { cookie, form });
    expect(first.status).toBe(200);
    expect(first.body).toMatch(/ctk_/);
    const again = await send(origin, 'POST', `/portal/keys/${key.id}/rotate`, { cookie, form });
    expect(again.status).toBe(409);
    expect(again.body).not.toMatch(/ctk_/);
    expect((await listKeys(db, accountId)).length).toBe(keys.length + 1);
  });

  it('usage.csv quotes a cell with a CR, an LF, a quote or a comma (an SSO subject can hold any of them)', async () => {
    const { id: accountId } = await findAccount(db, 'acme');
    const subjects = ['sso:a\rb', 'sso:c\nd', 'sso:e"f', 'sso:g,h'];
    for (const [i, key] of subjects.entries()) {
      await db.query("INSERT INTO usage (request_id, time, account_id, key_id, survey, targets) VALUES ($1, '2026-10-05T12:00:00Z', $2, $3, 'GSS', 1)", [`req-${i}`, accountId, key]);
    }
    const csv = await send(origin, 'GET', '/portal/usage.csv?from=2026-10-01&to=2026-10-31', { cookie });
    expect(csv.status).toBe(200);
    expect(csv.body).toBe(
      'day,key,name,survey,calls\r\n' +
        ['"sso:a\rb"', '"sso:c\nd"', '"sso:e""f"', '"sso:g,h"'].sort().map((cell) => `2026-10-05,${cell},,GSS,1\r\n`).join(''),
    );
  });

  /** Signs a new user of `account` in (its one-time password taken as its own); the session cookie and password. */
  async function newUserSession(account: string, email: string): Promise<{ cookie: string; password: string }> {
    const { user, oneTimePassword } = await addUser(db, account, email);
    await db.query('UPDATE users SET must_change_password = false WHERE id = $1', [user.id]);
    const signed = await postSignIn(origin, await signInForm(origin), email, oneTimePassword);
    expect(signed.status).toBe(303);
    return { cookie: cookieOf(signed, 'crosstab_portal') as string, password: oneTimePassword };
  }

  it('a password change ends the session it was made in and answers with a new one', async () => {
    const old = await newUserSession('acme', 'changer@acme.example');
    const form = { csrf: csrfOf(await send(origin, 'GET', '/portal/password', { cookie: old.cookie })), current: old.password, next: 'a much longer new password', repeat: 'a much longer new password' };
    const changed = await send(origin, 'POST', '/portal/password', { cookie: old.cookie, form });
    expect(changed.status).toBe(303);
    const fresh = cookieOf(changed, 'crosstab_portal') as string;
    expect(fresh).toMatch(/^crosstab_portal=[A-Za-z0-9_-]{43}$/);
    expect(fresh).not.toBe(old.cookie);
    expect((await send(origin, 'GET', '/portal/keys', { cookie: fresh })).status).toBe(200);
    expect((await send(origin, 'GET', '/portal/keys', { cookie: old.cookie })).status).toBe(401);
  });

  it('disabling an account ends its portal sessions: enabling it again does not revive them', async () => {
    await addAccount(db, 'beta', parseLicences(['GSS'], ['GSS:_ALL_']));
    const session = await newUserSession('beta', 'analyst@beta.example');
    expect((await send(origin, 'GET', '/portal/keys', { cookie: session.cookie })).status).toBe(200);
    await updateAccount(db, 'beta', { disabled: true });
    expect((await send(origin, 'GET', '/portal/keys', { cookie: session.cookie })).status).toBe(401);
    await updateAccount(db, 'beta', { disabled: false });
    expect((await send(origin, 'GET', '/portal/keys', { cookie: session.cookie })).status).toBe(401);
    // Signing in again works.
    expect((await postSignIn(origin, await signInForm(origin), 'analyst@beta.example', session.password)).status).toBe(303);
  });
});
