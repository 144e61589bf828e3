import { CrosstabError, ErrorCode } from '../errors.js';
import { variableRuns } from '../facade/column-overlaps.js';
import type { AxisEntry } from '../facade/types.js';
import { columnLetter } from '../stats/index.js';

/**
 * A set of columns that are compared with one another (a "banner group"). Columns of one
 * expanded variable are disjoint domains: their covariance is exactly 0. Explicit groups
 * may hold columns that share respondents, whose covariance the tests add.
 */
export interface ColumnGroup {
  /** The expanded variable the columns come from; `null` for a group given explicitly over other columns. */
  variable: string | null;
  /** Table column indexes, in table order. */
  columns: number[];
  /** Key letter of each column of `columns`: A, B, C… (AA, AB… past Z). */
  letters: string[];
}

/**
 * Groups a table's columns for significance testing.
 *
 * Default: each run of adjacent columns expanded from the same variable is a group
 * (`--columns sex --columns race` gives two groups, lettered A–B and A–C). A run
 * restarts when a value repeats, so `--columns sex --columns sex` gives two groups.
 * A stand-alone expression column (`sex=2`, `degree=3..4`, a codebook code) is in
 * no group: nothing says it is disjoint from its neighbours, so it is never
 * compared and has no letter. Nor is a "No answer" entry (blank on the variable):
 * significance is of the answered categories.
 *
 * `explicit` overrides this: each inner array lists table column indexes to compare.
 * Its columns may share respondents; the tests then need the sums over those in both
 * columns, which `ds.table({ columnGroups })` counts (TableResult.overlaps).
 */
export function columnGroups(columns: readonly AxisEntry[], explicit?: readonly (readonly number[])[]): ColumnGroup[] {
  if (explicit !== undefined) return explicitGroups(columns, explicit);
  return variableRuns(columns).map((run) => ({ variable: columns[run[0]!]!.variable!, columns: run, letters: run.map((_, position) => columnLetter(position)) }));
}

function explicitGroups(columns: readonly AxisEntry[], explicit: readonly (readonly number[])[]): ColumnGroup[] {
  if (!Array.isArray(explicit)) {
    throw invalid('options.columnGroups must be an array of arrays of column indexes');
  }
  const seen = new Set<number>();
  return explicit.map((group, g) => {
    if (!Array.isArray(group) || group.length === 0) {
      throw invalid(`options.columnGroups[${g}] must be a non-empty array of column indexes`);
    }
    for (const index of group as number[]) {
      if (!Number.isInteger(index) || index < 0 || index >= columns.length) {
        throw invalid(`options.columnGroups[${g}] holds ${String(index)}, which is not a column index (0..${columns.length - 1})`);
      }
      if (seen.has(index)) throw invalid(`options.columnGroups[${g}]: column ${index} is already in another group`);
      seen.add(index);
    }
    const sorted = [...(group as number[])].sort((a, b) => a - b);
    const variables = new Set(sorted.map((index) => columns[index]!.variable));
    const only = variables.size === 1 ? [...variables][0] : undefined;
    return { variable: only ?? null, columns: sorted, letters: sorted.map((_, position) => columnLetter(position)) };
  });
}

function invalid(message: string): CrosstabError {
  return new CrosstabError(ErrorCode.invalidOption, message, {
    field: 'columnGroups',
    hint: 'List groups of mutually exclusive columns, e.g. [[0, 1], [2, 3, 4]].',
  });
}
