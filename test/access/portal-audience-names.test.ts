// Whose audience `@name` is in a saved table another user opens: the table's (its owner's),
// never the opener's. A user who holds a private audience named like the table's, or for whom
// the name means another audience than for its owner, is refused the table (its stored figures,
// its stale note, a computation or tab book from its form), with a message naming the audience;
// the list of saved tables marks such tables, and those whose audiences changed since the save.
// Real HTTP, the embedded database, the API mounted beside the portal.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createAudience, updateAudience, type Database } from '../../src/access/index.js';
import type { AudienceRecord } from '../../src/keys/index.js';
import { alertOf, csrfOf, send } from './portal-client.js';
import { startPortalServer, type PortalServer } from './portal-server.js';

const paths = inject('testDatasets');
const ANNA = 'analyst@acme.example';
const BEN = 'ben@acme.example';

describe('saved tables: whose audience @name is (portal, embedded database)', () => {
  let portal: PortalServer | undefined;
  let db: Database;
  let origin: string;
  const cookies: Record<string, string> = {};
  const csrfs: Record<string, string> = {};
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    portal = await startPortalServer({ datasets: [paths.gss], prefix: 'crosstab-portal-audience-names-', mustChangePassword: false, audiences: true, users: [ANNA, BEN], keys: { ttlMs: 0 } });
    ({ db, origin } = portal);
    for (const email of [ANNA, BEN]) {
      cookies[email] = await portal.signInCookie(email);
      csrfs[email] = csrfOf(await send(origin, 'GET', '/portal/tables', { cookie: cookies[email] }));
      ids[email] = (await db.query<{ id: string }>('SELECT id FROM users WHERE email = $1', [email])).rows[0]!.id;
    }
  });
  afterAll(() => portal?.close());

  const audience = async (email: string | undefined, name: string, expression: string, shared: boolean) =>
    (await createAudience(db, { accountId: portal!.accountId, ...(email === undefined ? {} : { userId: ids[email] }) }, { survey: 'GSS', name, expression, label: null, shared })) as AudienceRecord;
  const tableForm = (email: string, base: string, extra: Record<string, string>) =>
    new URLSearchParams({ csrf: csrfs[email]!, survey: 'GSS', base, rows: 'race', columns: 'sex', weight: '', missing: 'hide', ...extra });
  /** Anna saves a table of `base`, shared with the account: its path. */
  async function annaSaves(tableName: string, base: string): Promise<string> {
    const saved = await send(origin, 'POST', '/portal/tables', { cookie: cookies[ANNA], form: tableForm(ANNA, base, { action: 'save', tableName, shared: '1' }) });
    expect(saved.status, alertOf(saved)).toBe(303);
    return String(saved.headers.location).replace(/^https?:\/\/[^/]+/, '');
  }
  const billed = async () => Number((await db.query<{ count: number | string }>('SELECT count(*) AS count FROM usage')).rows[0]!.count);
  const noteOf = (page: { body: string }) => /<div class="notice info" role="status">([^<]*)<\/div>/.exec(page.body)?.[1] ?? '';
  const rowOf = (body: string, tableName: string) => new RegExp(`<tr><td data-label="Table"><a [^>]*>${tableName}</a>[\\s\\S]*?</tr>`).exec(body)?.[0] ?? '';

  it("Ben's private audience named like the shared one Anna's table uses: the table is refused him, never computed with his", async () => {
    // Ben's own @young first; the shared one of the same name is saved later (neither could know of the other).
    await audience(BEN, 'young', 'age=60..89', false);
    const shared = await audience(ANNA, 'young', 'age=18..29', true);
    const path = await annaSaves('Young by race', '@young');
    const tableId = /tbl_[0-9a-f]{16}/.exec(path)![0];
    // The table's @young is edited after the save: Ben's own, unchanged, must not stand in for it (figures shown as current).
    expect(await updateAudience(db, { accountId: portal!.accountId, userId: ids[ANNA] }, shared.id, { survey: 'GSS', name: 'young', expression: 'age=18..24', label: null, shared: true })).toMatchObject({ expression: 'age=18..24' });
    expect(noteOf(await send(origin, 'GET', path, { cookie: cookies[ANNA] }))).toContain('the audience @young it uses was changed since');
    const opened = await send(origin, 'GET', path, { cookie: cookies[BEN] });
    expect(opened.status).toBe(403);
    expect(opened.body).not.toContain('Stored result computed');
    expect(noteOf(opened)).toBe('');
    expect(alertOf(opened)).toContain('@young means another audience for you than for analyst@acme.example, who saved the table');
    // Computing it from its form, or a tab book from it, as Ben: refused before anything is computed or billed.
    const before = await billed();
    const computed = await send(origin, 'POST', '/portal/tables', { cookie: cookies[BEN], form: tableForm(BEN, '@young', { action: 'compute', saved: tableId }) });
    expect(computed.status).toBe(403);
    expect(computed.body).not.toContain('id="result-title"');
    expect(alertOf(computed)).toContain('@young means another audience for you than for analyst@acme.example');
    const book = await send(origin, 'POST', '/portal/tables/tabbook', { cookie: cookies[BEN], form: tableForm(BEN, '@young', { saved: tableId, banner: 'sex', stubs: 'race' }) });
    expect(book.status).toBe(403);
    expect(alertOf(book)).toContain('@young means another audience for you than for analyst@acme.example');
    expect(await billed()).toBe(before);
    // The list says so, from the same rule.
    const list = await send(origin, 'GET', '/portal/tables', { cookie: cookies[BEN] });
    expect(rowOf(list.body, 'Young by race')).toContain('Cannot be opened: @young means another audience for you');
    expect(rowOf((await send(origin, 'GET', '/portal/tables', { cookie: cookies[ANNA] })).body, 'Young by race')).not.toContain('Cannot be opened');
  });

  it("a name that is another private audience for each of them: Ben is refused Anna's table", async () => {
    await audience(ANNA, 'urban', 'race=1', false);
    const bens = await audience(BEN, 'urban', 'race=2', false);
    const path = await annaSaves('Urban by race', '@urban');
    await updateAudience(db, { accountId: portal!.accountId, userId: ids[BEN] }, bens.id, { survey: 'GSS', name: 'urban', expression: 'race=3', label: null, shared: false });
    const opened = await send(origin, 'GET', path, { cookie: cookies[BEN] });
    expect(opened.status).toBe(403);
    expect(noteOf(opened)).toBe('');
    expect(alertOf(opened)).toContain(`@urban means another audience for you than for ${ANNA}, who saved the table`);
    const tableId = /tbl_[0-9a-f]{16}/.exec(path)![0];
    const computed = await send(origin, 'POST', '/portal/tables', { cookie: cookies[BEN], form: tableForm(BEN, '@urban', { action: 'compute', saved: tableId }) });
    expect(computed.status).toBe(403);
    // A query of his own with his own audience (no table's form) is his to compute.
    const own = await send(origin, 'POST', '/portal/tables', { cookie: cookies[BEN], form: tableForm(BEN, '@urban', { action: 'compute' }) });
    expect(own.status, alertOf(own)).toBe(200);
  });

  it("a shared audience both see: Ben opens Anna's table, and the note and the list name the table's audience when it changes", async () => {
    const whites = await audience(ANNA, 'whites', 'race=1', true);
    const path = await annaSaves('Whites by sex', '@whites');
    const first = await send(origin, 'GET', path, { cookie: cookies[BEN] });
    expect(first.status, alertOf(first)).toBe(200);
    expect(noteOf(first)).toBe('');
    expect(rowOf((await send(origin, 'GET', '/portal/tables', { cookie: cookies[BEN] })).body, 'Whites by sex')).not.toContain('saved-note');
    await updateAudience(db, { accountId: portal!.accountId, userId: ids[ANNA] }, whites.id, { survey: 'GSS', name: 'whites', expression: 'race=2', label: null, shared: true });
    for (const email of [ANNA, BEN]) {
      const page = await send(origin, 'GET', path, { cookie: cookies[email] });
      expect(page.status).toBe(200);
      expect(noteOf(page)).toContain('the audience @whites it uses was changed since');
      const row = rowOf((await send(origin, 'GET', '/portal/tables', { cookie: cookies[email] })).body, 'Whites by sex');
      expect(row).toMatch(/Figures as of the save: its audience @whites \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\) changed since\./);
    }
  });
});
