// tableStatistics() on ds.table() results against R's survey package, every cell and every
// column comparison of test/fixtures/r/tables.reference.json, to relative 1e-9.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CrosstabError, ErrorCode, openDataset, type Dataset, type TableResult } from '../../src/index.js';
import { STAT_NAMES, columnGroups, tableStatistics } from '../../src/report/index.js';
import { checkRun, figuresFromLibrary, type Run } from './r-check.js';
import { ErrorLedger, datasetKey, fixture } from './support.js';

const ledger = new ErrorLedger();
afterAll(() => console.log(`max relative error vs R, library path (statistic, compared, error):\n${ledger.table()}`));

// The fixture's design is built on the base's rows: domain 'base' (N = base respondents).
const options: Record<Run, Parameters<typeof tableStatistics>[1]> = {
  linearization: { stats: 'all', domain: 'base' },
  bonferroni: { stats: ['sig'], correction: 'bonferroni', domain: 'base' },
  holm: { stats: ['sig'], correction: 'holm', domain: 'base' },
  kish: { stats: ['se', 'moe', 'sig'], se: 'kish', domain: 'base' },
  population: { stats: ['deff'], deff: 'population', domain: 'base' },
};

describe.each(fixture.tables.map((table) => [table.id, table] as const))('R table %s through the library', (_id, table) => {
  let ds: Dataset;
  let result: TableResult;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets')[datasetKey(table)]);
    result = await ds.table({
      base: table.base,
      rows: table.rows.map((row) => row.id),
      columns: table.columnVariables.map(({ variable }) => ({ variable })),
      weight: table.weight,
    });
    return () => ds.close();
  });

  it.each(Object.keys(options) as Run[])('%s figures equal R to 1e-9', (run) => {
    const statistics = tableStatistics(result, options[run]);
    expect(statistics.designRespondents).toBe(table.designRespondents);
    checkRun(table, figuresFromLibrary(result, statistics), run, ledger, 'library');
  });

  it('by default treats the base as a domain of the whole file: R subset(design, base), to 1e-9', () => {
    const statistics = tableStatistics(result, { stats: ['se'] });
    expect(statistics.domain).toBe('file');
    expect(statistics.designRespondents).toBe(table.fileRespondents);
    const width = result.columns.length;
    for (const cell of table.cells) {
      const r = result.rows.findIndex((row) => row.expr === cell.row);
      const c = result.columns.findIndex((column) => column.variable === cell.columnVariable && column.value === String(cell.column));
      const error = ledger.add('SE, whole-file domain', statistics.columnPctSE![r * width + c]!, cell.seFullFileDesign);
      expect(error, `${table.id} ${cell.row} ${cell.columnVariable}=${cell.column}`).toBeLessThan(1e-9);
    }
  });
});

describe('tableStatistics options and groups', () => {
  let ds: Dataset;
  let result: TableResult;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').gss);
    result = await ds.table({ base: 'year=2024', rows: [{ variable: 'degree' }], columns: [{ variable: 'sex' }, 'degree=3..4', { variable: 'race' }, { variable: 'race' }], missing: 'hide' });
    return () => ds.close();
  });

  it('groups each run of an expanded variable; stand-alone expressions are never compared', () => {
    const groups = columnGroups(result.columns);
    expect(groups.map((g) => [g.variable, g.columns, g.letters])).toEqual([
      ['sex', [0, 1], ['A', 'B']],
      ['race', [3, 4, 5], ['A', 'B', 'C']],
      ['race', [6, 7, 8], ['A', 'B', 'C']],
    ]);
    const statistics = tableStatistics(result, { stats: ['sig'] });
    expect(statistics.columnLetters).toEqual(['A', 'B', null, 'A', 'B', 'C', 'A', 'B', 'C']);
    expect(statistics.comparisons!.every((pair) => pair.columnA !== 2 && pair.columnB !== 2)).toBe(true);
    expect(statistics.comparisons!.length).toBe(result.rows.length * (1 + 3 + 3));
    // The repeated race group gives the same letters as the first.
    for (let r = 0; r < result.rows.length; r++) {
      const at = (c: number) => statistics.letters![r * result.columns.length + c];
      expect([at(6), at(7), at(8)]).toEqual([at(3), at(4), at(5)]);
      expect(at(2)).toBe('');
    }
  });

  it('explicit column groups override the default', async () => {
    // sex=2 and degree=3..4 share respondents: the groups go to ds.table(), which counts them.
    const grouped = await ds.table({ base: 'year=2024', rows: [{ variable: 'degree' }], columns: [{ variable: 'sex' }, 'degree=3..4', { variable: 'race' }, { variable: 'race' }], missing: 'hide', columnGroups: [[1, 2]] });
    const statistics = tableStatistics(grouped, { stats: ['sig'] });
    expect(statistics.columnLetters).toEqual([null, 'A', 'B', null, null, null, null, null, null]);
    expect(statistics.comparisons!.length).toBe(result.rows.length);
    const bad = (columnGroups: number[][]) => {
      try {
        tableStatistics(result, { columnGroups });
      } catch (error) {
        return error as CrosstabError;
      }
      throw new Error('expected an error');
    };
    expect(bad([[0, 99]]).details.field).toBe('columnGroups');
    expect(bad([[0, 1], [1, 2]]).message).toMatch(/already in another group/);
  });

  it('computes only the requested statistics', () => {
    const statistics = tableStatistics(result, { stats: ['index', 'moe'] });
    expect(statistics.stats).toEqual(['index', 'moe']);
    expect(statistics.index).toBeInstanceOf(Float64Array);
    expect(statistics.columnPctMoE).toBeInstanceOf(Float64Array);
    expect(statistics.columnPct).toBeUndefined();
    expect(statistics.columnPctSE).toBeUndefined();
    expect(statistics.letters).toBeUndefined();
    expect(tableStatistics(result).stats).toEqual([...STAT_NAMES]);
  });

  it('rejects bad options naming them', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ stats: ['vpct', 'pct'] }, 'options.stats'],
      [{ stats: 'some' }, 'options.stats'],
      [{ se: 'bootstrap' }, 'options.se'],
      [{ correction: 'fdr' }, 'options.correction'],
      [{ alpha: 1.5 }, 'options.alpha'],
      [{ test: 'chisq' }, 'options.test'],
      [{ deff: 'kish' }, 'options.deff'],
    ];
    for (const [bad, field] of cases) {
      let caught: unknown;
      try {
        tableStatistics(result, bad as never);
      } catch (error) {
        caught = error;
      }
      expect(caught, JSON.stringify(bad)).toBeInstanceOf(CrosstabError);
      expect((caught as CrosstabError).code).toBe(ErrorCode.invalidOption);
      expect((caught as CrosstabError).details.field).toBe(field);
      expect((caught as CrosstabError).message).toContain(field);
    }
  });

  it('gives NaN, not errors, for an empty base', async () => {
    const empty = await ds.table({ base: 'year=2024 AND year=2000', rows: ['sex=1'], columns: [{ variable: 'race' }] });
    const statistics = tableStatistics(empty);
    expect(Number.isNaN(statistics.columnPct![0]!)).toBe(true);
    expect(Number.isNaN(statistics.columnPctSE![0]!)).toBe(true);
    expect(statistics.letters!.every((text) => text === '')).toBe(true);
    expect(statistics.comparisons!.every((pair) => !pair.significant && Number.isNaN(pair.z))).toBe(true);
  });
});
