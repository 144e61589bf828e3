// Column tests on multi-response columns against R's survey package: the committed ACS subset
// with its dichotomies grouped by the codebook into `disab` (DEAR, DEYE, DREM, DPHY) and
// `cover` (HICOV, PRIVCOV, PUBCOV), counted "1", as whole-variable columns with their default
// groups, must give every cell, pair and letter of the R fixture's tables over the dummy
// columns (test/fixtures/r/overlap.reference.json, scripts/overlap-fixtures.R) to relative
// 1e-9, simple and strata/PSU designs, on both execution paths.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, type BuildOptions } from '../../src/build/build.js';
import { openDataset, type Dataset, type TableResult } from '../../src/index.js';
import { tableStatistics, tableToJSON, tableToText } from '../../src/report/index.js';
import { rFixtures } from '../support/paths.js';
import { expectOverlapTable, overlapFixture, type OverlapTable } from './overlap-fixture.js';
import { ErrorLedger, requireBuiltCli, runTable } from './support.js';

const tables = overlapFixture.tables.filter((table) => table.file === 'acs-overlap');
/** The multi-response value each dummy column of the fixture stands for. */
const MULTI_OF: Record<string, string> = {
  'DEAR=1': 'disab=1',
  'DEYE=1': 'disab=2',
  'DREM=1': 'disab=3',
  'DPHY=1': 'disab=4',
  'HICOV=1': 'cover=1',
  'PRIVCOV=1': 'cover=2',
  'PUBCOV=1': 'cover=3',
};
const TOLERANCE = 1e-9;
const ledger = new ErrorLedger();
const dir = mkdtempSync(join(tmpdir(), 'crosstab-multi-columns-'));
afterAll(() => {
  console.log(`multi-response columns, max relative error vs R (statistic, compared, error):\n${ledger.table()}`);
  rmSync(dir, { recursive: true, force: true });
});

const codebook = join(dir, 'codebook.json');
writeFileSync(codebook, JSON.stringify({
  multi: [
    { name: 'cover', columns: ['HICOV', 'PRIVCOV', 'PUBCOV'], counted: '1', label: 'Health coverage' },
    { name: 'disab', columns: ['DEAR', 'DEYE', 'DREM', 'DPHY'], counted: '1', label: 'Difficulty' },
  ],
}));
const built = new Map<string, Promise<string>>();
function datasetOf(table: OverlapTable): Promise<string> {
  const { weight, ...design } = table.build;
  const key = JSON.stringify(table.build);
  let path = built.get(key);
  if (!path) {
    const out = join(dir, `${built.size}.arrow`);
    const options: BuildOptions = { weights: [weight], survey: 'ACS', out, codebook };
    if (Object.keys(design).length > 0) options.design = design;
    path = buildDataset(join(rFixtures, 'acs-overlap.csv.gz'), options).then(() => out);
    built.set(key, path);
  }
  return path;
}

describe.each(['inline', 'pool'] as const)('multi-response columns, %s', (execution) => {
  describe.each(tables.map((table) => [table.id, table] as const))('R table %s', (_id, table) => {
    let ds: Dataset;
    let result: TableResult;
    beforeAll(async () => {
      ds = await openDataset(await datasetOf(table), { execution });
      result = await ds.table({ base: table.base, rows: table.rows, columns: [{ variable: 'disab' }, { variable: 'cover' }], missing: 'hide' });
      return () => ds.close();
    }, 300_000);

    const check = (what: string, ours: number | undefined, reference: number, where: string) => {
      const error = ledger.add(what, ours, reference);
      if (error > TOLERANCE) expect.fail(`${table.id} ${what} ${where}: ours ${ours}, R ${reference} (relative error ${error})`);
    };

    it('groups each variable\'s values by default, the nets in no group', () => {
      const statistics = tableStatistics(result, { stats: ['sig'] });
      const index = (expr: string) => result.columns.findIndex((column) => column.expr === expr);
      expect(statistics.groups.map((group) => group.columns)).toEqual(table.groups.map((group) => group.map((c) => index(MULTI_OF[table.columns[c]!]!))));
      const nets = result.columns.flatMap((column, c) => (column.net ? [c] : []));
      expect(nets.length).toBe(2);
      for (const net of nets) expect(statistics.columnLetters[net]).toBeNull();
    });

    it('every cell, pair and letter equals R\'s over the dummy columns to 1e-9', () => {
      expectOverlapTable(result, table, (expr) => result.columns.findIndex((column) => column.expr === MULTI_OF[expr]), check);
      const statistics = tableStatistics(result, { stats: 'all' });
      // `all` holds chisq: no Rao-Scott test of overlapping columns, said so.
      expect(statistics.raoScott).toEqual([]);
      expect(statistics.raoScottNotDefined).toEqual([
        { group: 0, reason: 'overlapping-columns' },
        { group: 1, reason: 'overlapping-columns' },
      ]);
      expect(tableToJSON(result, statistics).raoScottNotDefined).toEqual(statistics.raoScottNotDefined);
      expect(tableToText(result, statistics)).toContain('Rao-Scott chi-square: not defined for disab columns A-D, which share respondents');
    });
  });
});

describe('a multi-response row variable against single-coded columns', () => {
  const table = tables.find((t) => t.id === 'acs-design')!;
  let ds: Dataset;
  beforeAll(async () => {
    ds = await openDataset(await datasetOf(table));
    return () => ds.close();
  }, 300_000);

  it('tests its rows as the dummy-expression rows (disjoint columns), and has no Rao-Scott test', async () => {
    const multi = await ds.table({ base: '*', rows: [{ variable: 'cover' }], columns: [{ variable: 'SEX' }], missing: 'hide' });
    const dummies = await ds.table({ base: '*', rows: ['HICOV=1', 'PRIVCOV=1', 'PUBCOV=1'], columns: [{ variable: 'SEX' }], missing: 'hide' });
    const ours = tableStatistics(multi, { stats: 'all' });
    const reference = tableStatistics(dummies, { stats: 'all' });
    const valueRows = multi.rows.flatMap((row, r) => (row.net ? [] : [r]));
    expect(valueRows).toEqual([0, 1, 2]);
    for (const r of valueRows) {
      const of = (list: typeof ours.comparisons) => list!.filter((pair) => pair.row === r).map(({ row: _row, ...pair }) => pair);
      expect(of(ours.comparisons)).toEqual(of(reference.comparisons));
      expect(of(ours.comparisons).length).toBe(1);
      for (const c of [0, 1]) expect(ours.letters![r * 2 + c]).toBe(reference.letters![r * 2 + c]);
    }
    expect(reference.raoScott).toEqual([]);
    expect(ours.raoScott).toEqual([]);
    expect(ours.raoScottNotDefined).toEqual([{ group: 0, reason: 'overlapping-rows', rowVariable: 'cover' }]);
    expect(tableToText(multi, ours)).toContain('Rao-Scott chi-square cover x SEX: not defined, the rows of the multi-response variable cover share respondents');
  });

  it('compares the net in an explicit group, with the covariance, as the dummy columns and their OR', async () => {
    const rows = ['SEX=1', 'SEX=2', 'AGEP=65..'];
    const multi = await ds.table({ base: '*', rows, columns: [{ variable: 'cover' }], columnGroups: [[0, 1, 2, 3]], missing: 'hide' });
    expect(multi.columns[3]!.net).toBe(true);
    const dummies = await ds.table({ base: '*', rows, columns: ['HICOV=1', 'PRIVCOV=1', 'PUBCOV=1', 'HICOV=1 OR PRIVCOV=1 OR PUBCOV=1'], columnGroups: [[0, 1, 2, 3]], missing: 'hide' });
    const ours = tableStatistics(multi, { stats: ['sig'] });
    const reference = tableStatistics(dummies, { stats: ['sig'] });
    expect(ours.comparisons!.length).toBe(3 * 6);
    expect(ours.comparisons!.filter((pair) => pair.columnB === 3).every((pair) => pair.respondentsInBoth! > 0)).toBe(true);
    expect(ours.comparisons).toEqual(reference.comparisons);
    expect(ours.letters).toEqual(reference.letters);
  });

  it('still refuses valid percentages, naming the variable', async () => {
    const multi = await ds.table({ base: '*', rows: [{ variable: 'SEX' }], columns: [{ variable: 'cover' }] });
    expect(() => tableStatistics(multi, { stats: ['vpct'], percentBase: 'valid' })).toThrow(/multi-response variable cover/);
  });
});

describe('crosstab table with a multi-response variable as columns', () => {
  const table = tables.find((t) => t.id === 'acs-simple')!;
  it('--stats all works, with R\'s pairs in its JSON and the Rao-Scott note', async () => {
    requireBuiltCli();
    const path = await datasetOf(table);
    const args = [path, '--base', table.base, ...table.rows.flatMap((row) => ['--row', row]), '--columns', 'disab', '--columns', 'cover', '--missing', 'hide'];
    const json = await runTable([...args, '--stats', 'all', '--format', 'json']);
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout.toString()) as {
      columns: Array<{ expr: string }>;
      comparisons: Array<{ row: number; columnA: number; columnB: number; standardError: number; pValue: number; respondentsInBoth?: number }>;
      raoScottNotDefined?: unknown;
    };
    const columnOf = (expr: string) => parsed.columns.findIndex((column) => column.expr === MULTI_OF[expr]);
    expect(parsed.comparisons.length).toBe(table.comparisons.length);
    for (const pair of table.comparisons) {
      const ours = parsed.comparisons.find((c) => c.row === table.rows.indexOf(pair.row) && c.columnA === columnOf(pair.columnA) && c.columnB === columnOf(pair.columnB))!;
      expect(ours.respondentsInBoth).toBe(pair.respondentsInBoth);
      expect(ledger.add('SE of difference (CLI)', ours.standardError, pair.se)).toBeLessThan(TOLERANCE);
      expect(ledger.add('p (CLI)', ours.pValue, pair.p)).toBeLessThan(TOLERANCE);
    }
    expect(parsed.raoScottNotDefined).toEqual([
      { group: 0, reason: 'overlapping-columns' },
      { group: 1, reason: 'overlapping-columns' },
    ]);
    const text = await runTable([...args, '--stats', 'chisq']);
    expect(text.code).toBe(0);
    expect(text.stdout.toString()).toContain('Rao-Scott chi-square: not defined for cover columns A-C, which share respondents');
  }, 120_000);
});
