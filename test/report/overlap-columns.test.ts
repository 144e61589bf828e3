// Column tests between overlapping columns (respondents in more than one column) against R's
// survey package: every cell, every pair's difference, SE, z, p, Holm p and every letter of
// test/fixtures/r/overlap.reference.json (scripts/overlap-fixtures.R), to relative 1e-9,
// simple design and strata/PSU designs, on both execution paths.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildDataset, type BuildOptions } from '../../src/build/build.js';
import { CrosstabError, ErrorCode, openDataset, type Dataset, type TableResult } from '../../src/index.js';
import { TABLE_METADATA_KEY, tableStatistics, tableToArrow, tableToJSON, tableToText } from '../../src/report/index.js';
import { linearizationVariance } from '../../src/stats/index.js';
import { nhanesCsv, rFixtures } from '../support/paths.js';
import { expectOverlapTable, overlapFixture, type OverlapTable } from './overlap-fixture.js';
import { ErrorLedger, requireBuiltCli, runTable } from './support.js';

const ledger = new ErrorLedger();
afterAll(() => console.log(`overlapping columns, max relative error vs R (statistic, compared, error):\n${ledger.table()}`));

const dir = mkdtempSync(join(tmpdir(), 'crosstab-overlap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const built = new Map<string, Promise<string>>();

/** The dataset of a fixture table: the suite's GSS / NHANES for the simple design, else built with R's design. */
function datasetOf(table: OverlapTable): Promise<string> {
  const { weight, ...design } = table.build;
  const simple = Object.keys(design).length === 0;
  if (simple && table.file === 'gss') return Promise.resolve(inject('testDatasets').gss);
  if (simple && table.file === 'nhanes') return Promise.resolve(inject('testDatasets').nhanes);
  const key = `${table.file} ${JSON.stringify(table.build)}`;
  let path = built.get(key);
  if (!path) {
    const out = join(dir, `${built.size}.arrow`);
    const input = table.file === 'nhanes' ? nhanesCsv : join(rFixtures, `${table.file}.csv.gz`);
    const options: BuildOptions = { weights: [weight], survey: table.file === 'nhanes' ? 'NHANES' : 'ACS', out };
    if (!simple) options.design = design;
    path = buildDataset(input, options).then(() => out);
    built.set(key, path);
  }
  return path;
}

const TOLERANCE = 1e-9;

describe.each(['inline', 'pool'] as const)('overlapping columns, %s', (execution) => {
  describe.each(overlapFixture.tables.map((table) => [table.id, table] as const))('R table %s', (_id, table) => {
    let ds: Dataset;
    let result: TableResult;
    beforeAll(async () => {
      ds = await openDataset(await datasetOf(table), { execution });
      const rows = table.rowVariable === null ? table.rows : [{ variable: table.rowVariable }];
      result = await ds.table({ base: table.base, rows, columns: table.columns, columnGroups: table.groups, percentBase: table.percentBase, missing: 'hide' });
      return () => ds.close();
    }, 300_000);

    const check = (what: string, ours: number | undefined, reference: number, where: string) => {
      const error = ledger.add(what, ours, reference);
      if (error > TOLERANCE) expect.fail(`${table.id} ${what} ${where}: ours ${ours}, R ${reference} (relative error ${error})`);
    };

    it('every cell, pair and letter equals R to 1e-9', () => {
      expectOverlapTable(result, table, (expr) => table.columns.indexOf(expr), check);
    });
  });
});

describe('overlapping columns through crosstab table --column-group', () => {
  const table = overlapFixture.tables.find((t) => t.id === 'nhanes-simple')!;
  it('gives R\'s differences, SEs and p-values in its JSON', async () => {
    requireBuiltCli();
    const args = [inject('testDatasets').nhanes, '--base', table.base, ...table.rows.flatMap((row) => ['--row', row]), ...table.columns.flatMap((column) => ['--column', column])];
    const run = await runTable([...args, '--column-group', table.groups[0]!.join(','), '--stats', 'vpct,se,sig', '--format', 'json']);
    expect(run.stderr).toBe('');
    const json = JSON.parse(run.stdout.toString()) as { comparisons: Array<{ row: number; columnA: number; columnB: number; standardError: number; pValue: number; respondentsInBoth?: number }> };
    expect(json.comparisons.length).toBe(table.comparisons.length);
    for (const pair of table.comparisons) {
      const ours = json.comparisons.find((c) => c.row === table.rows.indexOf(pair.row) && c.columnA === table.columns.indexOf(pair.columnA) && c.columnB === table.columns.indexOf(pair.columnB))!;
      expect(ours.respondentsInBoth).toBe(pair.respondentsInBoth);
      expect(ledger.add('SE of difference (CLI)', ours.standardError, pair.se)).toBeLessThan(TOLERANCE);
      expect(ledger.add('p (CLI)', ours.pValue, pair.p)).toBeLessThan(TOLERANCE);
    }
    const kish = await runTable([...args, '--column-group', '0,1,2', '--stats', 'sig', '--se', 'kish']);
    expect(kish.code).toBe(1);
    expect(kish.stderr).toMatch(/--se kish: column 0 \(RIAGENDR=1\) and column 2 \(agecat=3,4\) share respondents/);
    const bad = await runTable([...args, '--column-group', '0,x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--column-group "0,x": "x" is not a column index/);
  });
});

describe('overlapping columns: what stays and what is refused', () => {
  let ds: Dataset;
  let result: TableResult;
  const table = overlapFixture.tables.find((t) => t.id === 'nhanes-simple')!;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').nhanes);
    result = await ds.table({ base: table.base, rows: table.rows, columns: table.columns, columnGroups: table.groups });
    return () => ds.close();
  });

  it('disjoint columns (men, women) keep the variance without covariance, exactly', () => {
    const statistics = tableStatistics(result, { stats: ['sig'] });
    const width = result.columns.length;
    for (let r = 0; r < result.rows.length; r++) {
      const pair = statistics.comparisons!.find((c) => c.row === r && c.columnA === 0 && c.columnB === 1)!;
      expect(pair.respondentsInBoth).toBe(0);
      const variance = (c: number) => linearizationVariance({ weighted: result.weighted[r * width + c]!, respondents: result.respondents[r * width + c]!, sumSqWeights: result.sumSqWeights[r * width + c]! }, result.columnTotals[c]!, statistics.designRespondents);
      expect(pair.standardError).toBe(Math.sqrt(variance(0) + variance(1)));
    }
  });

  it('refuses groups of possibly overlapping columns whose overlap the table did not count', async () => {
    const plain = await ds.table({ base: table.base, rows: table.rows, columns: table.columns });
    let caught: unknown;
    try {
      tableStatistics(plain, { stats: ['sig'], columnGroups: table.groups });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CrosstabError);
    expect((caught as CrosstabError).code).toBe(ErrorCode.invalidOption);
    expect((caught as CrosstabError).details.field).toBe('columnGroups');
    expect((caught as CrosstabError).message).toMatch(/column 0 \(RIAGENDR=1\) and column 1 \(RIAGENDR=2\) may share respondents/);
  });

  it('refuses the pooled effective-base test on columns that share respondents', () => {
    let caught: unknown;
    try {
      tableStatistics(result, { stats: ['sig'], se: 'kish' });
    } catch (error) {
      caught = error;
    }
    expect((caught as CrosstabError).details.field).toBe('test');
  });

  it('says Rao-Scott is not defined for the overlapping group, in JSON and text', () => {
    const statistics = tableStatistics(result, { stats: ['vpct', 'chisq'] });
    expect(statistics.raoScott).toEqual([]);
    expect(statistics.raoScottNotDefined).toEqual([{ group: 0, reason: 'overlapping-columns' }]);
    expect(tableToJSON(result, statistics).raoScottNotDefined).toEqual([{ group: 0, reason: 'overlapping-columns' }]);
    expect(tableToText(result, statistics)).toContain('Rao-Scott chi-square: not defined for columns A-E, which share respondents');
    const metadata = JSON.parse(tableToArrow(result, statistics).schema.metadata.get(TABLE_METADATA_KEY)!) as { raoScottNotDefined?: unknown };
    expect(metadata.raoScottNotDefined).toEqual([{ group: 0, reason: 'overlapping-columns' }]);
  });

  it('rejects bad columnGroups naming them', async () => {
    await expect(ds.table({ base: '*', rows: table.rows, columns: table.columns, columnGroups: [[0, 9]] })).rejects.toMatchObject({ code: ErrorCode.invalidOption, details: { field: 'columnGroups[0]' } });
    await expect(ds.table({ base: '*', rows: table.rows, columns: table.columns, columnGroups: [[0, 1], [1, 2]] })).rejects.toThrow(/already in another group/);
  });
});
