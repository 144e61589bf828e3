// Per-address throttling of portal sign-ins over real HTTP, on the embedded database and on
// a PostgreSQL server (where two replicas on one database share the counts): after N failed
// sign-ins from one address, the next attempt from it gets 429 with Retry-After and a clear
// message, even with the right password; another address still signs in.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addUser, DbKeyStore, DbUsageSink, openDatabase, parseLicences, type Database } from '../../src/access/index.js';
import { createPortal, mountPortal } from '../../src/portal/index.js';
import { tempDir } from '../http/support.js';
import { send, type Reply } from './portal-client.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const paths = inject('testDatasets');
const MAX_FAILURES = 4;
let postgres: PostgresServer;
let dataset: Dataset;

beforeAll(async () => {
  postgres = await startPostgres();
  dataset = await openDataset(paths.gss);
});
afterAll(() => {
  dataset?.close();
  postgres?.stop();
});

/** GET the form (CSRF cookie + token), then POST it. */
async function signIn(origin: string, email: string, password: string, from?: string, headers?: Record<string, string>): Promise<Reply> {
  const form = await send(origin, 'GET', '/portal/sign-in', { ...(from ? { from } : {}) });
  const cookie = String(form.headers['set-cookie']).split(';')[0] as string;
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)?.[1] as string;
  return send(origin, 'POST', '/portal/sign-in', { ...(from ? { from } : {}), cookie, form: { csrf, email, password }, ...(headers ? { headers } : {}) });
}

const alertOf = (reply: Reply): string => (/role="alert"[^>]*>([\s\S]*?)<\//.exec(reply.body)?.[1] ?? '').replace(/\s+/g, ' ').trim();

const stores: Array<[string, () => Promise<string>]> = [
  ['embedded PGlite', async () => newEmbeddedFolder(join(tempDir('crosstab-throttle-'), 'db'))],
  ['PostgreSQL server', async () => postgres.createDatabase(`throttle_${Date.now()}`)],
];

describe.each(stores)('portal sign-in throttling per address on %s', (name, location) => {
  let db: Database;
  const servers: RunningServer[] = [];
  const origins: string[] = [];
  let password: string;
  let secondDb: Database | undefined;

  beforeAll(async () => {
    const url = await location();
    db = await openDatabase(url);
    await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:_ALL_']));
    ({ oneTimePassword: password } = await addUser(db, 'acme', 'analyst@acme.example'));
    // On a server, a second replica with its own connection pool on the same database.
    const dbs = [db];
    if (name === 'PostgreSQL server') dbs.push((secondDb = await openDatabase(url)));
    for (const [index, replicaDb] of dbs.entries()) {
      const keys = new DbKeyStore(replicaDb);
      const api = await createCrosstabHandler({ datasets: [dataset], keys, usage: new DbUsageSink(replicaDb) });
      const portal = createPortal({ db: replicaDb, keys, apiUrl: 'http://127.0.0.1/v1', exampleBody: '{}', signInThrottle: { maxFailures: MAX_FAILURES, windowSeconds: 120 }, trustProxy: index === 0 });
      const server = await listen(mountPortal(api, portal), { port: 0 });
      servers.push(server);
      origins.push(server.url.replace(/\/v1$/, ''));
    }
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    await secondDb?.close();
    await db?.close();
  });

  it(`refuses an address with 429 and Retry-After after ${MAX_FAILURES} failures, even with the right password; other addresses sign in`, async () => {
    const from = '127.0.0.2';
    // Different users: the per-user lockout (5 in a row) is not what stops them.
    for (let i = 0; i < MAX_FAILURES; i++) {
      const reply = await signIn(origins[i % origins.length] as string, `guess${i}@acme.example`, 'wrong password', from);
      expect(reply.status).toBe(401);
      expect(alertOf(reply)).toMatch(/Wrong e-mail address or password/);
    }
    const refused = await signIn(origins.at(-1) as string, 'analyst@acme.example', password, from);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(120);
    expect(alertOf(refused)).toMatch(/Too many failed sign-ins from your network address: try again in 2 minutes/);
    // The page is the sign-in form again, with a fresh CSRF token, and no session cookie.
    expect(refused.body).toMatch(/name="csrf"/);
    expect(String(refused.headers['set-cookie'])).not.toMatch(/crosstab_portal=/);

    // Another address is not affected: the one-time password signs in (and must be changed).
    const other = await signIn(origins[0] as string, 'analyst@acme.example', password, '127.0.0.3');
    expect(other.status).toBe(303);
    expect(other.headers['location']).toBe('/portal/keys');
  });

  it('a form without its CSRF token is still refused as before (403), throttled or not', async () => {
    const reply = await send(origins[0] as string, 'POST', '/portal/sign-in', { from: '127.0.0.2', form: { email: 'analyst@acme.example', password: 'x' } });
    expect(reply.status).toBe(403);
  });

  it('behind a trusted proxy (the first replica is configured so), counts the address the proxy appended to X-Forwarded-For', async () => {
    const origin = origins[0] as string;
    // The client may write any X-Forwarded-For; the proxy appends the real address last.
    for (let i = 0; i < MAX_FAILURES; i++) {
      expect((await signIn(origin, `proxy${i}@acme.example`, 'wrong', '127.0.0.4', { 'x-forwarded-for': `10.9.9.${i}, 203.0.113.7` })).status).toBe(401);
    }
    expect((await signIn(origin, 'analyst@acme.example', 'wrong', '127.0.0.4', { 'x-forwarded-for': '203.0.113.7' })).status).toBe(429);
    // The same proxy (peer 127.0.0.4) forwarding another client is not throttled.
    expect((await signIn(origin, 'analyst@acme.example', 'wrong', '127.0.0.4', { 'x-forwarded-for': '203.0.113.8' })).status).toBe(401);
  });
});

describe('the address a sign-in is counted against', () => {
  it('is the peer, IPv4-mapped addresses as IPv4, IPv6 per /64, X-Forwarded-For only when trusted', async () => {
    const { clientAddress, proxyTrust } = await import('../../src/http/index.js');
    const at = (remoteAddress: string, forwarded?: string, trust = false) => clientAddress({ method: 'POST', path: '/', headers: forwarded ? { 'x-forwarded-for': forwarded } : {}, remoteAddress }, proxyTrust(trust));
    expect(at('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(at('2001:db8:0:1::5')).toBe('2001:db8:0:1::/64');
    expect(at('2001:0db8:0000:0001:ffff:1:2:3')).toBe('2001:db8:0:1::/64');
    expect(at('::1')).toBe('0:0:0:0::/64');
    expect(at('192.0.2.1', '198.51.100.1')).toBe('192.0.2.1');
    expect(at('192.0.2.1', '10.0.0.1, 198.51.100.1', true)).toBe('198.51.100.1');
  });
});
