/**
 * What a table's percentages are of. `total`: every base respondent of the cell's column
 * (vertical %), row (horizontal %) or of the base (table %). `valid`: only those who
 * answered the variable of the other axis, as SPSS's and Crunch's valid percentages: the
 * value entries of one expanded variable are its answered categories, so the valid base of
 * a cell is the sum of the cells of its variable's values (base AND answered AND the other
 * entry). An expression entry (`--row 'degree=3,4'`) has no variable whose answers could be
 * counted: its bases stay the totals. A "No answer" entry lies outside every valid base of
 * its own variable: its figures on that axis are undefined (NaN).
 */
import type { AxisEntry, PercentBase, TableResult } from '../facade/types.js';
import type { Slot } from '../stats/table-variance.js';
import type { CellSums } from '../stats/types.js';
import { columnGroups } from './column-groups.js';

/** A denominator: its sums, and where it sits in the table for design variances. */
export interface PercentDenominator {
  sums: CellSums;
  slot: Slot;
}

export interface PercentBases {
  percentBase: PercentBase;
  /** Denominator of the vertical % of cell (row, column) and of its SE, tests, ebase, deff; null: undefined. */
  column(row: number, column: number): PercentDenominator | null;
  /** Denominator of the horizontal % of cell (row, column). */
  row(row: number, column: number): CellSums | null;
  /** Denominator of the table % of cell (row, column). */
  table(row: number, column: number): CellSums | null;
  /** What the row's Total-column share (and the index's average) is of. */
  rowShare(row: number): CellSums | null;
}

const ZERO: CellSums = { weighted: 0, respondents: 0, sumSqWeights: 0 };

/** The percent bases of `result`. */
export function percentBases(result: TableResult, percentBase: PercentBase): PercentBases {
  const width = result.columns.length;
  if (percentBase === 'total') {
    return {
      percentBase,
      column: (_, column) => ({ sums: result.columnTotals[column]!, slot: { column } }),
      row: (row) => result.rowTotals[row]!,
      table: () => result.total,
      rowShare: () => result.total,
    };
  }
  const rowRuns = runsOf(result.rows);
  const columnRuns = runsOf(result.columns);
  const cellAt = (row: number, column: number): CellSums => {
    const at = row * width + column;
    return { weighted: result.weighted[at]!, respondents: result.respondents[at]!, sumSqWeights: result.sumSqWeights[at]! };
  };
  // Per row run and column: the run's cells in that column, summed once.
  const columnSums = new Map<readonly number[], Array<PercentDenominator>>();
  const columnBase = (run: readonly number[], column: number): PercentDenominator => {
    let sums = columnSums.get(run);
    if (!sums) {
      sums = result.columns.map((_, c) => ({ sums: add(run.map((r) => cellAt(r, c))), slot: { cells: run.map((r) => r * width + c) } }));
      columnSums.set(run, sums);
    }
    return sums[column]!;
  };
  return {
    percentBase,
    column(row, column) {
      const run = rowRuns[row];
      if (run === null) return null;
      return run === undefined ? { sums: result.columnTotals[column]!, slot: { column } } : columnBase(run, column);
    },
    row(row, column) {
      const run = columnRuns[column];
      if (run === null) return null;
      return run === undefined ? result.rowTotals[row]! : add(run.map((c) => cellAt(row, c)));
    },
    table(row, column) {
      const rows = rowRuns[row];
      const columns = columnRuns[column];
      if (rows === null || columns === null) return null;
      if (rows === undefined && columns === undefined) return result.total;
      if (rows === undefined) return add(columns!.map((c) => result.columnTotals[c]!));
      if (columns === undefined) return add(rows.map((r) => result.rowTotals[r]!));
      return add(rows.flatMap((r) => columns.map((c) => cellAt(r, c))));
    },
    rowShare(row) {
      const run = rowRuns[row];
      if (run === null) return null;
      return run === undefined ? result.total : add(run.map((r) => result.rowTotals[r]!));
    },
  };
}

/**
 * Per entry: the entries of its expanded variable's values (a run, as columnGroups forms
 * them), `null` for a "No answer" entry, `undefined` for an expression entry.
 */
function runsOf(entries: readonly AxisEntry[]): Array<readonly number[] | null | undefined> {
  const runs: Array<readonly number[] | null | undefined> = entries.map((entry) => (entry.missing ? null : undefined));
  for (const group of columnGroups(entries)) for (const index of group.columns) runs[index] = group.columns;
  return runs;
}

function add(parts: readonly CellSums[]): CellSums {
  const sum = { ...ZERO };
  for (const part of parts) {
    sum.weighted += part.weighted;
    sum.respondents += part.respondents;
    sum.sumSqWeights += part.sumSqWeights;
  }
  return sum;
}
