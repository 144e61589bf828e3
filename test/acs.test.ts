// The full ACS PUMS 2024 person file (2,736,891 respondents, 38 columns), when present in
// ../shared/datasets (it is in CI). Figures are checked against published Census totals
// and against DuckDB computing the same sums from the same CSV.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, CrosstabError, ErrorCode, openDataset, type BuildReport, type Dataset } from '../src/index.js';
import { acsDuckDb } from './support/acs-builds.js';
import { ACS_DUCKDB_CELLS, ACS_DUCKDB_GROUP_BY, ACS_NETS } from './support/acs-duckdb-checks.js';
import { acsCsv, skipWithoutAcs } from './support/paths.js';

const skipAcs = skipWithoutAcs('test/acs.test.ts (ACS at full scale)');

describe.skipIf(skipAcs)('ACS PUMS 2024 at full scale', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-acs-'));
  const out = join(dir, 'acs.arrow');
  let report: BuildReport;
  let buildSeconds: number;
  let inline: Dataset;
  let pooled: Dataset;
  let duck: Awaited<ReturnType<Awaited<ReturnType<typeof DuckDBInstance.create>>['connect']>>;

  // The pool's dataset is built with a range index on the numeric variables the checks ask
  // ranges of, the inline one with none (not even the automatic one), so that every check
  // against DuckDB covers both ways of building a range.
  const indexedOut = join(dir, 'acs-range-index.arrow');

  beforeAll(async () => {
    const started = performance.now();
    report = await buildDataset(acsCsv, { weights: ['PWGTP'], survey: 'ACS', out, rangeIndex: 'none' });
    buildSeconds = (performance.now() - started) / 1000;
    await buildDataset(acsCsv, { weights: ['PWGTP'], survey: 'ACS', out: indexedOut, rangeIndex: ['AGEP', 'SCHL', 'HISP', 'JWMNP'] });
    inline = await openDataset(out, { execution: 'inline' });
    pooled = await openDataset(indexedOut, { execution: 'pool' });
    expect(pooled.info.variables.filter((v) => v.rangeIndex).map((v) => v.name)).toEqual(['AGEP', 'HISP', 'SCHL', 'JWMNP']);
    // DuckDB's table of the CSV, made once per run and shared with test/clickhouse/acs.test.ts.
    duck = await (await DuckDBInstance.create(await acsDuckDb(), { access_mode: 'READ_ONLY' })).connect();
  }, 900_000);

  afterAll(() => {
    inline?.close();
    pooled?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function duckCell(where: string): Promise<{ weighted: number; respondents: number }> {
    const reader = await duck.runAndReadAll(`SELECT COALESCE(SUM(PWGTP), 0)::DOUBLE AS w, COUNT(*)::DOUBLE AS n FROM acs WHERE ${where}`);
    const [w, n] = reader.getRows()[0]! as [number, number];
    return { weighted: w, respondents: n };
  }

  it('builds with automatic codes; the id column is skipped, zero-padded text stays text', () => {
    console.info(`ACS build: ${buildSeconds.toFixed(1)} s, ${(report.bytes / 1e6).toFixed(1)} MB on disk, ${report.variables} variables, ${report.codes} value codes`);
    expect(report.respondents).toBe(2_736_891);
    expect(report.skipped.map((s) => s.column)).toEqual(['SERIALNO']);
    expect(statSync(out).size).toBe(report.bytes);
    const byName = new Map(inline.info.variables.map((v) => [v.name, v]));
    expect(byName.get('STATE')!.kind).toBe('text');
    expect(byName.get('PUMA')!.kind).toBe('text');
    expect(byName.get('AGEP')!.kind).toBe('numeric');
    expect(byName.get('PINCP')!.distinct).toBeGreaterThan(5000);
  });

  it('state populations equal the Census Vintage 2024 estimates (New York, Wyoming)', async () => {
    const result = await inline.crosstab({ base: '*', targets: ['STATE=36', 'STATE=56'] });
    expect(result.targets[0]!.weighted).toBe(19_867_248);
    expect(result.targets[1]!.weighted).toBe(587_618);
  });

  it('California is not in the file: STATE=06 is an unknown value; STATE=1 suggests 01', async () => {
    const error = await inline.crosstab({ base: '*', targets: ['STATE=06'] }).catch((e: unknown) => e);
    expect((error as CrosstabError).code).toBe(ErrorCode.unknownValue);
    const one = await inline.crosstab({ base: '*', targets: ['STATE=1'] }).catch((e: unknown) => e);
    expect((one as CrosstabError).details.suggestions).toContain('01');
  });

  it.each(ACS_DUCKDB_CELLS)('base %s, target %s equals DuckDB', async (base, target, where) => {
    const expected = await duckCell(where);
    // Inline on the plain dataset, on the pool with the range index.
    for (const ds of [inline, pooled]) {
      const result = await ds.crosstab({ base, targets: [target] });
      expect(result.targets[0]!.respondents).toBe(expected.respondents);
      expect(result.targets[0]!.weighted).toBe(expected.weighted); // integer weights: exact
    }
  });

  it.each(['inline', 'pool'] as const)('%s: OCCP x SEX (group-by) and overlapping nets (bitsets) equal DuckDB', async (execution) => {
    const ds = execution === 'inline' ? inline : pooled;
    const byGroup = await ds.table({ base: 'ESR=1,2', rows: [{ variable: 'OCCP' }], columns: [{ variable: 'SEX' }] });
    expect(byGroup.plan).toBe('groupBy');
    expect(byGroup.execution).toBe(execution);
    const reader = await duck.runAndReadAll(ACS_DUCKDB_GROUP_BY);
    const rows = new Map(byGroup.rows.map((row, r) => [Number(row.value), r]));
    const rowsDuck = reader.getRows() as Array<[number, number, number, number]>;
    expect(rowsDuck.length).toBeGreaterThan(500);
    for (const [occp, sex, w, n] of rowsDuck) {
      const cell = byGroup.cell(rows.get(Number(occp))!, Number(sex) - 1);
      expect([cell.weighted, cell.respondents]).toEqual([w, n]);
    }
    const nets = await ds.table({ base: ACS_NETS.base, rows: ACS_NETS.rows, columns: ACS_NETS.columns });
    expect(nets.plan).toBe('bitsets');
    for (const [r, c, where] of ACS_NETS.cells) {
      const expected = await duckCell(where);
      expect([nets.cell(r, c).weighted, nets.cell(r, c).respondents]).toEqual([expected.weighted, expected.respondents]);
    }
  });

  it.each([10, 50, 150])(
    'closing a pool dataset %i ms into a 400 x 60 table leaves a table computed meanwhile on the file opened again exact',
    async (delay) => {
      const puma = inline.info.variables.find((v) => v.name === 'PUMA')!.values!.map((v) => v.value);
      const rows = (n: number) => Array.from({ length: n }, (_, i) => `PUMA=${puma[i % puma.length]},${puma[(i * 7 + 3) % puma.length]}`);
      const columns = Array.from({ length: 60 }, (_, i) => `AGEP=${i}..${i + 30}`);
      const query = { base: 'SEX=2', rows: rows(100), columns };
      const expected = await inline.table(query);
      const closing = await openDataset(out, { execution: 'pool' });
      const running = closing.table({ base: '*', rows: rows(400), columns }).then(
        () => undefined,
        (error: unknown) => error,
      );
      await new Promise((resolve) => setTimeout(resolve, delay));
      const closed = closing.close();
      const opened = await openDataset(out, { execution: 'pool' });
      try {
        const table = await opened.table(query);
        expect(table.execution).toBe('pool');
        expect([...table.weighted]).toEqual([...expected.weighted]);
        expect([...table.respondents]).toEqual([...expected.respondents]);
        expect([...table.sumSqWeights]).toEqual([...expected.sumSqWeights]);
        const error = await running;
        if (error !== undefined) expect((error as CrosstabError).code).toBe(ErrorCode.closed);
        await closed;
      } finally {
        await opened.close();
      }
    },
    120_000,
  );

  it('an inline group-by table over 2.7M respondents lets a setInterval of the host fire while it runs, and equals the pool one', async () => {
    // Every occupation by every industry over everyone: a grid of 3.4 MB and 2.7M adds into
    // it, several slices of work on the calling thread, so the host's timer gets a turn.
    // (OCCP x SEX over adults no longer took a whole slice once the pass got faster.)
    const query = { base: 'AGEP=0..', rows: [{ variable: 'OCCP' }], columns: [{ variable: 'INDP' }] };
    await inline.table(query); // buffers read and checked on first use, outside the measured call
    const events: string[] = [];
    const interval = setInterval(() => events.push('tick'), 1);
    const table = await inline.table(query);
    events.push('resolved');
    clearInterval(interval);
    expect(table.plan).toBe('groupBy');
    expect(table.execution).toBe('inline');
    expect(events[0]).toBe('tick');
    const pool = await pooled.table(query);
    expect([...table.weighted]).toEqual([...pool.weighted]);
    expect([...table.respondents]).toEqual([...pool.respondents]);
  });

  it('query latency and memory (reported, not asserted)', async () => {
    const query = { base: 'AGEP=18..', targets: ['SEX=2', 'SCHL=21..24'] };
    await inline.crosstab(query);
    const times: number[] = [];
    for (let i = 0; i < 50; i++) {
      const started = performance.now();
      await inline.crosstab(query);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    console.info(`ACS S1 latency: median ${times[25]!.toFixed(3)} ms, min ${times[0]!.toFixed(3)} ms; RSS ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`);
    expect(times.length).toBe(50);
  });
});
