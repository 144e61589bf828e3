// Saved audiences through REST on the embedded database and a PostgreSQL server: an audience
// used as base and target answers exactly what its expression answers (and, once edited, what
// its new expression answers: no cached cell survives an edit), sharing stays within an account
// and within a user's own audiences, entitlements are those of the expression inside, and no
// refusal names another account's or user's audience or shows a definition the caller may not see.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addKey, addUser, createAudience, DbAudienceStore, DbKeyStore, DbUsageSink, openDatabase, parseLicences, usageReport, type Database } from '../../src/access/index.js';
import { tempDir } from '../http/support.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const paths = inject('testDatasets');
let postgres: PostgresServer;
let gss: Dataset;

beforeAll(async () => {
  postgres = await startPostgres();
  gss = await openDataset(paths.gss);
});
afterAll(async () => {
  await gss?.close();
  postgres?.stop();
});

const stores: Array<[string, () => Promise<string>]> = [
  ['embedded PGlite', async () => newEmbeddedFolder(join(tempDir('crosstab-audiences-'), 'db'))],
  ['PostgreSQL server', async () => postgres.createDatabase(`audiences_${Date.now()}`)],
];

interface Answer {
  status: number;
  body: any;
  text: string;
}

describe.each(stores)('audiences on %s', (_name, location) => {
  let db: Database;
  let server: RunningServer;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    db = await openDatabase(await location());
    await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:_ALL_']));
    await addAccount(db, 'rival', parseLicences(['GSS'], ['GSS:_ALL_']));
    const alice = (await addUser(db, 'acme', 'alice@acme.example')).user;
    const bob = (await addUser(db, 'acme', 'bob@acme.example')).user;
    keys['alice'] = (await addKey(db, { account: 'acme', name: 'alice', userId: alice.id })).apiKey;
    keys['bob'] = (await addKey(db, { account: 'acme', name: 'bob', userId: bob.id })).apiKey;
    keys['acme'] = (await addKey(db, { account: 'acme', name: 'etl' })).apiKey;
    keys['rival'] = (await addKey(db, { account: 'rival', name: 'production' })).apiKey;
    const handler = await createCrosstabHandler({ datasets: [gss], keys: new DbKeyStore(db, { ttlMs: 0 }), usage: new DbUsageSink(db), audiences: new DbAudienceStore(db) });
    server = await listen(handler, { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await db?.close();
  });

  async function call(who: string, method: string, path: string, body?: unknown): Promise<Answer> {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'service-engine-authorizer': keys[who] as string, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text), text };
  }
  const crosstab = (who: string, base: string, targets: string[], group?: string) =>
    call(who, 'POST', '/crosstab', { SurveyCode: 'GSS', PopulationBaseCode: base, TargetCodes: targets, ...(group === undefined ? {} : { AuthorizationGroup: group }) });
  const save = (who: string, body: Record<string, unknown>) => call(who, 'POST', '/audiences', { SurveyCode: 'GSS', ...body });

  const WOMEN = 'sex=2 AND age=25..40';
  let women = '';

  it('an audience used as base and as targets answers what its expression answers', async () => {
    const saved = await save('alice', { Name: 'women-25-40', Expression: WOMEN, Label: 'Women 25-40' });
    expect(saved.status, saved.text).toBe(201);
    expect(saved.body).toMatchObject({ SurveyCode: 'GSS', Name: 'women-25-40', Reference: '@women-25-40', Expression: WOMEN, Label: 'Women 25-40', Shared: false, Owner: 'alice@acme.example', Editable: true, Usable: true });
    women = saved.body.AudienceId;
    const byName = await crosstab('alice', '@women-25-40', ['@women-25-40', 'degree=3..4 AND @women-25-40']);
    const written = await crosstab('alice', WOMEN, [WOMEN, `degree=3..4 AND (${WOMEN})`]);
    expect(byName.status, byName.text).toBe(200);
    expect(byName.body).toEqual(written.body);
    expect(byName.body.Results[1].Resps).toBeGreaterThan(0);
    // Both precedences: @name stands for its expression in parentheses.
    const not = await crosstab('alice', '*', ['NOT @women-25-40']);
    expect(not.body).toEqual((await crosstab('alice', '*', [`NOT (${WOMEN})`])).body);
    expect(not.body).not.toEqual((await crosstab('alice', '*', [`NOT ${WOMEN}`])).body);
  });

  it('in POST /tables: base, rows and columns; the entry keeps @name as its label and shows the expression', async () => {
    const table = await call('alice', 'POST', '/tables', { SurveyCode: 'GSS', PopulationBaseCode: '@women-25-40', Rows: [{ Variable: 'degree' }], Columns: ['@women-25-40 AND race=1', { Expression: '@women-25-40', Label: 'W' }] });
    const plain = await call('alice', 'POST', '/tables', { SurveyCode: 'GSS', PopulationBaseCode: WOMEN, Rows: [{ Variable: 'degree' }], Columns: [`(${WOMEN}) AND race=1`, { Expression: `(${WOMEN})`, Label: 'W' }] });
    expect(table.status, table.text).toBe(200);
    expect(table.body.Table.cells).toEqual(plain.body.Table.cells);
    expect(table.body.Table.columns.map((column: { label: string }) => column.label)).toEqual(['@women-25-40 AND race=1', 'W']);
  });

  it('in POST /tables as XLSX, which shows labels without expressions: an entry written with @name is headed by its expression', async () => {
    const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
    const sheetOf = async (body: Record<string, unknown>) => {
      const response = await fetch(`${server.url}/tables`, { method: 'POST', headers: { 'service-engine-authorizer': keys.alice as string, 'content-type': 'application/json', accept: XLSX }, body: JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', ...body }) });
      const bytes = await response.arrayBuffer();
      expect(response.status, Buffer.from(bytes).toString()).toBe(200);
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load(bytes);
      const rows: string[] = [];
      workbook.eachSheet((sheet) => sheet.eachRow((row) => rows.push(JSON.stringify(row.values))));
      return rows;
    };
    const byName = await sheetOf({ Rows: [{ Expression: '@women-25-40' }, { Variable: 'sex' }], Columns: ['@women-25-40 AND race=1', { Expression: '@women-25-40', Label: 'W' }] });
    const written = await sheetOf({ Rows: [{ Expression: `(${WOMEN})` }, { Variable: 'sex' }], Columns: [`(${WOMEN}) AND race=1`, { Expression: `(${WOMEN})`, Label: 'W' }] });
    // The same sheet, headings included; a label given stays.
    expect(byName).toEqual(written);
    expect(byName.join('\n')).not.toContain('@women');
    expect(byName.join('\n')).toContain(`"(${WOMEN}) AND race=1"`);
  });

  it('an edited audience answers with its new expression at once (no cached cell survives)', async () => {
    const before = await crosstab('alice', '*', ['@women-25-40']);
    const edited = await call('alice', 'PUT', `/audiences/${women}`, { Expression: 'sex=1 AND age=25..40' });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body.Expression).toBe('sex=1 AND age=25..40');
    const after = await crosstab('alice', '*', ['@women-25-40']);
    expect(after.body).toEqual((await crosstab('alice', '*', ['sex=1 AND age=25..40'])).body);
    expect(after.body).not.toEqual(before.body);
    await call('alice', 'PUT', `/audiences/${women}`, { Expression: WOMEN });
  });

  it("a private audience is its user's alone; another account never sees or learns of one", async () => {
    const bobUses = await crosstab('bob', '*', ['@women-25-40']);
    expect(bobUses.status).toBe(400);
    expect(bobUses.body.error.code).toBe('unknown_audience');
    expect(bobUses.text).not.toMatch(/sex=2|age=25|alice/);
    expect((await call('bob', 'GET', '/audiences?SurveyCode=GSS')).body.Audiences).toEqual([]);
    expect((await call('bob', 'GET', `/audiences/${women}`)).status).toBe(404);
    expect((await call('bob', 'PUT', `/audiences/${women}`, { Expression: 'sex=1' })).status).toBe(404);
    expect((await call('bob', 'DELETE', `/audiences/${women}`)).status).toBe(404);
    // The account's key of no user sees shared audiences only.
    expect((await crosstab('acme', '*', ['@women-25-40'])).body.error.code).toBe('unknown_audience');
    for (const path of [`/audiences/${women}`, '/audiences?SurveyCode=GSS']) {
      const answer = await call('rival', 'GET', path);
      expect(answer.text).not.toMatch(/women|sex=2/);
    }
    const rival = await crosstab('rival', '*', ['@women-25-40']);
    expect(rival.body.error.code).toBe('unknown_audience');
    expect(rival.text).not.toMatch(/sex=2|alice/);
  });

  it('shared: every caller of the account uses it, only its owner edits it; no other account', async () => {
    // Bob's own private audience of the same name (he cannot know of Alice's private one) goes first for him, and only for him.
    const own = await save('bob', { Name: 'women-25-40', Expression: 'sex=2' });
    expect(own.status, own.text).toBe(201);
    const shared = await call('alice', 'PUT', `/audiences/${women}`, { Shared: true });
    expect(shared.status, shared.text).toBe(200);
    expect((await crosstab('bob', '*', ['@women-25-40'])).body).toEqual((await crosstab('bob', '*', ['sex=2'])).body);
    expect((await crosstab('alice', '*', ['@women-25-40'])).body).toEqual((await crosstab('alice', '*', [WOMEN])).body);
    expect((await call('bob', 'DELETE', `/audiences/${own.body.AudienceId}`)).status).toBe(204);
    // A new private one may not take a shared audience's name.
    expect((await save('bob', { Name: 'women-25-40', Expression: 'sex=2' })).status).toBe(409);
    expect((await crosstab('bob', '*', ['@women-25-40'])).body).toEqual((await crosstab('bob', '*', [WOMEN])).body);
    expect((await crosstab('acme', '*', ['@women-25-40'])).status).toBe(200);
    const listed = (await call('bob', 'GET', '/audiences?SurveyCode=GSS')).body.Audiences;
    expect(listed).toMatchObject([{ AudienceId: women, Shared: true, Editable: false, Expression: WOMEN }]);
    expect((await call('bob', 'PUT', `/audiences/${women}`, { Expression: 'sex=1' })).status).toBe(403);
    expect((await call('bob', 'DELETE', `/audiences/${women}`)).status).toBe(403);
    expect((await crosstab('rival', '*', ['@women-25-40'])).body.error.code).toBe('unknown_audience');
    expect((await call('rival', 'GET', `/audiences/${women}`)).status).toBe(404);
  });

  it('entitlements are those of the expression inside, at every use, without showing it', async () => {
    const libs = await save('alice', { Name: 'liberals', Expression: 'polviews=1,2', Shared: true });
    expect(libs.status, libs.text).toBe(201);
    const narrowed = await crosstab('bob', '@liberals', ['sex=1'], 'demographics');
    expect(narrowed.status).toBe(403);
    expect(narrowed.body.error).toMatchObject({ code: 'forbidden_survey', field: 'PopulationBaseCode' });
    expect(narrowed.text).not.toMatch(/polviews|attitudes/);
    // Through another audience too.
    const nested = await save('alice', { Name: 'liberal-women', Expression: '@liberals AND sex=2', Shared: true });
    expect(nested.status, nested.text).toBe(201);
    const through = await crosstab('bob', '*', ['@liberal-women'], 'demographics');
    expect(through.status).toBe(403);
    expect(through.text).not.toMatch(/polviews|attitudes|liberals\b(?!-)/);
    expect((await crosstab('bob', '*', ['@liberal-women'])).body).toEqual((await crosstab('bob', '*', ['polviews=1,2 AND sex=2'])).body);
    // The account loses the attitudes group: its callers see the audience, not its expression, and cannot use it.
    await db.query("DELETE FROM survey_permissions WHERE authorization_group = 'attitudes' OR authorization_group = '_ALL_'");
    await db.query("INSERT INTO survey_permissions (account_id, survey, authorization_group) SELECT id, 'GSS', 'demographics' FROM accounts WHERE name = 'acme'");
    const listed = (await call('bob', 'GET', `/audiences/${libs.body.AudienceId}`)).body;
    expect(listed).toMatchObject({ Name: 'liberals', Expression: null, Usable: false });
    expect((await crosstab('bob', '*', ['@liberals'])).status).toBe(403);
    const catalog = await call('bob', 'GET', '/surveys/GSS');
    expect(catalog.body.Audiences.map((audience: { Name: string }) => audience.Name)).toEqual(['liberal-women', 'liberals', 'women-25-40']);
    expect(catalog.text).not.toMatch(/polviews/);
    await db.query("DELETE FROM survey_permissions WHERE authorization_group = 'demographics'");
    await db.query("INSERT INTO survey_permissions (account_id, survey, authorization_group) SELECT id, 'GSS', '_ALL_' FROM accounts WHERE name IN ('acme', 'rival')");
  });

  it('in POST /tabbooks (the portal\'s tab book too): base and banner expanded, a banner entry headed by its expression; entitlements at use', async () => {
    const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
    const book = async (who: string, body: Record<string, unknown>): Promise<{ status: number; text: string; rows: string[] }> => {
      const response = await fetch(`${server.url}/tabbooks`, { method: 'POST', headers: { 'service-engine-authorizer': keys[who] as string, 'content-type': 'application/json', accept: XLSX }, body: JSON.stringify({ SurveyCode: 'GSS', ...body }) });
      const bytes = Buffer.from(await response.arrayBuffer());
      if (response.status !== 200) return { status: response.status, text: bytes.toString('utf8'), rows: [] };
      const workbook = new ExcelJS.Workbook();
      await workbook.xlsx.load(bytes as unknown as ArrayBuffer);
      const rows: string[] = [];
      workbook.eachSheet((sheet) => sheet.eachRow((row) => rows.push(`${sheet.name}: ${JSON.stringify(row.values)}`)));
      return { status: 200, text: '', rows };
    };
    const byName = await book('bob', { PopulationBaseCode: '@women-25-40', Banner: ['@liberal-women', 'sex', 'degree=3,4 OR @liberals'], Stubs: ['race', 'degree'] });
    expect(byName.status, byName.text).toBe(200);
    const written = await book('bob', { PopulationBaseCode: `(${WOMEN})`, Banner: ['((polviews=1,2) AND sex=2)', 'sex', 'degree=3,4 OR (polviews=1,2)'], Stubs: ['race', 'degree'] });
    expect(written.status, written.text).toBe(200);
    // The same book, headings included: each heading is an expression that reads back to the
    // same respondents without the account's audiences (the workbook shows no other expression).
    expect(byName.rows).toEqual(written.rows);
    expect(byName.rows.join('\n')).not.toContain('@');
    expect(byName.rows.join('\n')).toContain(`Base: (${WOMEN})`);
    // Entitlements: the audience's groups, never its definition.
    const narrowed = await book('bob', { AuthorizationGroup: 'demographics', Banner: ['sex', '@liberals'], Stubs: ['race'] });
    expect(narrowed.status).toBe(403);
    expect(JSON.parse(narrowed.text).error).toMatchObject({ code: 'forbidden_survey', field: 'Banner' });
    expect(narrowed.text).not.toMatch(/polviews|attitudes/);
    const unknown = await book('rival', { PopulationBaseCode: '@women-25-40', Banner: ['sex'], Stubs: ['race'] });
    expect(JSON.parse(unknown.text).error).toMatchObject({ code: 'unknown_audience', field: 'PopulationBaseCode' });
    expect(unknown.text).not.toMatch(/sex=2|alice|portal/);
  });

  it('checked at save: names, the expression against the survey, cycles, shared audiences using only shared ones', async () => {
    const badName = await save('alice', { Name: 'Women 25', Expression: 'sex=2' });
    expect(badName.body.error).toMatchObject({ code: 'invalid_request', field: 'Name' });
    expect(badName.body.error.hint).toContain('women-25');
    expect((await save('alice', { Name: 'w', Expression: 'sex=9' })).body.error).toMatchObject({ code: 'unknown_value', field: 'Expression' });
    expect((await save('alice', { Name: 'w', Expression: '@nobody AND sex=1' })).body.error).toMatchObject({ code: 'unknown_audience', field: 'Expression' });
    const cycle = await call('alice', 'PUT', `/audiences/${women}`, { Expression: '@liberal-women' });
    expect(cycle.status).toBe(200);
    const loop = await call('alice', 'PUT', `/audiences/${women}`, { Expression: 'sex=2' });
    expect(loop.status).toBe(200);
    const a = await save('alice', { Name: 'cycle-a', Expression: 'sex=2' });
    const b = await save('alice', { Name: 'cycle-b', Expression: '@cycle-a AND race=1' });
    expect(b.status, b.text).toBe(201);
    const refused = await call('alice', 'PUT', `/audiences/${a.body.AudienceId}`, { Expression: '@cycle-b' });
    expect(refused.body.error).toMatchObject({ code: 'invalid_expression', field: 'Expression' });
    expect(refused.body.error.message).toContain('@cycle-a -> @cycle-b -> @cycle-a');
    const selfish = await save('alice', { Name: 'selfish', Expression: '@selfish' });
    expect(selfish.body.error.code).toBe('invalid_expression');
    // A shared audience may use shared audiences only: it means the same to every caller.
    const sharedOnPrivate = await save('alice', { Name: 'shared-on-private', Expression: '@cycle-a', Shared: true });
    expect(sharedOnPrivate.body.error).toMatchObject({ code: 'unknown_audience', field: 'Expression' });
    expect((await save('acme', { Name: 'account-private', Expression: 'sex=1' })).body.error).toMatchObject({ code: 'invalid_request', field: 'Shared' });
    expect((await save('acme', { Name: 'account-shared', Expression: 'sex=1', Shared: true })).status).toBe(201);
    expect((await save('alice', { Name: 'liberals', Expression: 'sex=1' })).status).toBe(409);
    expect((await save('alice', { Name: 'w', Expression: 'sex=1', Extra: 1 })).body.error.code).toBe('invalid_request');
  });

  it('checked at use: an unknown @name names only itself; a stored expression the data no longer fits is refused', async () => {
    const unknown = await crosstab('alice', '*', ['@nope']);
    expect(unknown.body.error).toMatchObject({ code: 'unknown_audience', field: 'TargetCodes' });
    expect(unknown.body.error.message).toContain('@nope');
    expect((await crosstab('alice', '*', ['@Bad'])).body.error.code).toBe('invalid_expression');
    expect((await crosstab('alice', '*', ['@women-25-40=1'])).body.error.code).toBe('invalid_expression');
    // As if the survey's data changed under a saved audience.
    const stale = await save('alice', { Name: 'stale', Expression: 'sex=1' });
    await db.query("UPDATE audiences SET expression = 'sex=7' WHERE id = $1", [stale.body.AudienceId]);
    const answer = await crosstab('alice', '@stale', ['sex=1']);
    expect(answer.body.error).toMatchObject({ code: 'unknown_value', field: 'PopulationBaseCode' });
    expect(answer.body.error.message).toContain('audience @stale no longer fits survey GSS');
    expect((await call('alice', 'DELETE', `/audiences/${stale.body.AudienceId}`)).status).toBe(204);
    expect((await crosstab('alice', '@stale', ['sex=1'])).body.error.code).toBe('unknown_audience');
  });

  it('never billed; listed in the OpenAPI document', async () => {
    const before = (await usageReport(db, { account: 'acme' })).calls;
    await call('alice', 'GET', '/audiences');
    await save('alice', { Name: 'free', Expression: 'sex=1' });
    expect((await usageReport(db, { account: 'acme' })).calls).toBe(before);
    const docs = (await (await fetch(`${server.url}/docs`)).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(docs.paths['/audiences'] ?? {})).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(docs.paths['/audiences/{AudienceId}'] ?? {})).toEqual(expect.arrayContaining(['get', 'put', 'delete']));
  });

  it('an account holds a bounded number of audiences', async () => {
    const account = (await db.query<{ id: string }>("SELECT id FROM accounts WHERE name = 'rival'")).rows[0]!.id;
    const input = (name: string) => ({ survey: 'GSS', name, expression: 'sex=1', label: null, shared: true });
    expect(await createAudience(db, { accountId: account }, input('one'), 2)).toMatchObject({ name: 'one' });
    expect(await createAudience(db, { accountId: account }, input('two'), 2)).toMatchObject({ name: 'two' });
    expect(await createAudience(db, { accountId: account }, input('three'), 2)).toMatchObject({ refused: 'limit' });
  });
});
