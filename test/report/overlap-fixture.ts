// The R fixture of column tests between overlapping columns (test/fixtures/r/overlap.reference.json,
// made by scripts/overlap-fixtures.R), and the comparison of a table's statistics with one of its
// tables: shared by the expression-column and the multi-response-column suites.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { TableResult } from '../../src/index.js';
import { tableStatistics } from '../../src/report/index.js';
import { rFixtures } from '../support/paths.js';

export interface OverlapTable {
  id: string;
  file: 'acs-overlap' | 'nhanes' | 'gss';
  build: { weight: string; strata?: string; psu?: string; nest?: boolean };
  base: string;
  /** `valid`: rows are the values of `rowVariable`, percentages of those who answered it. */
  percentBase: 'total' | 'valid';
  rowVariable: string | null;
  rows: string[];
  columns: string[];
  groups: number[][];
  cells: Array<{ row: string; column: string; proportion: number; se: number; total: number; totalSE: number }>;
  comparisons: Array<{ row: string; columnA: string; columnB: string; respondentsInBoth: number; difference: number; se: number; z: number; p: number; pHolm: number }>;
  letters: Array<{ row: string; column: string; letters: string; lettersHolm: string }>;
}

export const overlapFixture = JSON.parse(readFileSync(join(rFixtures, 'overlap.reference.json'), 'utf8')) as { tables: OverlapTable[] };

/** Checks one figure against R's (records it, fails past the tolerance). */
export type Check = (what: string, ours: number | undefined, reference: number, where: string) => void;

/**
 * Every cell (proportion, total and their SEs), every pair (respondents in both, difference, its
 * SE, z, p, Holm p) and every letter of `result` with `stats: 'all'` against R's `table`;
 * `columnOf` maps a fixture column's expression to the result's column index.
 */
export function expectOverlapTable(result: TableResult, table: OverlapTable, columnOf: (expr: string) => number, check: Check): void {
  const statistics = tableStatistics(result, { stats: 'all' });
  const holm = tableStatistics(result, { stats: ['sig'], correction: 'holm' });
  const width = result.columns.length;
  const rowOf = (expr: string) => result.rows.findIndex((row) => row.expr === expr);
  expect(result.rows.map((row) => row.expr)).toEqual(table.rows);
  for (const cell of table.cells) {
    const at = rowOf(cell.row) * width + columnOf(cell.column);
    const where = `${cell.row} x ${cell.column}`;
    check('proportion', statistics.columnPct![at], cell.proportion, where);
    check('SE of proportion', statistics.columnPctSE![at], cell.se, where);
    check('total', result.weighted[at], cell.total, where);
    check('SE of total', statistics.weightedSE![at], cell.totalSE, where);
  }
  expect(statistics.comparisons!.length).toBe(table.comparisons.length);
  for (const pair of table.comparisons) {
    const find = (list: typeof statistics.comparisons) =>
      list!.find((ours) => ours.row === rowOf(pair.row) && ours.columnA === columnOf(pair.columnA) && ours.columnB === columnOf(pair.columnB));
    const ours = find(statistics.comparisons)!;
    const where = `${pair.row}: ${pair.columnA} - ${pair.columnB}`;
    expect(ours, where).toBeDefined();
    expect(ours.respondentsInBoth, where).toBe(pair.respondentsInBoth);
    check('difference', ours.difference, pair.difference, where);
    check('SE of difference', ours.standardError, pair.se, where);
    check('z', ours.z, pair.z, where);
    check('p', ours.pValue, pair.p, where);
    check('p, Holm', find(holm.comparisons)!.adjustedPValue, pair.pHolm, where);
  }
  for (const cell of table.letters) {
    const at = rowOf(cell.row) * width + columnOf(cell.column);
    expect(statistics.letters![at], `letters ${cell.row} x ${cell.column}`).toBe(cell.letters);
    expect(holm.letters![at], `Holm letters ${cell.row} x ${cell.column}`).toBe(cell.lettersHolm);
  }
}
