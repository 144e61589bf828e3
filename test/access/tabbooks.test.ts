// POST /v1/tabbooks over real HTTP, on PGlite and on PostgreSQL: the workbook's figures equal
// `crosstab tabbook`'s for the same banner, stubs and base (every cell of every sheet), the
// call is one usage row (operation "tabbook", targets = its number of tables), another
// group's variable is an unknown name, and a book past the table limits is refused before
// any work, billing nothing. Spawns dist/cli/main.js: run `npm run build:ts` first.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addKey, DbKeyStore, DbUsageSink, openDatabase, parseLicences, type Database } from '../../src/access/index.js';
import { tempDir } from '../http/support.js';
import { repoRoot } from '../support/paths.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const paths = inject('testDatasets');
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
let postgres: PostgresServer | undefined;
afterAll(() => postgres?.stop());
const stores: Array<[string, () => Promise<string>]> = [
  ['embedded PGlite', async () => newEmbeddedFolder(join(tempDir('crosstab-tabbooks-'), 'db'))],
  ['PostgreSQL server', async () => (postgres ??= await startPostgres()).createDatabase(`tabbooks_${Date.now()}`)],
];

/** Every sheet's cell values, by sheet name. */
async function sheets(bytes: Buffer): Promise<Record<string, unknown[][]>> {
  const book = new ExcelJS.Workbook();
  await book.xlsx.load(bytes as unknown as ArrayBuffer);
  const out: Record<string, unknown[][]> = {};
  book.eachSheet((sheet) => {
    const rows: unknown[][] = [];
    sheet.eachRow({ includeEmpty: true }, (row) => rows.push(((row.values ?? []) as unknown[]).slice(1).map((value) => (value !== null && typeof value === 'object' && 'result' in value ? (value as { result: unknown }).result : value))));
    out[sheet.name] = rows;
  });
  return out;
}

describe.each(stores)('POST /v1/tabbooks (%s)', (_store, location) => {
  let db: Database;
  let gss: Dataset;
  let server: RunningServer;
  let key: string;
  const usage = async () => (await db.query<{ operation: string; targets: number; survey: string }>('SELECT operation, targets, survey FROM usage ORDER BY time')).rows;
  const post = (body: Record<string, unknown>) => fetch(`${server.url}/tabbooks`, { method: 'POST', headers: { 'content-type': 'application/json', accept: XLSX, 'service-engine-authorizer': key }, body: JSON.stringify(body) });

  beforeAll(async () => {
    db = await openDatabase(await location());
    await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:demographics']));
    key = (await addKey(db, { account: 'acme', name: 'books' })).apiKey;
    gss = await openDataset(paths.gss, { execution: 'pool' });
    server = await listen(await createCrosstabHandler({ datasets: [gss], keys: new DbKeyStore(db), usage: new DbUsageSink(db) }), { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await db?.close();
    await gss?.close();
  });

  it('answers the workbook `crosstab tabbook` writes (same figures, cell for cell), billed once as tabbook with its number of tables', async () => {
    const reply = await post({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', Banner: ['sex', 'race', '(degree=3,4)'], Stubs: ['degree', 'race', 'sex'] });
    expect(reply.status, await reply.clone().text()).toBe(200);
    expect(reply.headers.get('content-type')).toBe(XLSX);
    const served = Buffer.from(await reply.arrayBuffer());
    const out = join(tempDir('crosstab-tabbooks-cli-'), 'book.xlsx');
    const cli = spawnSync(process.execPath, [join(repoRoot, 'dist', 'cli', 'main.js'), 'tabbook', paths.gss, '--banner', 'sex,race,(degree=3,4)', '--stubs', 'degree,race,sex', '--base', 'year=2024', '--out', out], { encoding: 'utf8' });
    expect(cli.status, cli.stderr).toBe(0);
    const [mine, theirs] = [await sheets(served), await sheets(readFileSync(out))];
    expect(Object.keys(mine)).toEqual(['Index', ...Object.keys(mine).slice(1)]);
    expect(Object.keys(mine)).toHaveLength(4);
    expect(mine).toEqual(theirs);
    expect(await usage()).toEqual([{ operation: 'tabbook', targets: 3, survey: 'GSS' }]);
  });

  it('takes the variables of the caller\'s groups only, and refuses a book past the table limits before any work (nothing billed)', async () => {
    const before = (await usage()).length;
    const foreign = await post({ SurveyCode: 'GSS', Banner: ['sex'], Stubs: ['polviews'] });
    const madeUp = await post({ SurveyCode: 'GSS', Banner: ['sex'], Stubs: ['polviewz'] });
    const [a, b] = [(await foreign.json()) as { error: { code: string; message: string } }, (await madeUp.json()) as { error: { code: string; message: string } }];
    expect(foreign.status).toBe(400);
    expect(a.error.code).toBe('unknown_variable');
    expect(a.error.message).toBe(b.error.message.replaceAll('polviewz', 'polviews'));
    const all = await post({ SurveyCode: 'GSS', Banner: ['sex'], Stubs: 'all' });
    expect(all.status).toBe(200);
    const book = await sheets(Buffer.from(await all.arrayBuffer()));
    expect(JSON.stringify(book)).not.toContain('Extremely liberal');
    // age (72 values) as banner and stubs: past the comparisons limit of sig, refused at once.
    const large = await post({ SurveyCode: 'GSS', Banner: ['age', 'age'], Stubs: ['age', 'age', 'age'] });
    expect(large.status).toBe(400);
    expect(((await large.json()) as { error: { message: string } }).error.message).toMatch(/limit\)\.$/);
    const rows = await usage();
    expect(rows).toHaveLength(before + 1);
    expect(rows.at(-1)!.operation).toBe('tabbook');
    expect(rows.at(-1)!.targets).toBe(Object.keys(book).length - 1);
  });
});
