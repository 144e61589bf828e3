// Portal sign-in under concurrent attempts, over real HTTP, on the embedded database and on
// a PostgreSQL server (two replicas, their own connection pools, one database): failures are
// counted in the database as they happen, so N concurrent wrong passwords never get more
// password checks than the per-user or per-address limit; and every refusal reads the same
// and costs the same scrypt work, whether the e-mail is unknown, known or locked.
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addUser, DbKeyStore, DbUsageSink, openDatabase, parseLicences, type Database } from '../../src/access/index.js';
import { createPortal, MAX_FAILED_SIGN_INS, mountPortal } from '../../src/portal/index.js';
import { tempDir } from '../http/support.js';
import { alertOf, postSignIn, signInForm, type Reply } from './portal-client.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const paths = inject('testDatasets');
const MAX_PER_ADDRESS = 20;
let postgres: PostgresServer;
let dataset: Dataset;

/**
 * Every scrypt derivation, by salt (base64url): node's own scrypt, wrapped so that the
 * portal's `import { scrypt } from 'node:crypto'` counts its calls too.
 */
const derivations: string[] = [];
const realScrypt = crypto.scrypt;
beforeAll(async () => {
  (crypto as { scrypt: unknown }).scrypt = (password: unknown, salt: Buffer, ...rest: unknown[]) => {
    derivations.push(Buffer.from(salt).toString('base64url'));
    return (realScrypt as (...args: unknown[]) => void)(password, salt, ...rest);
  };
  syncBuiltinESMExports();
  postgres = await startPostgres();
  dataset = await openDataset(paths.gss);
});
afterAll(() => {
  (crypto as { scrypt: unknown }).scrypt = realScrypt;
  syncBuiltinESMExports();
  dataset?.close();
  postgres?.stop();
});

const stores: Array<[string, () => Promise<string>]> = [
  ['embedded PGlite', async () => newEmbeddedFolder(join(tempDir('crosstab-sign-in-races-'), 'db'))],
  ['PostgreSQL server', async () => postgres.createDatabase(`sign_in_races_${Date.now()}`)],
];

describe.each(stores)('portal sign-in under concurrent attempts on %s', (name, location) => {
  const dbs: Database[] = [];
  const servers: RunningServer[] = [];
  const origins: string[] = [];
  const passwords = new Map<string, string>();

  /** The salt of a user's stored hash: its scrypt calls are the checks of its password. */
  async function saltOf(email: string): Promise<string> {
    const { rows } = await (dbs[0] as Database).query<{ password_hash: string }>('SELECT password_hash FROM users WHERE email = $1', [email]);
    return (rows[0]?.password_hash as string).split('$')[4] as string;
  }

  beforeAll(async () => {
    const url = await location();
    dbs.push(await openDatabase(url));
    if (name === 'PostgreSQL server') dbs.push(await openDatabase(url));
    await addAccount(dbs[0] as Database, 'acme', parseLicences(['GSS'], ['GSS:_ALL_']));
    for (const email of ['raced@acme.example', 'address@acme.example', 'known@acme.example', 'locked@acme.example']) {
      passwords.set(email, (await addUser(dbs[0] as Database, 'acme', email)).oneTimePassword);
    }
    for (const db of dbs) {
      const keys = new DbKeyStore(db);
      const api = await createCrosstabHandler({ datasets: [dataset], keys, usage: new DbUsageSink(db) });
      // Behind a (pretend) proxy: X-Forwarded-For chooses the address each attempt comes from.
      const portal = createPortal({ db, keys, apiUrl: 'http://127.0.0.1/v1', exampleBody: '{}', trustProxy: true, signInThrottle: { maxFailures: MAX_PER_ADDRESS, windowSeconds: 600 } });
      const server = await listen(mountPortal(api, portal), { port: 0 });
      servers.push(server);
      origins.push(server.url.replace(/\/v1$/, ''));
    }
  });
  afterEach(() => {
    derivations.length = 0;
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    for (const db of dbs) await db.close();
  });

  /** Fetches every form first, then posts all attempts at once, across the replicas. */
  async function concurrently(attempts: Array<{ email: string; password: string; from: string }>): Promise<Reply[]> {
    const forms = await Promise.all(attempts.map((attempt, i) => signInForm(origins[i % origins.length] as string, { 'x-forwarded-for': attempt.from })));
    derivations.length = 0;
    return Promise.all(attempts.map((attempt, i) => postSignIn(origins[i % origins.length] as string, forms[i] as { cookie: string; csrf: string }, attempt.email, attempt.password, { 'x-forwarded-for': attempt.from })));
  }

  it(`40 concurrent wrong passwords of one user: at most ${MAX_FAILED_SIGN_INS} checks of its password, then the user is locked`, async () => {
    const email = 'raced@acme.example';
    const replies = await concurrently(Array.from({ length: 40 }, (_, i) => ({ email, password: `wrong ${i}`, from: `198.51.100.${i + 1}` })));
    expect(replies.map((reply) => reply.status)).toEqual(Array(40).fill(401));
    // One scrypt derivation per attempt (the same work for each), at most the limit of them real checks.
    expect(derivations).toHaveLength(40);
    const salt = await saltOf(email);
    expect(derivations.filter((used) => used === salt).length).toBeLessThanOrEqual(MAX_FAILED_SIGN_INS);
    const { rows } = await (dbs[0] as Database).query<{ locked: boolean }>('SELECT locked_until > now() AS locked FROM users WHERE email = $1', [email]);
    expect(rows[0]?.locked).toBe(true);
    const right = await postSignIn(origins[0] as string, await signInForm(origins[0] as string, { 'x-forwarded-for': '198.51.100.200' }), email, passwords.get(email) as string, { 'x-forwarded-for': '198.51.100.200' });
    expect(right.status).toBe(401);
  });

  it(`60 concurrent failures from one address: at most ${MAX_PER_ADDRESS} are checked, the others get 429; then the right password too`, async () => {
    const from = '203.0.113.9';
    const replies = await concurrently(Array.from({ length: 60 }, (_, i) => ({ email: `nobody${i}@acme.example`, password: 'guess', from })));
    const statuses = replies.map((reply) => reply.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(MAX_PER_ADDRESS);
    expect(statuses.filter((status) => status === 429)).toHaveLength(60 - MAX_PER_ADDRESS);
    // A refused attempt (429) checks nothing; a checked one costs one derivation.
    expect(derivations).toHaveLength(MAX_PER_ADDRESS);
    const email = 'address@acme.example';
    const right = await postSignIn(origins[0] as string, await signInForm(origins[0] as string, { 'x-forwarded-for': from }), email, passwords.get(email) as string, { 'x-forwarded-for': from });
    expect(right.status).toBe(429);
  });

  it('an unknown e-mail, a wrong password and a locked user get the same answer after the same scrypt work', async () => {
    const origin = origins[0] as string;
    const attempt = async (email: string, password: string, from: string): Promise<{ reply: Reply; derivations: number }> => {
      const form = await signInForm(origin, { 'x-forwarded-for': from });
      derivations.length = 0;
      const reply = await postSignIn(origin, form, email, password, { 'x-forwarded-for': from });
      return { reply, derivations: derivations.length };
    };
    const locked = 'locked@acme.example';
    for (let i = 0; i < MAX_FAILED_SIGN_INS; i++) expect((await attempt(locked, `wrong ${i}`, `192.0.2.${i + 1}`)).reply.status).toBe(401);
    const answers = [
      await attempt('unknown@acme.example', 'wrong password', '192.0.2.100'),
      await attempt('known@acme.example', 'wrong password', '192.0.2.101'),
      await attempt(locked, 'wrong password', '192.0.2.102'),
      await attempt(locked, passwords.get(locked) as string, '192.0.2.103'),
    ];
    const text = alertOf(answers[0]?.reply as Reply);
    expect(text).toMatch(/^Wrong e-mail address or password\./);
    for (const { reply, derivations: count } of answers) {
      expect(reply.status).toBe(401);
      expect(alertOf(reply)).toBe(text);
      expect(count).toBe(1);
    }
  });
});
