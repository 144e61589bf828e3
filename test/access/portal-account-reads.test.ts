// The portal's pages read the signed-in user's account once per request, however many parts
// of a page need it (the Tables form's surveys, the variables of the user's groups, the saved
// tables still usable; the Audiences page's call and the page shown after it; the Usage page's
// three groupings): counted on the real embedded database, through a Database that passes
// every statement on to it and counts the account reads, by id or by name.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database, Queryable } from '../../src/access/index.js';
import { csrfOf, send } from './portal-client.js';
import { startPortalServer, type PortalServer } from './portal-server.js';

/** The real database, counting the statements that read an account by its id (accountById's). */
class CountingDatabase implements Database {
  accountReads = 0;
  constructor(private readonly inner: Database) {}
  get kind() {
    return this.inner.kind;
  }
  get location() {
    return this.inner.location;
  }
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<{ rows: Row[] }> {
    this.count(sql);
    return this.inner.query<Row>(sql, params);
  }
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.inner.transaction((tx) => work({ query: (sql, params) => (this.count(sql), tx.query(sql, params)) }));
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  private count(sql: string): void {
    if (/\bFROM accounts WHERE (id|name) = \$1\s*$/.test(sql)) this.accountReads++;
  }
}

describe('portal Tables page: account reads per request', () => {
  let served: PortalServer;
  let counting: CountingDatabase;
  let cookie: string;

  beforeAll(async () => {
    served = await startPortalServer({
      datasets: [inject('testDatasets').gss],
      prefix: 'crosstab-portal-account-reads-',
      mustChangePassword: false,
      audiences: true,
      portalDatabase: (db) => (counting = new CountingDatabase(db)),
    });
    cookie = await served.signInCookie('analyst@acme.example');
  });
  afterAll(() => served?.close());

  /** The account reads of one request, and its reply. */
  async function reads(method: string, path: string, form?: URLSearchParams) {
    const before = counting.accountReads;
    const reply = await send(served.origin, method, path, { cookie, ...(form ? { form } : {}) });
    return { reply, reads: counting.accountReads - before };
  }

  it('GET /tables reads the account once', async () => {
    const { reply, reads: count } = await reads('GET', '/portal/tables');
    expect(reply.status).toBe(200);
    expect(reply.body).toContain('<option value="wtssps"');
    expect(count).toBe(1);
  });

  it.each([
    ['a form refused before anything is computed', 'nosuchvariable', 400, 'nosuchvariable'],
    ['a table computed and shown', 'race', 200, 'id="result-title"'],
  ])('%s reads it once too', async (_what, rows, status, shown) => {
    const page = await send(served.origin, 'GET', '/portal/tables', { cookie });
    const form = new URLSearchParams({ csrf: csrfOf(page), survey: 'GSS', base: 'year=2024', rows, columns: 'sex', weight: '', missing: 'hide', action: 'compute' });
    const { reply, reads: count } = await reads('POST', '/portal/tables', form);
    expect(reply.status).toBe(status);
    expect(reply.body).toContain(shown);
    expect(count).toBe(1);
  });

  it.each([['/portal/keys'], ['/portal/surveys'], ['/portal/audiences'], ['/portal/usage']])('GET %s reads it once', async (path) => {
    const { reply, reads: count } = await reads('GET', path);
    expect(reply.status).toBe(200);
    expect(count).toBe(1);
  });

  it.each([
    ['an audience refused by the API (the page shown again)', 'nosuchvariable=1', 400],
    ['an audience saved', 'sex=2', 303],
  ])('POST /audiences: %s reads it once', async (_what, expression, status) => {
    const page = await send(served.origin, 'GET', '/portal/audiences', { cookie });
    const form = new URLSearchParams({ csrf: csrfOf(page), survey: 'GSS', name: `women-${status}`, expression, label: '' });
    const { reply, reads: count } = await reads('POST', '/portal/audiences', form);
    expect(reply.status).toBe(status);
    expect(count).toBe(1);
  });
});
