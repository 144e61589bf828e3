// POST /tables answering a PowerPoint deck by Accept, over real HTTP: the deck's native chart
// data holds exactly the vertical % of the JSON answer to the same request (computed even when
// Statistics leaves vpct out), its slide table has a Total column, it is billed once as a
// table, declared in GET /docs, and a table too large for a deck is refused before any work,
// not billed.
import { join } from 'node:path';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset, type TableJson } from '../../src/index.js';
import { createCrosstabHandler, type CrosstabHandler } from '../../src/http/index.js';
import { ContractJudge, makeKeyFile, readLedger, shims, tempDir, type RunningShim, type TestKeys } from './support.js';

const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
const paths = inject('testDatasets');

/** Per chart of the deck, per series, its cached values in point order. */
async function chartSeries(bytes: Uint8Array): Promise<number[][][]> {
  const zip = await JSZip.loadAsync(bytes);
  const charts = Object.keys(zip.files)
    .filter((name) => /^ppt\/charts\/chart\d+\.xml$/.test(name))
    .sort((a, b) => Number(/(\d+)\.xml$/.exec(a)![1]) - Number(/(\d+)\.xml$/.exec(b)![1]));
  const out: number[][][] = [];
  for (const name of charts) {
    const xml = await zip.file(name)!.async('string');
    out.push(
      [...xml.matchAll(/<c:ser>([\s\S]*?)<\/c:ser>/g)].map((series) => {
        const values = /<c:val>[\s\S]*?<\/c:val>/.exec(series[1]!)![0];
        return [...values.matchAll(/<c:pt idx="\d+">\s*<c:v>([^<]*)<\/c:v>/g)].map((point) => Number(point[1]));
      }),
    );
  }
  return out;
}

describe('POST /tables as PPTX', () => {
  let gss: Dataset;
  let keys: TestKeys;
  let ledgerPath: string;
  let handler: CrosstabHandler;
  let server: RunningShim;
  let judge: ContractJudge;

  beforeAll(async () => {
    gss = await openDataset(paths.gss);
    judge = await ContractJudge.create();
    const dir = tempDir();
    keys = await makeKeyFile(dir);
    ledgerPath = join(dir, 'usage.ndjson');
    handler = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: ledgerPath });
    server = await shims[0]!.start(handler);
  });
  afterAll(async () => {
    await server.close();
    await handler.close();
    gss.close();
  });

  const request = { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', Rows: [{ Variable: 'degree' }, { Variable: 'polviews' }], Columns: [{ Variable: 'sex' }, { Variable: 'race' }], Statistics: ['sig'], Missing: 'hide' };
  const postTable = (accept: string, body: unknown = request) =>
    fetch(`${server.origin}/v1/tables`, { method: 'POST', headers: { 'service-engine-authorizer': keys.all, 'content-type': 'application/json', accept }, body: JSON.stringify(body) });

  it('answers a deck whose chart values are the JSON answer\'s vertical %, a slide per row variable, billed once as a table', async () => {
    const json = await postTable('application/json', { ...request, Statistics: ['vpct', 'sig'] });
    expect(json.status).toBe(200);
    const table = ((await json.json()) as { Table: TableJson }).Table;
    const before = readLedger(ledgerPath).length;
    const reply = await postTable(PPTX);
    const bytes = new Uint8Array(await reply.arrayBuffer());
    expect(reply.status, Buffer.from(bytes).toString('utf8').slice(0, 300)).toBe(200);
    expect(reply.headers.get('content-type')).toBe(PPTX);
    expect(reply.headers.get('content-disposition')).toBe('attachment; filename="GSS-table.pptx"');
    const ledger = readLedger(ledgerPath);
    expect(ledger.length).toBe(before + 1);
    expect(ledger.at(-1)).toMatchObject({ survey: 'GSS', operation: 'table', targets: table.rows.length + table.columns.length });

    const charts = await chartSeries(bytes);
    expect(charts).toHaveLength(2);
    let checked = 0;
    for (const [index, variable] of ['degree', 'polviews'].entries()) {
      const rows = table.rows.flatMap((entry, r) => (entry.variable === variable ? [r] : []));
      expect(charts[index]).toHaveLength(table.columns.length);
      for (const [column, values] of charts[index]!.entries()) {
        expect(values).toEqual(rows.map((r) => table.cells[r]![column]!.columnPct));
        checked += values.length;
      }
    }
    expect(checked).toBe(table.rows.length * table.columns.length);
    // The slide's native table: a Total column holding each row's share of the base.
    const slide = await (await JSZip.loadAsync(bytes)).file('ppt/slides/slide1.xml')!.async('string');
    const texts = [...slide.matchAll(/<a:t>([^<]*)<\/a:t>/g)].map((match) => match[1]);
    expect(texts).toContain('Total');
    for (const r of table.rows.flatMap((entry, at) => (entry.variable === 'degree' ? [at] : []))) {
      const share = table.rowTotals[r]!.weighted / table.total.weighted;
      expect(texts).toContain(`${(100 * share).toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })}%`);
    }
  });

  it('declares the deck in GET /docs', async () => {
    const document = (await (await fetch(`${server.origin}/v1/docs`)).json()) as { paths: Record<string, any> };
    const ok = document.paths['/tables'].post.responses['200'];
    expect(ok.content[PPTX].schema).toMatchObject({ type: 'string', format: 'binary' });
  });

  it('names the deck type in a 406', async () => {
    const reply = await postTable('image/png');
    expect(reply.status).toBe(406);
    const body = (await reply.json()) as { error: { message: string } };
    judge.check('post', '/tables', 406, body);
    expect(body.error.message).toContain(PPTX);
  });

  it('refuses a table whose chart would have too many bars before any work, not billed', async () => {
    const before = readLedger(ledgerPath).length;
    // Age by age: some 70 x 70 bars on one slide.
    const wide = { ...request, Rows: [{ Variable: 'age' }], Columns: [{ Variable: 'age' }] };
    const reply = await postTable(PPTX, wide);
    const body = (await reply.json()) as { error: { code: string; field: string; message: string } };
    expect(reply.status, body.error.message).toBe(400);
    judge.check('post', '/tables', 400, body);
    expect(body.error).toMatchObject({ code: 'invalid_request', field: 'Rows' });
    expect(body.error.message).toMatch(/at most 2,000 are allowed on one chart|at most 20,000 are allowed in a PowerPoint answer/);
    expect(readLedger(ledgerPath).length).toBe(before);
  });
});
