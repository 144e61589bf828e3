// ds.table(): every plan against the reference engine and against R's per-cell figures.
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { CrosstabError, ErrorCode, openDataset, type Dataset } from '../src/index.js';
import type { Expr } from '../src/query/ast.js';
import { datasetKey, fixture, relativeError } from './report/support.js';
import { largeData, largeReference } from './support/large-dataset.js';
import { referenceTable, type ReferenceTriple } from './support/reference-engine.js';

const paths = ['inline', 'pool'] as const;
const cases = paths.flatMap((execution) => fixture.tables.map((t) => [execution, t.id, t] as const));

describe.each(cases)('%s: R table %s', (execution, _id, table) => {
  let ds: Dataset;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets')[datasetKey(table)], { execution });
    return () => ds.close();
  });

  it('every cell and column total equals R to 1e-9', async () => {
    const columnVariables = [...new Set(table.cells.map((c) => c.columnVariable))];
    const result = await ds.table({ base: table.base, rows: table.rows.map((row) => row.id), columns: columnVariables.map((variable) => ({ variable })), weight: table.weight });
    expect(result.execution).toBe(execution);
    for (const expected of table.cells) {
      const r = table.rows.findIndex((row) => row.id === expected.row);
      const c = result.columns.findIndex((column) => column.variable === expected.columnVariable && Number(column.value) === expected.column);
      expect(r).toBeGreaterThanOrEqual(0);
      expect(c).toBeGreaterThanOrEqual(0);
      const cell = result.cell(r, c);
      expect(cell.respondents).toBe(expected.cell.respondents);
      expect(relativeError(cell.weighted, expected.cell.weighted)).toBeLessThan(1e-9);
      expect(relativeError(cell.sumSqWeights, expected.cell.sumSqWeights)).toBeLessThan(1e-9);
      const total = result.columnTotals[c]!;
      expect(total.respondents).toBe(expected.columnTotal.respondents);
      expect(relativeError(total.weighted, expected.columnTotal.weighted)).toBeLessThan(1e-9);
    }
  });
});

describe.each(paths)('%s: table plans agree with crosstab()', (execution) => {
  let ds: Dataset;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').gss, { execution });
    return () => ds.close();
  });

  it('single-coded x single-coded runs as one group-by pass and matches per-cell crosstabs', async () => {
    const result = await ds.table({ base: 'year=2000..', rows: [{ variable: 'degree' }], columns: [{ variable: 'relig' }] });
    expect(result.plan).toBe('groupBy');
    expect(result.execution).toBe(execution);
    for (let r = 0; r < result.rows.length; r++) {
      const single = await ds.crosstab({ base: `year=2000.. AND ${result.rows[r]!.expr}`, targets: result.columns.map((c) => c.expr) });
      single.targets.forEach((cell, c) => {
        expect(result.cell(r, c).respondents).toBe(cell.respondents);
        expect(relativeError(result.cell(r, c).weighted, cell.weighted)).toBeLessThan(1e-12);
      });
    }
  });

  it('values of several variables on both axes run as one multi-variable group-by pass', async () => {
    const axis = [{ variable: 'degree' }, { variable: 'sex' }, { variable: 'race' }, 'relig=4'];
    const result = await ds.table({ base: 'year=2000..', rows: axis, columns: axis });
    expect(result.plan).toBe('groupBy');
    for (let r = 0; r < result.rows.length; r++) {
      const check = await ds.crosstab({ base: `year=2000.. AND ${result.rows[r]!.expr}`, targets: result.columns.map((c) => c.expr) });
      check.targets.forEach((cell, c) => {
        expect(result.cell(r, c).respondents).toBe(cell.respondents);
        expect(relativeError(result.cell(r, c).weighted, cell.weighted)).toBeLessThan(1e-12);
      });
      expect(result.rowTotals[r]!.respondents).toBe(check.base.respondents);
    }
  });

  it('overlapping codes run as bitset rows; margins are base AND row / column', async () => {
    const rows = ['degree=3..4', 'padeg=3..4', 'BA+', 'NOT sex=NA', 'age=..29 OR age=65..'];
    const columns = [{ variable: 'sex' }, 'polviews=1..3', '*', 'relig=9'];
    const result = await ds.table({ base: 'year=2010..', rows, columns });
    expect(result.plan).toBe('bitsets');
    expect(result.execution).toBe(execution);
    for (let r = 0; r < rows.length; r++) {
      const check = await ds.crosstab({ base: `year=2010.. AND (${rows[r]})`, targets: result.columns.map((c) => c.expr) });
      check.targets.forEach((cell, c) => {
        expect(result.cell(r, c).respondents).toBe(cell.respondents);
        expect(relativeError(result.cell(r, c).weighted, cell.weighted)).toBeLessThan(1e-12);
      });
      expect(result.rowTotals[r]!.respondents).toBe(check.base.respondents);
    }
    const columnCheck = await ds.crosstab({ base: 'year=2010..', targets: result.columns.map((c) => c.expr) });
    columnCheck.targets.forEach((cell, c) => expect(result.columnTotals[c]!.respondents).toBe(cell.respondents));
    expect(result.total.respondents).toBe(columnCheck.base.respondents);
    expect(result.rows[2]!.label).toBe("Bachelor's or higher");
    expect(result.columns[0]!.label).toBe('Male');
  });

  it('reports progress and can be cancelled', async () => {
    const progress: number[] = [];
    const rows = Array.from({ length: 72 }, (_, i) => `age=${18 + i}`);
    await ds.table({ base: '*', rows, columns: ['sex=1', 'sex=2 OR race=2'], onProgress: (done) => progress.push(done) });
    expect(progress.at(-1)).toBe(144);
    const controller = new AbortController();
    controller.abort();
    const error = await ds.table({ base: '*', rows, columns: ['sex=1'], signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrosstabError);
    expect((error as CrosstabError).code).toBe(ErrorCode.cancelled);
  });

  it('rejects bad axes naming them', async () => {
    const bad = await ds.table({ base: '*', rows: [{ variable: 'sexx' }], columns: ['*'] }).catch((e: unknown) => e);
    expect((bad as CrosstabError).code).toBe(ErrorCode.unknownVariable);
    expect((bad as CrosstabError).details.field).toBe('rows[0]');
    const empty = await ds.table({ base: '*', rows: [], columns: ['*'] }).catch((e: unknown) => e);
    expect((empty as CrosstabError).details.field).toBe('rows');
  });
});

// The generated 300,001-respondent dataset (test/support/large-dataset.ts) spans three chunks of
// the kernel's tile loop: every plan, on both paths, against one pass of plain f64 sums in JS.
describe.each(paths)('%s: tables of the 300,001-respondent generated dataset vs plain-JS sums', (execution) => {
  let ds: Dataset;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').large, { execution });
    return () => ds.close();
  });

  /** An axis entry as a reference-engine expression, read from the data's own values, not the engine's text. */
  function entryExpr(entry: { variable?: string; value?: string }, given: Expr | undefined): Expr {
    if (given) return given;
    return { var: entry.variable!, in: [entry.value!] };
  }

  function expectTable(result: Awaited<ReturnType<Dataset['table']>>, weight: 'w' | 'w2', base: Expr, rows: Array<Expr | undefined>, columns: Array<Expr | undefined>) {
    const expected = referenceTable(largeReference(weight), base, result.rows.map((row, r) => entryExpr(row, rows[r])), result.columns.map((column, c) => entryExpr(column, columns[c])));
    const close = (actual: { respondents: number; weighted: number; sumSqWeights: number }, want: ReferenceTriple) => {
      expect(actual.respondents).toBe(want.respondents);
      expect(Math.abs(actual.weighted - want.weighted)).toBeLessThanOrEqual(1e-9 * Math.max(1, want.weighted));
      expect(Math.abs(actual.sumSqWeights - want.sumSqWeights)).toBeLessThanOrEqual(1e-9 * Math.max(1, want.sumSqWeights));
    };
    expect(result.execution).toBe(execution);
    for (let r = 0; r < result.rows.length; r++) {
      close(result.rowTotals[r]!, expected.rowTotals[r]!);
      for (let c = 0; c < result.columns.length; c++) close(result.cell(r, c), expected.cells[r * result.columns.length + c]!);
    }
    result.columnTotals.forEach((total, c) => close(total, expected.columnTotals[c]!));
    close(result.total, expected.total);
  }

  function distinct(values: string[]): string[] {
    return [...new Set(values.filter((v) => v !== ''))].sort();
  }

  it('one variable by another (group-by plan), both weights', async () => {
    for (const weight of ['w', 'w2'] as const) {
      const result = await ds.table({ base: 'big=..5000', rows: [{ variable: 'cat' }], columns: [{ variable: 'zip' }], weight });
      expect(result.plan).toBe('groupBy');
      expect(result.rows.map((row) => row.value).sort()).toEqual(distinct(largeData().columns.cat));
      expect(result.columns).toHaveLength(distinct(largeData().columns.zip).length);
      expectTable(result, weight, { var: 'big', max: '5000' }, [], []);
    }
  });

  it('values of several variables on both axes (multi-variable group-by plan)', async () => {
    const result = await ds.table({ base: '*', rows: [{ variable: 'cat' }, { variable: 'rare' }], columns: [{ variable: 'rare' }, { variable: 'cat' }], weight: 'w2' });
    expect(result.plan).toBe('groupBy');
    expectTable(result, 'w2', { all: true }, [], []);
  });

  it('overlapping expressions (bitset tiles over several chunks), more rows than one tile', async () => {
    const rowTexts: string[] = [];
    const rowExprs: Expr[] = [];
    for (let i = 0; i < 20; i++) {
      rowTexts.push(`mid=${i * 15}..${i * 15 + 40}`);
      rowExprs.push({ var: 'mid', min: String(i * 15), max: String(i * 15 + 40) });
    }
    rowTexts.push('big=NA OR rare=1,3');
    rowExprs.push({ or: [{ var: 'big', missing: true }, { var: 'rare', in: ['1', '3'] }] });
    const columnTexts = ['cat=A,B', 'cat=B,C', 'NOT zip=00001', '*', 'big=6000..', 'rare=2'];
    const columnExprs: Expr[] = [
      { var: 'cat', in: ['A', 'B'] },
      { var: 'cat', in: ['B', 'C'] },
      { not: { var: 'zip', in: ['00001'] } },
      { all: true },
      { var: 'big', min: '6000' },
      { var: 'rare', in: ['2'] },
    ];
    for (const weight of ['w', 'w2'] as const) {
      const result = await ds.table({ base: 'NOT cat=E', rows: rowTexts, columns: columnTexts, weight });
      expect(result.plan).toBe('bitsets');
      expectTable(result, weight, { not: { var: 'cat', in: ['E'] } }, rowExprs, columnExprs);
    }
  });

  it('rare rows (entries) and common rows (bitsets) in one table of more rows than one tile, range columns built on the executor', async () => {
    const rowTexts: string[] = [];
    const rowExprs: Expr[] = [];
    for (let i = 0; i < 70; i++) {
      // One value of mid is 1 respondent in 300: a row of entries; 41 values are a dense row.
      const hi = i % 3 === 0 ? i + 40 : i;
      rowTexts.push(`mid=${i}..${hi}`);
      rowExprs.push({ var: 'mid', min: String(i), max: String(hi) });
    }
    rowTexts.push('big=100..140');
    rowExprs.push({ var: 'big', min: '100', max: '140' });
    const columnTexts = ['mid=100..200', 'mid=7', 'big=..3000', 'cat=A,B', 'NOT zip=00001', '*', 'rare=2'];
    const columnExprs: Expr[] = [
      { var: 'mid', min: '100', max: '200' },
      { var: 'mid', in: ['7'] },
      { var: 'big', max: '3000' },
      { var: 'cat', in: ['A', 'B'] },
      { not: { var: 'zip', in: ['00001'] } },
      { all: true },
      { var: 'rare', in: ['2'] },
    ];
    for (const weight of ['w', 'w2'] as const) {
      const result = await ds.table({ base: 'NOT cat=E', rows: rowTexts, columns: columnTexts, weight });
      expect(result.plan).toBe('bitsets');
      expectTable(result, weight, { not: { var: 'cat', in: ['E'] } }, rowExprs, columnExprs);
    }
  });
});

describe('the worker pool', () => {
  it('a worker that dies mid-task fails that query clearly, is replaced, and the next query succeeds', async () => {
    const { useFaultPool, failNextPoolTask, closeFaultPool } = await import('./support/pool-faults.js');
    await useFaultPool();
    const ds = await openDataset(inject('testDatasets').gss, { execution: 'pool' });
    try {
      const query = { base: '*', rows: ['sex=1', 'sex=2'], columns: ['degree=3..4', 'race=2 OR race=3'] };
      const expected = await ds.table(query);
      failNextPoolTask();
      const error = await ds.table(query).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CrosstabError);
      expect((error as CrosstabError).code).toBe(ErrorCode.workerFailed);
      expect((error as CrosstabError).message).toMatch(/worker thread failed/);
      const again = await ds.table(query);
      expect(Array.from(again.weighted)).toEqual(Array.from(expected.weighted));
    } finally {
      ds.close();
      await closeFaultPool();
    }
  });

  it('an aborted pooled table rejects with cancelled and frees its workers', async () => {
    const ds = await openDataset(inject('testDatasets').gss, { execution: 'pool' });
    try {
      const rows = Array.from({ length: 300 }, (_, i) => `age=${18 + (i % 70)} OR year=${1972 + (i % 50)}..2024`);
      const controller = new AbortController();
      const pending = ds.table({ base: '*', rows, columns: rows.slice(0, 200), signal: controller.signal });
      setTimeout(() => controller.abort(), 5);
      const error = await pending.catch((e: unknown) => e);
      expect((error as CrosstabError).code).toBe(ErrorCode.cancelled);
      const after = await ds.table({ base: '*', rows: ['sex=1'], columns: ['sex=1'] });
      expect(after.cell(0, 0).respondents).toBe(ds.info.variables.find((v) => v.name === 'sex')!.values![0]!.respondents);
    } finally {
      ds.close();
    }
  });
});
