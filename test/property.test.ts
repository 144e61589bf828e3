// Random small datasets and random expressions: the engine against the naive reference.
import fc from 'fast-check';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../src/facade/dataset.js';
import type { Expr } from '../src/query/ast.js';
import { datasetArb, exprArb, present } from './support/random-data.js';
import { toText } from './support/expression-text.js';
import { makeDataset } from './support/make-dataset.js';
import { largeData, largeReference } from './support/large-dataset.js';
import { referenceCell, referenceTable, type ReferenceTable } from './support/reference-engine.js';

describe('engine vs reference on random data', () => {
  it('every cell matches: respondents exactly, sums to 1e-9', async () => {
    await fc.assert(
      fc.asyncProperty(
        datasetArb.chain((data) => {
          const columns = { num1: data.num1, num2: data.num2, txt: data.txt };
          return fc.tuple(fc.constant(data), exprArb(columns), fc.array(exprArb(columns), { minLength: 1, maxLength: 4 }));
        }),
        async ([data, base, targets]) => {
          const columns = { num1: data.num1, num2: data.num2, txt: data.txt };
          const table: ReferenceTable = { columns, weights: data.weights, numeric: new Set(['num1', 'num2']) };
          const ds = await makeDataset(columns, data.weights);
          try {
            const result = await ds.crosstab({ base: toText(base), targets: targets.map(toText) });
            const cells = [referenceCell(table, base, { all: true }), ...targets.map((t) => referenceCell(table, base, t))];
            [result.base, ...result.targets].forEach((cell, i) => {
              const expected = cells[i]!;
              expect(cell.respondents).toBe(expected.respondents);
              expect(cell.weighted).toBeCloseTo(expected.weighted, 6);
              expect(Math.abs(cell.weighted - expected.weighted)).toBeLessThanOrEqual(1e-9 * Math.max(1, expected.weighted));
              expect(Math.abs(cell.sumSqWeights - expected.sumSqWeights)).toBeLessThanOrEqual(1e-9 * Math.max(1, expected.sumSqWeights));
            });
          } finally {
            ds.close();
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe.each(['inline', 'pool'] as const)('%s: tables vs reference on random data', (execution) => {
  it('every cell and margin matches, on both plans', async () => {
    const plans = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        datasetArb.chain((data) => {
          const columns = { num1: data.num1, num2: data.num2, txt: data.txt };
          // Either free expressions (bitset plan) or distinct single values of one variable (group-by plan).
          const valueAxes = Object.entries(columns)
            .filter(([, values]) => present(values).length > 0)
            .map(([name, values]) => fc.shuffledSubarray(present(values), { minLength: 1 }).map((list) => list.map((value) => ({ var: name, in: [value] }) as Expr)));
          const allValues = Object.entries(columns).flatMap(([name, values]) => present(values).map((value) => ({ var: name, in: [value] }) as Expr));
          const mixedValues = fc.shuffledSubarray(allValues, { minLength: 1 });
          const axis = fc.oneof(fc.array(exprArb(columns), { minLength: 1, maxLength: 5 }), mixedValues, ...valueAxes);
          return fc.tuple(fc.constant(data), exprArb(columns), axis, axis);
        }),
        async ([data, base, rows, columns]) => {
          const table: ReferenceTable = { columns: { num1: data.num1, num2: data.num2, txt: data.txt }, weights: data.weights, numeric: new Set(['num1', 'num2']) };
          const ds = await makeDataset(table.columns, data.weights, undefined, { execution });
          try {
            const result = await ds.table({ base: toText(base), rows: rows.map(toText), columns: columns.map(toText) });
            expect(result.execution).toBe(execution);
            plans.add(result.plan);
            rows.forEach((row, r) => {
              const rowTotal = referenceCell(table, { and: [base, row] }, { all: true });
              expect(result.rowTotals[r]!.respondents).toBe(rowTotal.respondents);
              columns.forEach((column, c) => {
                const expected = referenceCell(table, { and: [base, row] }, column);
                const cell = result.cell(r, c);
                expect(cell.respondents).toBe(expected.respondents);
                expect(Math.abs(cell.weighted - expected.weighted)).toBeLessThanOrEqual(1e-9 * Math.max(1, expected.weighted));
                expect(Math.abs(cell.sumSqWeights - expected.sumSqWeights)).toBeLessThanOrEqual(1e-9 * Math.max(1, expected.sumSqWeights));
              });
            });
            columns.forEach((column, c) => expect(result.columnTotals[c]!.respondents).toBe(referenceCell(table, base, column).respondents));
          } finally {
            ds.close();
          }
        },
      ),
      { numRuns: 80 },
    );
    expect([...plans].sort()).toEqual(['bitsets', 'groupBy']);
  });
});

// Random expressions over the generated 300,001-respondent dataset (three kernel chunks): the
// bitset plan's tiles, inline and pooled, against one pass of plain f64 sums.
describe.each(['inline', 'pool'] as const)('%s: random tables on the 300,001-respondent generated dataset', (execution) => {
  let ds: Dataset;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').large, { execution });
    return () => ds.close();
  });

  it('every cell and margin matches plain-JS sums', async () => {
    const data = largeData();
    // Values the expressions pick from (value lists stay under the parser's 100 terms).
    const values = {
      big: ['0', '1', '100', '3500', '6999'],
      mid: present(data.columns.mid).slice(0, 12),
      cat: present(data.columns.cat),
      rare: present(data.columns.rare),
      zip: present(data.columns.zip).slice(0, 8),
    };
    const expr = exprArb(values, new Set(['big', 'mid', 'rare']));
    await fc.assert(
      fc.asyncProperty(expr, fc.array(expr, { minLength: 1, maxLength: 4 }), fc.array(expr, { minLength: 1, maxLength: 4 }), fc.constantFrom('w', 'w2'), async (base, rows, columns, weight) => {
        const result = await ds.table({ base: toText(base), rows: rows.map(toText), columns: columns.map(toText), weight });
        expect(result.execution).toBe(execution);
        const expected = referenceTable(largeReference(weight as 'w' | 'w2'), base, rows, columns);
        const close = (actual: { respondents: number; weighted: number; sumSqWeights: number }, want: typeof expected.total) => {
          expect(actual.respondents).toBe(want.respondents);
          expect(Math.abs(actual.weighted - want.weighted)).toBeLessThanOrEqual(1e-9 * Math.max(1, want.weighted));
          expect(Math.abs(actual.sumSqWeights - want.sumSqWeights)).toBeLessThanOrEqual(1e-9 * Math.max(1, want.sumSqWeights));
        };
        rows.forEach((_, r) => {
          close(result.rowTotals[r]!, expected.rowTotals[r]!);
          columns.forEach((_, c) => close(result.cell(r, c), expected.cells[r * columns.length + c]!));
        });
        columns.forEach((_, c) => close(result.columnTotals[c]!, expected.columnTotals[c]!));
        close(result.total, expected.total);
      }),
      { numRuns: 40 },
    );
  });
});
