// The group-by plan gives the same sums to the last bit inline (one thread) and on the pool
// (the table cut into tasks): with fractional weights the base is cut into the same parts
// on both, and every cell of a part is summed by one task in respondent order. Checked with
// fractional weights, where adding the same weights in another order can change the last
// bit, and against the reference to 1e-9; with whole-number weights (any order, exact sums)
// against the reference exactly.
import fc from 'fast-check';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../src/facade/dataset.js';
import type { TableResult } from '../src/facade/types.js';
import type { Expr } from '../src/query/ast.js';
import { exactSums } from '../src/kernel/kernel.js';
import { toText } from './support/expression-text.js';
import { largeData, largeReference } from './support/large-dataset.js';
import { makeDataset } from './support/make-dataset.js';
import { datasetArb, exprArb, present } from './support/random-data.js';
import { referenceTable } from './support/reference-engine.js';

type Sums = { respondents: number; weighted: number; sumSqWeights: number };

/** Every cell and margin of two tables equal to the last bit. */
function expectSameBits(a: TableResult, b: TableResult): void {
  expect(a.plan).toBe('groupBy');
  expect(b.plan).toBe('groupBy');
  expect([...a.weighted]).toEqual([...b.weighted]);
  expect([...a.sumSqWeights]).toEqual([...b.sumSqWeights]);
  expect([...a.respondents]).toEqual([...b.respondents]);
  const margins = (t: TableResult) => [...t.rowTotals, ...t.columnTotals, t.total].map(({ respondents, weighted, sumSqWeights }: Sums) => [respondents, weighted, sumSqWeights]);
  expect(margins(a)).toEqual(margins(b));
}

function expectClose(actual: Sums, want: Sums): void {
  expect(actual.respondents).toBe(want.respondents);
  expect(Math.abs(actual.weighted - want.weighted)).toBeLessThanOrEqual(1e-9 * Math.max(1, want.weighted));
  expect(Math.abs(actual.sumSqWeights - want.sumSqWeights)).toBeLessThanOrEqual(1e-9 * Math.max(1, want.sumSqWeights));
}

const values = (variable: string, list: string[]): Expr[] => list.map((value) => ({ var: variable, in: [value] }) as Expr);

describe('group-by tables on the 300,001-respondent generated dataset, fractional weights', () => {
  let inline: Dataset;
  let pool: Dataset;
  beforeAll(async () => {
    inline = await openDataset(inject('testDatasets').large, { execution: 'inline' });
    pool = await openDataset(inject('testDatasets').large, { execution: 'pool' });
    return async () => {
      await inline.close();
      await pool.close();
    };
  });

  /**
   * Random bases and axes (odd shapes: one value, a shuffled subset, every value; rows and
   * columns of one variable or two) of the `axes` variables under `weight`: inline and pool
   * agree to the last bit, and every margin and cell of the pool's table passes `compare`
   * against the reference.
   */
  async function agreeWithReference(weight: 'w' | 'w2', axes: Array<'mid' | 'cat' | 'zip' | 'rare'>, compare: (actual: Sums, want: Sums) => void, numRuns: number): Promise<void> {
    const data = largeData();
    const axisValues = Object.fromEntries(axes.map((name) => [name, present(data.columns[name])]));
    const base = exprArb({ big: ['0', '100', '3500'], cat: present(data.columns.cat), rare: present(data.columns.rare) }, new Set(['big', 'rare']));
    const axis = fc.constantFrom(...axes).chain((variable) => fc.shuffledSubarray(axisValues[variable]!, { minLength: 1 }).map((list) => values(variable, list)));
    await fc.assert(
      fc.asyncProperty(base, axis, axis, async (baseExpr, rows, columns) => {
        const query = { base: toText(baseExpr), rows: rows.map(toText), columns: columns.map(toText), weight };
        const one = await inline.table(query);
        const split = await pool.table(query);
        expect([one.execution, split.execution]).toEqual(['inline', 'pool']);
        expectSameBits(one, split);
        const expected = referenceTable(largeReference(weight), baseExpr, rows, columns);
        rows.forEach((_, r) => {
          compare(split.rowTotals[r]!, expected.rowTotals[r]!);
          columns.forEach((_, c) => compare(split.cell(r, c), expected.cells[r * columns.length + c]!));
        });
        columns.forEach((_, c) => compare(split.columnTotals[c]!, expected.columnTotals[c]!));
      }),
      { numRuns },
    );
  }

  it('inline and pool agree to the last bit, and both match the reference', async () => {
    await agreeWithReference('w2', ['mid', 'cat', 'zip', 'rare'], expectClose, 25);
  });

  it('whole-number weights: the pool splits the respondents, and every figure is exact', async () => {
    // Weights `w` are whole numbers, so the pool's tasks take word ranges into grids of
    // their own (added after); sums of whole numbers are exact, so both paths and the
    // reference agree exactly, not to rounding.
    const exact = ({ respondents, weighted, sumSqWeights }: Sums) => [respondents, weighted, sumSqWeights];
    await agreeWithReference('w', ['mid', 'cat', 'zip'], (actual, want) => expect(exact(actual)).toEqual(exact(want)), 15);
  });

  it('an empty base gives zero cells on both paths', async () => {
    const query = { base: 'rare=1 AND rare=2', rows: values('mid', ['1', '2']).map(toText), columns: values('cat', ['A', 'B']).map(toText), weight: 'w2' };
    const one = await inline.table(query);
    const split = await pool.table(query);
    expectSameBits(one, split);
    expect([...split.respondents, ...split.weighted]).toEqual(new Array(8).fill(0));
  });
});

describe('group-by tables on random small data (one respondent and up, blanks, values absent from the base)', () => {
  it('inline and pool agree to the last bit', async () => {
    await fc.assert(
      fc.asyncProperty(
        datasetArb.chain((data) => {
          const columns = { num1: data.num1, num2: data.num2, txt: data.txt };
          const axes = Object.entries(columns)
            .filter(([, list]) => present(list).length > 0)
            .map(([name, list]) => fc.shuffledSubarray(present(list), { minLength: 1 }).map((picked) => values(name, picked)));
          const axis = fc.oneof(...axes);
          return fc.tuple(fc.constant(data), exprArb(columns), axis, axis);
        }),
        async ([data, base, rows, columns]) => {
          const table = { num1: data.num1, num2: data.num2, txt: data.txt };
          const one = await makeDataset(table, data.weights, undefined, { execution: 'inline' });
          const split = await makeDataset(table, data.weights, undefined, { execution: 'pool' });
          try {
            const query = { base: toText(base), rows: rows.map(toText), columns: columns.map(toText) };
            expectSameBits(await one.table(query), await split.table(query));
          } finally {
            await one.close();
            await split.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('exactSums: when the order of adding weights cannot change a bit', () => {
  it('holds for whole numbers whose sums stay within 2^53, and nowhere else', () => {
    const check = (values: number[], respondents = values.length) => exactSums(Float64Array.from(values), respondents);
    expect(check([1, 2, 2300, 0])).toBe(true);
    expect(check([-3, 4, 1e6])).toBe(true);
    expect(check([1, 2.5])).toBe(false);
    expect(check([1, Number.NaN])).toBe(false);
    expect(check([1, Number.POSITIVE_INFINITY])).toBe(false);
    // Squares past 2^53: 1e8² = 1e16 > 2^53 ≈ 9.007e15, though each weight is whole.
    expect(check([1e8, 1])).toBe(false);
    // Squares summed: 2^52 + 2^52 = 2^53 is past MAX_SAFE_INTEGER (2^53 - 1); 2^52 + 2^50 is not.
    expect(check([2 ** 26, -(2 ** 26)])).toBe(false);
    expect(check([2 ** 26, -(2 ** 25)])).toBe(true);
    // Only the first `respondents` weights count (the vector is padded past them).
    expect(check([3, 0.5], 1)).toBe(true);
  });
});
