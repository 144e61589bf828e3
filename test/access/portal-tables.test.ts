// The portal's Tables page over real HTTP on the embedded database: a table computed by the
// API's POST /tables as the user's account (one usage row per computed table, operation
// "table"), CSRF on every form, the expression check, CSV and XLSX downloads, saved tables shared
// within the account and never outside it, and the Usage page.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tableStatistics, tableToCSV, type Dataset } from '../../src/index.js';
import { addAccount, addUser, parseLicences, type Database } from '../../src/access/index.js';
import { tempDir } from '../http/support.js';
import { alertOf, cookieOf, csrfOf, postSignIn, send, signInForm } from './portal-client.js';
import { startPortalServer, type PortalServer } from './portal-server.js';
import { officeSheets, skipOffice } from '../support/libreoffice.js';

const paths = inject('testDatasets');

interface Person {
  id: string;
  cookie: string;
  csrf: string;
}

describe('portal Tables page (embedded database)', () => {
  let served: PortalServer;
  let db: Database;
  let gss: Dataset;
  let origin: string;
  let analyst: Person;
  let colleague: Person;
  let outsider: Person;

  async function person(account: string, email: string): Promise<Person> {
    const { user, oneTimePassword } = await addUser(db, account, email);
    await db.query('UPDATE users SET must_change_password = false WHERE id = $1', [user.id]);
    const signed = await postSignIn(origin, await signInForm(origin), user.email, oneTimePassword);
    expect(signed.status).toBe(303);
    const cookie = cookieOf(signed, 'crosstab_portal') as string;
    const page = await send(origin, 'GET', '/portal/tables', { cookie });
    return { id: user.id, cookie, csrf: csrfOf(page) };
  }
  const usageRows = async () => (await db.query<{ key_id: string; operation: string; account_id: string; survey: string; targets: number }>('SELECT key_id, operation, account_id, survey, targets FROM usage ORDER BY time')).rows;
  const tableForm = (who: Person, fields: Record<string, string>, stats: string[] = ['sig']): URLSearchParams => {
    const form = new URLSearchParams({ csrf: who.csrf, survey: 'GSS', base: 'year=2024', rows: 'race', columns: 'sex', weight: '', missing: 'hide', action: 'compute', ...fields });
    for (const stat of stats) form.append('stat', stat);
    return form;
  };

  beforeAll(async () => {
    // The account's users are added by person() below, as the other accounts' are.
    served = await startPortalServer({ datasets: [paths.gss], prefix: 'crosstab-portal-tables-', licences: [['GSS'], ['GSS:demographics']], users: [] });
    ({ db, origin, dataset: gss } = served);
    await addAccount(db, 'globex', parseLicences(['GSS'], ['GSS:demographics']));
    await addAccount(db, 'initech', parseLicences(['GSS'], ['GSS:demographics']), { monthlyQuota: 1 });
    analyst = await person('acme', 'analyst@acme.example');
    colleague = await person('acme', 'colleague@acme.example');
    outsider = await person('globex', 'analyst@globex.example');
  });
  afterAll(() => served?.close());

  it('shows the form with labels, the survey and its weights, and refuses a post without the CSRF token (nothing billed)', async () => {
    const page = await send(origin, 'GET', '/portal/tables', { cookie: analyst.cookie });
    expect(page.status).toBe(200);
    for (const id of ['survey', 'weight', 'base', 'rows', 'columns', 'table-name']) expect(page.body).toContain(`<label for="${id}"`);
    expect(page.body).toContain('<option value="wtssps"');
    expect(page.body).toContain('aria-current="page">Tables</a>');
    // Only this page's script may fetch (its same-origin expression check); the others not at all.
    expect(page.headers['content-security-policy']).toContain("connect-src 'self'");
    expect((await send(origin, 'GET', '/portal/usage', { cookie: analyst.cookie })).headers['content-security-policy']).not.toContain('connect-src');
    const refused = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm({ ...analyst, csrf: 'wrong' }, {}) });
    expect(refused.status).toBe(403);
    expect(await usageRows()).toEqual([]);
    expect((await send(origin, 'GET', '/portal/tables')).status).toBe(401);
  });

  it('computes the table as table() does, billed once as the user (operation "table")', async () => {
    const reply = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, {}) });
    expect(reply.status, alertOf(reply)).toBe(200);
    const expected = await gss.table({ base: 'year=2024', rows: [{ variable: 'race' }], columns: [{ variable: 'sex' }], missing: 'hide', weight: 'wtssps' });
    const stats = tableStatistics(expected, { stats: ['vpct', 'sig'] });
    expect(expected.rows.length * expected.columns.length).toBe(6);
    // The vertical % line of each row category: the figure, then its letters beside it.
    const shown = [...reply.body.matchAll(/<td class="num[^"]*" data-column="\d+" data-value="[^"]*"(?: data-index="[^"]*")?>([^<]*)<span class="letters"(?: aria-label="[^"]*")?>([^<]*)<\/span><\/td>/g)].map((match) => `${match[1]}|${match[2] ?? ''}`);
    const want = expected.rows.flatMap((_, r) =>
      expected.columns.map((__, c) => {
        const at = r * expected.columns.length + c;
        const mark = expected.cell(r, c).stability === 'very-unstable' ? '**' : expected.cell(r, c).stability === 'caution' ? '*' : '';
        return `${(stats.columnPct![at]! * 100).toFixed(1)}%${mark}|${stats.letters?.[at] ?? ''}`;
      }),
    );
    expect(shown).toEqual(want);
    for (const entry of [...expected.rows, ...expected.columns]) expect(reply.body).toContain(`title="${entry.expr}"`);
    expect(reply.body).toContain('class="legend"');
    const rows = await usageRows();
    expect(rows).toEqual([{ key_id: `portal:${analyst.id}`, operation: 'table', account_id: rows[0]!.account_id, survey: 'GSS', targets: 5 }]);
  });

  it('writes the significance letters and the columns\' letters of a table with clear differences', async () => {
    const reply = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { base: '*', rows: 'degree', columns: 'sex\nrace' }) });
    expect(reply.status, alertOf(reply)).toBe(200);
    const expected = await gss.table({ base: '*', rows: [{ variable: 'degree' }], columns: [{ variable: 'sex' }, { variable: 'race' }], missing: 'hide', weight: 'wtssps' });
    const stats = tableStatistics(expected, { stats: ['vpct', 'sig'] });
    const letters = [...reply.body.matchAll(/<td class="num[^"]*" data-column="\d+" data-value="[^"]*"(?: data-index="[^"]*")?>([^<]*)<span class="letters"(?: aria-label="[^"]*")?>([^<]*)<\/span><\/td>/g)].map((match) => match[2] ?? '');
    expect(letters).toEqual(stats.letters);
    expect(letters.some((cell) => cell !== '')).toBe(true);
    for (const letter of stats.columnLetters) if (letter !== null) expect(reply.body).toContain(`<span class="letter">(${letter})</span>`);
  });

  it('answers a bad base on the form, naming the field, and bills nothing; the check endpoint gives the engine\'s message', async () => {
    const before = (await usageRows()).length;
    const reply = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { base: 'year=' }) });
    expect(reply.status).toBe(400);
    expect(alertOf(reply)).toMatch(/^Base: /);
    expect(reply.body).toMatch(/id="base"[^>]*aria-invalid="true"/);
    expect(reply.body).toContain('value="year="');
    const outside = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { rows: 'race\npolviews' }) });
    expect(outside.status).toBe(400);
    // A variable of another group is answered as a made-up name is: nothing tells them apart.
    const madeUp = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { rows: 'race\npolviewz' }) });
    expect(alertOf(outside)).toMatch(/^Rows, line \d+: unknown variable &quot;polviews&quot;/);
    expect(alertOf(outside)).toBe(alertOf(madeUp).replaceAll('polviewz', 'polviews'));
    expect((await usageRows()).length).toBe(before);

    const check = async (expression: string, kind = 'base') => JSON.parse((await send(origin, 'GET', `/portal/tables/check?survey=GSS&kind=${kind}&expression=${encodeURIComponent(expression)}`, { cookie: analyst.cookie })).body) as { valid: boolean; message: string };
    expect(await check('year=2024')).toMatchObject({ valid: true });
    let engine = '';
    try {
      gss.groupsOf('year=');
    } catch (error) {
      engine = (error as Error).message;
    }
    expect(engine).not.toBe('');
    expect(await check('year=')).toEqual({ valid: false, message: engine });
    expect(await check('race', 'axis')).toMatchObject({ valid: true });
    expect((await check('polviews=1')).valid).toBe(false);
    // A near miss of a variable outside the account's groups is not suggested by name.
    const near = await check('polview=1');
    expect(near.valid).toBe(false);
    expect(near.message).not.toMatch(/polviews/);
    expect((await usageRows()).length).toBe(before);
  });

  it('refuses significance letters on too many pairs before any work, naming the limit, and bills nothing', async () => {
    const before = (await usageRows()).length;
    // 144 rows x 2,556 pairs of age's 72 values = 368,064 comparisons, past the 250,000 allowed.
    const reply = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { rows: 'age\nage', columns: 'age', base: '*' }) });
    expect(reply.status).toBe(400);
    expect(alertOf(reply)).toContain('comparisons limit');
    expect((await usageRows()).length).toBe(before);
    // Without the letters the same table is answered.
    const plain = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { rows: 'age\nage', columns: 'age', base: '*' }, ['vpct']) });
    expect(plain.status).toBe(200);
    expect((await usageRows()).length).toBe(before + 1);
  });

  it('downloads the CSV POST /tables gives, as one more billed call', async () => {
    const before = (await usageRows()).length;
    const reply = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { action: 'csv' }) });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/csv/);
    expect(reply.headers['content-disposition']).toBe('attachment; filename="table-GSS.csv"');
    const expected = await gss.table({ base: 'year=2024', rows: [{ variable: 'race' }], columns: [{ variable: 'sex' }], missing: 'hide', weight: 'wtssps' });
    expect(reply.body).toBe(tableToCSV(expected, tableStatistics(expected, { stats: ['vpct', 'sig'] })));
    expect((await usageRows()).length).toBe(before + 1);
  });

  it.skipIf(skipOffice)('downloads the XLSX POST /tables gives, with labels that read as the _xHHHH_ escape shown as typed (LibreOffice)', { timeout: 180_000 }, async () => {
    const before = (await usageRows()).length;
    const reply = await fetch(`${origin}/portal/tables`, { method: 'POST', headers: { cookie: analyst.cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: tableForm(analyst, { action: 'xlsx', rows: '_x0041_ = sex=1\na_x005F_b = sex=2', columns: 'race' }).toString(), redirect: 'manual' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-disposition')).toBe('attachment; filename="table-GSS.xlsx"');
    const work = tempDir('crosstab-portal-xlsx-');
    writeFileSync(join(work, 'table-GSS.xlsx'), Buffer.from(await reply.arrayBuffer()));
    const [sheet] = [...officeSheets(join(work, 'table-GSS.xlsx'), work).values()];
    expect(sheet!.map((row) => row[0]).filter((label) => label?.includes('_x'))).toEqual(['_x0041_', 'a_x005F_b']);
    expect((await usageRows()).length).toBe(before + 1);
  });

  it('saves a table, reopens it without billing, shares it within the account only', async () => {
    const before = (await usageRows()).length;
    const saved = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { action: 'save', tableName: 'Race by sex, 2024' }) });
    expect(saved.status).toBe(303);
    const location = saved.headers['location'] as string;
    const id = /\/portal\/tables\/saved\/(tbl_[0-9a-f]{16})\?done=saved$/.exec(location)?.[1] as string;
    expect(id).toBeDefined();
    expect((await usageRows()).length).toBe(before + 1);
    const opened = await send(origin, 'GET', `/portal/tables/saved/${id}`, { cookie: analyst.cookie });
    expect(opened.status).toBe(200);
    expect(opened.body).toContain('Race by sex, 2024');
    expect(opened.body).toContain('data-line="vpct"');
    expect(opened.body).toContain('not billed');
    expect((await usageRows()).length).toBe(before + 1);

    // Not shared: the colleague neither lists nor opens it; nobody outside the account ever does.
    expect((await send(origin, 'GET', '/portal/tables', { cookie: colleague.cookie })).body).not.toContain(id);
    expect((await send(origin, 'GET', `/portal/tables/saved/${id}`, { cookie: colleague.cookie })).status).toBe(404);
    expect((await send(origin, 'POST', `/portal/tables/saved/${id}/share`, { cookie: analyst.cookie, form: { csrf: 'wrong' } })).status).toBe(403);
    expect((await send(origin, 'POST', `/portal/tables/saved/${id}/share`, { cookie: analyst.cookie, form: { csrf: analyst.csrf } })).status).toBe(303);
    const list = await send(origin, 'GET', '/portal/tables', { cookie: colleague.cookie });
    expect(list.body).toContain(`/portal/tables/saved/${id}`);
    expect(list.body).toContain('analyst@acme.example');
    const shared = await send(origin, 'GET', `/portal/tables/saved/${id}`, { cookie: colleague.cookie });
    expect(shared.status).toBe(200);
    expect(shared.body).toContain('data-line="vpct"');
    expect((await send(origin, 'POST', `/portal/tables/saved/${id}/delete`, { cookie: colleague.cookie, form: { csrf: colleague.csrf } })).status).toBe(403);
    expect((await send(origin, 'GET', '/portal/tables', { cookie: outsider.cookie })).body).not.toContain(id);
    const foreign = await send(origin, 'GET', `/portal/tables/saved/${id}`, { cookie: outsider.cookie });
    expect(foreign.status).toBe(404);
    expect(foreign.body).not.toContain('Race by sex');
    expect((await usageRows()).length).toBe(before + 1);
  });

  it('updates a reopened table saved under its name (no duplicate), refuses another table\'s name, renames and deletes; the list shows date, owner, survey and spec', async () => {
    const count = async (name: string) => Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM saved_tables WHERE lower(name) = lower($1)', [name])).rows[0]!.n);
    const saved = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { action: 'save', tableName: 'Degree by sex' , rows: 'degree' }) });
    expect(saved.status, alertOf(saved)).toBe(303);
    const id = /(tbl_[0-9a-f]{16})/.exec(saved.headers['location'] as string)![1]!;
    const spec = async () => JSON.parse((await db.query<{ spec: string }>('SELECT spec FROM saved_tables WHERE id = $1', [id])).rows[0]!.spec) as { Rows: unknown[]; PopulationBaseCode: string };
    // Reopened, changed and saved under its name: the same table, rewritten.
    const before = (await usageRows()).length;
    const updated = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { action: 'save', tableName: 'Degree by sex', saved: id, rows: 'degree', base: 'year=2022' }) });
    expect(updated.status, alertOf(updated)).toBe(303);
    expect(updated.headers['location']).toBe(`/portal/tables/saved/${id}?done=updated`);
    expect(await count('Degree by sex')).toBe(1);
    expect((await spec()).PopulationBaseCode).toBe('year=2022');
    expect((await usageRows()).length).toBe(before + 1);
    expect(alertOf(await send(origin, 'GET', `/portal/tables/saved/${id}?done=updated`, { cookie: analyst.cookie }))).toBe('');
    // Another save under a name of one of theirs, not opened from it: refused before anything is computed.
    const clash = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { action: 'save', tableName: 'degree BY SEX' }) });
    expect(clash.status).toBe(409);
    expect(alertOf(clash)).toContain('You already have a saved table named degree BY SEX: open it and save to update it, or choose another name. Nothing was computed or billed.');
    expect(await count('Degree by sex')).toBe(1);
    expect((await usageRows()).length).toBe(before + 1);

    // Shared with a colleague: they may open it, but saving it under its name does not rewrite it.
    expect((await send(origin, 'POST', `/portal/tables/saved/${id}/share`, { cookie: analyst.cookie, form: { csrf: analyst.csrf } })).status).toBe(303);
    const theirs = await send(origin, 'POST', '/portal/tables', { cookie: colleague.cookie, form: tableForm(colleague, { action: 'save', tableName: 'Degree by sex', saved: id, rows: 'degree', base: '*' }) });
    expect(theirs.status).toBe(403);
    expect(alertOf(theirs)).toContain('only they can update it');
    expect((await spec()).PopulationBaseCode).toBe('year=2022');
    expect((await send(origin, 'POST', `/portal/tables/saved/${id}/rename`, { cookie: colleague.cookie, form: { csrf: colleague.csrf, tableName: 'Mine now' } })).status).toBe(403);
    expect((await usageRows()).length).toBe(before + 1);

    // The list: name, survey, spec, date, owner; no stored result read.
    const list = await send(origin, 'GET', '/portal/tables', { cookie: colleague.cookie });
    const row = new RegExp(`<tr><td data-label="Table"><a href="/portal/tables/saved/${id}#result-title">Degree by sex</a></td><td data-label="Survey">GSS</td><td data-label="Spec" class="spec"><code>degree</code> by <code>sex</code>; base <code>year=2022</code>; default weight</td><td data-label="Updated"><time datetime="\\d{4}-\\d\\d-\\d\\dT[^"]+">\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC</time></td><td data-label="Saved by">analyst@acme.example</td>`);
    expect(list.body).toMatch(row);

    // Rename: owner only; a name of another of theirs, or an empty one, is refused.
    await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { action: 'save', tableName: 'Other one' }) });
    const taken = await send(origin, 'POST', `/portal/tables/saved/${id}/rename`, { cookie: analyst.cookie, form: { csrf: analyst.csrf, tableName: 'other ONE' } });
    expect(taken.status).toBe(400);
    expect(alertOf(taken)).toContain('You already have a saved table named &quot;other ONE&quot;.');
    expect((await send(origin, 'POST', `/portal/tables/saved/${id}/rename`, { cookie: analyst.cookie, form: { csrf: analyst.csrf, tableName: '  ' } })).status).toBe(400);
    const renamed = await send(origin, 'POST', `/portal/tables/saved/${id}/rename`, { cookie: analyst.cookie, form: { csrf: analyst.csrf, tableName: 'Degree by sex, 2022' } });
    expect(renamed.status).toBe(303);
    expect(await count('Degree by sex, 2022')).toBe(1);
    expect(await count('Degree by sex')).toBe(0);
    expect((await send(origin, 'POST', `/portal/tables/saved/${id}/delete`, { cookie: analyst.cookie, form: { csrf: analyst.csrf } })).status).toBe(303);
    expect(await count('Degree by sex, 2022')).toBe(0);
    expect((await send(origin, 'GET', `/portal/tables/saved/${id}`, { cookie: analyst.cookie })).status).toBe(404);
  });

  it('takes a labelled line (Label = expression) as a labelled entry, lists the codebook\'s codes of the user\'s groups, and says "unknown variable" for an unknown name', async () => {
    const reply = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { rows: 'Degree: BA+ = degree=3,4\nsex = 1', columns: 'race' }) });
    expect(reply.status, alertOf(reply)).toBe(200);
    const expected = await gss.table({ base: 'year=2024', rows: [{ expr: 'degree=3,4', label: 'Degree: BA+' }, { expr: 'sex = 1' }], columns: [{ variable: 'race' }], missing: 'hide', weight: 'wtssps' });
    expect(expected.rows.map((row) => row.label)).toEqual(['Degree: BA+', 'sex = 1']);
    expect(reply.body).toContain('Degree: BA+');
    // The vertical % line of each row category (the banner table's cells, Total column first; its Total cells are left out here).
    const shown = [...reply.body.matchAll(/<td class="num[^"]*" data-column="(\d+)" data-value="[^"]*"(?: data-index="[^"]*")?>([^<]*)<span class="letters"/g)].map((match) => match[2]);
    const stats = tableStatistics(expected, { stats: ['vpct'] });
    expect(shown.map((text) => text!.replace(/\*+$/, ''))).toEqual(Array.from(stats.columnPct!, (value) => `${(value * 100).toFixed(1)}%`));
    // The label is kept in the form, as typed.
    expect(reply.body).toContain('Degree: BA+ = degree=3,4\nsex = 1</textarea>');

    // The picker: a variable's codes with their labels, and the codebook's codes of the user's groups only.
    const page = await send(origin, 'GET', '/portal/tables', { cookie: analyst.cookie });
    expect(page.body).toMatch(/<input type="checkbox" data-variable="degree" data-value="3" data-label="Bachelor&#39;s">/);
    const mine = gss.info.codes.filter((code) => code.group === 'demographics');
    const others = gss.info.codes.filter((code) => code.group !== 'demographics');
    expect(mine.length).toBeGreaterThan(0);
    expect(others.length).toBeGreaterThan(0);
    for (const code of mine) expect(page.body).toContain(`<li><code>${code.name}</code>`);
    for (const code of others) expect(page.body).not.toContain(`<code>${code.name}</code>`);
    expect(page.body).not.toContain('data-variable="polviews"');

    // An unknown bare name: "unknown variable", the same for another group's name as for a made-up one, nothing billed.
    const before = (await usageRows()).length;
    const check = async (expression: string, kind = 'axis') => JSON.parse((await send(origin, 'GET', `/portal/tables/check?survey=GSS&kind=${kind}&expression=${encodeURIComponent(expression)}`, { cookie: analyst.cookie })).body) as { valid: boolean; message: string };
    expect(await check('degre')).toEqual({ valid: false, message: 'unknown variable "degre"; did you mean "degree"? The variables and codes you may use are listed below the form.' });
    expect((await check('polviews')).message).toBe((await check('polviewz')).message.replaceAll('polviewz', 'polviews'));
    expect((await check('polviews')).message).toMatch(/^unknown variable "polviews"/);
    expect(await check('Graduates = degree=4')).toEqual({ valid: true, message: 'Valid expression, labelled Graduates.' });
    expect((await check('degre', 'base')).message).toMatch(/^unknown variable "degre"/);
    const base = await send(origin, 'POST', '/portal/tables', { cookie: analyst.cookie, form: tableForm(analyst, { base: 'degre' }) });
    expect(base.status).toBe(400);
    expect(alertOf(base)).toMatch(/^Base: unknown variable &quot;degre&quot;; did you mean &quot;degree&quot;\?/);
    expect((await usageRows()).length).toBe(before);
  });

  it('downloads a tab book of the chosen banner and stubs (the workbook POST /v1/tabbooks gives), billed once as tabbook with its number of tables', async () => {
    const before = (await usageRows()).length;
    const reply = await send(origin, 'POST', '/portal/tables/tabbook', { cookie: analyst.cookie, form: tableForm(analyst, { banner: 'sex\nrace', stubs: 'degree\nrace' }) });
    expect(reply.status, alertOf(reply)).toBe(200);
    expect(reply.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(reply.headers['content-disposition']).toBe('attachment; filename="tabbook-GSS.xlsx"');
    const rows = await usageRows();
    expect(rows).toHaveLength(before + 1);
    expect(rows.at(-1)).toMatchObject({ key_id: `portal:${analyst.id}`, operation: 'tabbook', survey: 'GSS', targets: 2 });
    // Another group's stub: the API's unknown variable, on the form, nothing billed.
    const foreign = await send(origin, 'POST', '/portal/tables/tabbook', { cookie: analyst.cookie, form: tableForm(analyst, { banner: 'sex', stubs: 'degree\npolviews' }) });
    expect(foreign.status).toBe(400);
    expect(alertOf(foreign)).toMatch(/^Tab book: Stubs, line 2: unknown variable &quot;polviews&quot;/);
    expect((await send(origin, 'POST', '/portal/tables/tabbook', { cookie: analyst.cookie, form: tableForm({ ...analyst, csrf: 'wrong' }, { banner: 'sex', stubs: 'all' }) })).status).toBe(403);
    expect(await usageRows()).toHaveLength(before + 1);
  });

  it('admits the page\'s tables by the account\'s monthly quota, as its keys\' calls', async () => {
    const limited = await person('initech', 'analyst@initech.example');
    const first = await send(origin, 'POST', '/portal/tables', { cookie: limited.cookie, form: tableForm(limited, {}) });
    expect(first.status, alertOf(first)).toBe(200);
    const second = await send(origin, 'POST', '/portal/tables', { cookie: limited.cookie, form: tableForm(limited, {}) });
    expect(second.status).toBe(429);
    expect(alertOf(second)).toMatch(/quota/i);
    expect((await usageRows()).filter((row) => row.key_id === `portal:${limited.id}`)).toHaveLength(1);
  });

  it('shows the calls on the Usage page, per operation and as the Tables page of the user', async () => {
    const page = await send(origin, 'GET', '/portal/usage', { cookie: analyst.cookie });
    expect(page.status).toBe(200);
    const billed = (await usageRows()).filter((row) => row.key_id === `portal:${analyst.id}` && row.operation === 'table').length;
    expect(page.body).toMatch(new RegExp(`<td>table</td><td class="num">${billed}</td>`));
    expect(page.body).toMatch(/<td>tabbook<\/td><td class="num">1<\/td>/);
    expect(page.body).toContain(`Tables page, analyst@acme.example <small class="muted">portal:${analyst.id}</small>`);
  });
});
