// Multi-response variables over real HTTP: GET /surveys/{SurveyCode} lists them (Kind multi,
// every value with the expression that selects it, the no-answer expression) and POST
// /crosstab answers their expressions as the dummy columns they stand for.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset, tabbook, tabbookSize, type Dataset } from '../../src/index.js';
import { buildOpenApiDocument, createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { ContractJudge, makeKeyFile, tempDir, type TestKeys } from './support.js';
import { rejection } from '../support/rejection.js';

let ds: Dataset;
let judge: ContractJudge;
let keys: TestKeys;
let server: RunningServer;

beforeAll(async () => {
  const dir = tempDir();
  const lines = ['w,A,B,C,brands'];
  for (let row = 0; row < 600; row++) {
    const blank = row % 17 === 0;
    const dich = [row % 2, row % 3, row % 5].map((r) => (blank ? '' : r === 0 ? '1' : '0'));
    const brands = row % 11 === 0 ? '' : ['1', '2', '3'].filter((_, i) => (row >> i) & 1).join(';') || ';';
    lines.push([1 + (row % 7) / 4, ...dich, brands].join(','));
  }
  writeFileSync(join(dir, 'data.csv'), `${lines.join('\n')}\n`);
  writeFileSync(join(dir, 'codebook.json'), JSON.stringify({ variables: { B: { label: 'Private' } }, multi: { name: 'cover', columns: ['A', 'B', 'C'], counted: '1' } }));
  await buildDataset(join(dir, 'data.csv'), { weights: ['w'], survey: 'MR', out: join(dir, 'mr.arrow'), codebook: join(dir, 'codebook.json'), multi: [{ column: 'brands' }], threads: 0 });
  ds = await openDataset(join(dir, 'mr.arrow'));
  judge = await ContractJudge.create(buildOpenApiDocument({ serverUrl: '/v1', maxBodyBytes: 65536 }));
  keys = await makeKeyFile(dir);
  server = await listen(await createCrosstabHandler({ datasets: [ds], keys: keys.path, usage: join(dir, 'usage.ndjson'), maxBodyBytes: 65536 }), { port: 0 });
});
afterAll(async () => {
  await server?.close();
  ds?.close();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'service-engine-authorizer': keys.all, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

describe('multi-response variables over REST', () => {
  it('GET /surveys/{SurveyCode} lists them with Kind multi, their values and no-answer expression', async () => {
    const reply = await call('GET', '/surveys/MR');
    expect(reply.status).toBe(200);
    judge.check('get', '/surveys/{SurveyCode}', 200, reply.body);
    const cover = reply.body.Variables.find((v: any) => v.Name === 'cover');
    expect(cover.Kind).toBe('multi');
    expect(cover.Range).toBeUndefined();
    expect(cover.Values.map((v: any) => [v.Value, v.Label, v.Expression])).toEqual([['1', 'A', 'cover=1'], ['2', 'Private', 'cover=2'], ['3', 'C', 'cover=3']]);
    expect(cover.Missing.Expression).toBe('cover=NA');
    const brands = reply.body.Variables.find((v: any) => v.Name === 'brands');
    expect(brands.Kind).toBe('multi');
    expect(brands.Values.map((v: any) => v.Expression)).toEqual(['brands=1', 'brands=2', 'brands=3']);
  });

  it('POST /tables expands a multi-response variable into entries the document declares (multi, net)', async () => {
    const reply = await call('POST', '/tables', { SurveyCode: 'MR', PopulationBaseCode: '*', Rows: [{ Variable: 'cover' }], Columns: ['A=1', 'A=0'], Statistics: ['vpct', 'se'] });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.Table.rows.some((row: any) => row.multi === true)).toBe(true);
    // Closed schemas: an axis-entry field the document did not declare would fail here.
    judge.check('post', '/tables', 200, reply.body);
  });

  it('POST /crosstab answers multi-response targets and bases as their dummy columns', async () => {
    const pairs: Array<[string, string]> = [
      ['cover=2,3', 'B=1 OR C=1'],
      ['cover=all(1,2)', 'A=1 AND B=1'],
      ['cover=none(1)', 'A=0'],
      ['cover=NA', 'A=NA'],
    ];
    // A request takes two targets: the multi-response one and its dummy-column twin.
    for (const base of ['*', 'brands=all(1,3)']) {
      for (const [multi, dummies] of pairs) {
        const reply = await call('POST', '/crosstab', { SurveyCode: 'MR', PopulationBaseCode: base, TargetCodes: [multi, dummies] });
        expect(reply.status, JSON.stringify(reply.body)).toBe(200);
        judge.check('post', '/crosstab', 200, reply.body);
        expect({ multi, ...reply.body.Results[0] }).toEqual({ multi, ...reply.body.Results[1] });
        if (base === '*') expect(reply.body.Results[0].Resps).toBeGreaterThan(0);
      }
    }
  });

  it('POST /crosstab refuses all(...) on a single-coded variable with a 400 naming it', async () => {
    const reply = await call('POST', '/crosstab', { SurveyCode: 'MR', PopulationBaseCode: '*', TargetCodes: ['A=all(1,0)'] });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toContain('A holds one value per respondent');
  });

  it('a tab book at the cells limit is made and one over it refused, counted alike by tabbook({ maxCells }) and POST /tabbooks (nets and "No answer" rows and columns included)', async () => {
    const book = { banner: ['cover', 'A=1'], stubs: ['cover', 'brands'], missing: 'show' as const, stats: ['vpct' as const] };
    const made = await tabbook(ds, book);
    // The cells the book holds: cover and brands each 3 values, the net and "No answer" (both have blanks); Total, cover's 5 columns, A=1.
    const cells = made.tables.reduce((sum, table) => sum + table.result.rows.length, 0) * (1 + made.banner.length);
    expect(cells).toBe((5 + 5) * (1 + 5 + 1));
    expect(tabbookSize(ds.info, book)).toEqual({ tables: 2, rows: 10, columns: 7, cells, bannerColumns: [5, 1] });
    await tabbook(ds, { ...book, maxCells: cells });
    const refused = await rejection(tabbook(ds, { ...book, maxCells: cells - 1 }));
    expect([refused.code, refused.details.field, refused.details['needed']]).toEqual(['invalid_option', 'maxCells', cells]);
    for (const limit of [cells, cells - 1]) {
      const limited = await listen(await createCrosstabHandler({ datasets: [ds], keys: keys.path, usage: join(tempDir(), 'usage.ndjson'), tableLimits: { cells: limit } }), { port: 0 });
      try {
        const reply = await fetch(`${limited.url}/tabbooks`, {
          method: 'POST',
          headers: { 'service-engine-authorizer': keys.all, 'content-type': 'application/json' },
          body: JSON.stringify({ SurveyCode: 'MR', Banner: book.banner, Stubs: book.stubs, Statistics: book.stats }),
        });
        if (limit === cells) {
          expect(reply.status, await reply.clone().text()).toBe(200);
          await reply.arrayBuffer();
        } else {
          expect(reply.status).toBe(400);
          // The REST limit's refusal (nothing computed), not the library's maxCells passed through.
          expect(((await reply.json()) as { error: unknown }).error).toMatchObject({
            code: 'invalid_request',
            field: 'Stubs',
            message: `The tab book has 2 tables of 10 rows in all x 7 columns = ${cells} cells; at most ${limit} are allowed (the cells limit of a table).`,
          });
        }
      } finally {
        await limited.close();
      }
    }
  });
});
