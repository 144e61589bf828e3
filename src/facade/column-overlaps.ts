/**
 * Columns that share respondents. Two values of one single-coded variable never do (a
 * respondent has one value, or a blank, per variable); any other two columns may: two
 * expressions (`HICOV=1`, `PRIVCOV=1`), an expression and a value, a value and itself, two
 * values of one multi-response variable or a value and its net. A variable's "No answer"
 * (blank on it; for a multi-response variable, no answer at all) shares none with its values. A
 * column test between such columns needs the sums over the respondents in both (their
 * covariance; docs/tables.md § Overlapping columns), which `ds.table()` counts for the
 * pairs of its `columnGroups`.
 */
import { invalidOption } from './options.js';
import type { AxisEntry } from './types.js';

export type { ColumnOverlaps } from './types.js';

/** Whether columns `a` and `b` can hold a respondent in common. */
export function mayOverlap(a: AxisEntry, b: AxisEntry): boolean {
  if (a.variable === undefined || a.variable !== b.variable) return true;
  // Two entries of one expanded variable: a value (or the net) and its "No answer" are disjoint.
  if (a.missing || b.missing) return a.missing !== b.missing ? false : true;
  // A multi-response variable's values overlap, and its net holds every one of them.
  if (a.multi || b.multi) return true;
  // Distinct values of a single-coded variable are disjoint.
  return a.value === b.value;
}

/**
 * The default groups of compared columns: each run of adjacent entries expanded from one
 * variable; a run restarts when a value repeats. Expression entries, "No answer" entries and
 * the net of a multi-response variable (it holds each of its values' respondents: a part
 * against its whole) are in none. A multi-response variable's values are a group whose
 * columns overlap: `ds.table()` counts the respondents in both of each pair.
 */
export function variableRuns(columns: readonly AxisEntry[]): number[][] {
  const runs: number[][] = [];
  let current: number[] | undefined;
  let variable: string | undefined;
  let values = new Set<string>();
  columns.forEach((column, index) => {
    if (column.variable === undefined || column.missing || column.net) {
      current = undefined;
      return;
    }
    const value = column.value ?? column.expr;
    if (current === undefined || variable !== column.variable || values.has(value)) {
      current = [];
      variable = column.variable;
      values = new Set();
      runs.push(current);
    }
    values.add(value);
    current.push(index);
  });
  return runs;
}

/** The pairs of columns within `groups` that may share respondents, a < b, in group order. */
export function overlappingPairs(columns: readonly AxisEntry[], groups: readonly (readonly number[])[]): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  for (const group of groups) {
    const sorted = [...group].sort((x, y) => x - y);
    for (let i = 0; i < sorted.length; i++) {
      for (let j = i + 1; j < sorted.length; j++) {
        if (mayOverlap(columns[sorted[i]!]!, columns[sorted[j]!]!)) pairs.push([sorted[i]!, sorted[j]!]);
      }
    }
  }
  return pairs;
}

/**
 * Checks `columnGroups` of a table query against its columns: arrays of distinct table
 * column indexes, each column in one group at most.
 */
export function readColumnGroups(value: unknown, columnCount: number, option = 'columnGroups'): number[][] | undefined {
  if (value === undefined) return undefined;
  const hint = 'List groups of columns to compare as table column indexes, e.g. [[0, 1, 2]].';
  if (!Array.isArray(value)) throw invalidOption(option, 'must be an array of arrays of column indexes', hint);
  const seen = new Set<number>();
  return value.map((group: unknown, g) => {
    if (!Array.isArray(group) || group.length === 0) throw invalidOption(`${option}[${g}]`, 'must be a non-empty array of column indexes', hint);
    return group.map((index: unknown) => {
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= columnCount) {
        throw invalidOption(`${option}[${g}]`, `holds ${String(index)}, which is not a column index of the table (0..${columnCount - 1})`, hint);
      }
      if (seen.has(index)) throw invalidOption(`${option}[${g}]`, `column ${index} is already in another group`, hint);
      seen.add(index);
      return index;
    });
  });
}
