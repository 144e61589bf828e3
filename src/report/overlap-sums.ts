/**
 * The sums over respondents in both columns of a compared pair, from the counts
 * `ds.table()` made for its `columnGroups` (TableResult.overlaps), on the percent base in
 * use: with `total`, base AND A AND B; with `valid`, the same within those who answered the
 * row's variable (the sum of the pair's cells over the row variable's values).
 */
import { mayOverlap } from '../facade/column-overlaps.js';
import type { TableResult } from '../facade/types.js';
import type { CellSums } from '../stats/types.js';
import type { PercentBases } from './percent-bases.js';

export interface PairOverlap {
  /** base AND row AND A AND B. */
  cell: CellSums;
  /** The respondents in both columns' denominators. */
  column: CellSums;
}

export interface OverlapSums {
  /** Whether columns a and b may share respondents (not two values of one expanded variable). */
  mayOverlap(a: number, b: number): boolean;
  /** Whether the table counted the pair's respondents in both columns. */
  counted(a: number, b: number): boolean;
  /** base AND A AND B of a counted pair; null when not counted. */
  total(a: number, b: number): CellSums | null;
  /** The pair's sums in `row`: zero sums for columns that cannot overlap; null when not counted or undefined. */
  both(row: number, a: number, b: number): PairOverlap | null;
}

const ZERO: CellSums = { weighted: 0, respondents: 0, sumSqWeights: 0 };

export function overlapSums(result: TableResult, bases: PercentBases): OverlapSums {
  const overlaps = result.overlaps;
  const width = result.columns.length;
  const index = new Map<number, number>();
  overlaps?.pairs.forEach(([a, b], k) => index.set(a * width + b, k));
  const pairOf = (a: number, b: number) => index.get(Math.min(a, b) * width + Math.max(a, b));
  const may = (a: number, b: number) => mayOverlap(result.columns[a]!, result.columns[b]!);
  const cellOf = (row: number, k: number): CellSums => {
    const at = row * overlaps!.pairs.length + k;
    return { weighted: overlaps!.weighted[at]!, respondents: overlaps!.respondents[at]!, sumSqWeights: overlaps!.sumSqWeights[at]! };
  };
  return {
    mayOverlap: may,
    counted: (a, b) => !may(a, b) || pairOf(a, b) !== undefined,
    total(a, b) {
      const k = pairOf(a, b);
      return k === undefined ? null : overlaps!.totals[k]!;
    },
    both(row, a, b) {
      if (!may(a, b)) return { cell: ZERO, column: ZERO };
      const k = pairOf(a, b);
      const base = bases.column(row, a);
      if (k === undefined || base === null) return null;
      const slot = base.slot;
      let column: CellSums;
      if (typeof slot === 'object' && 'cells' in slot) {
        // `valid`: the denominator is the row variable's values in the column; the same rows for both columns.
        column = { ...ZERO };
        for (const at of slot.cells) {
          const part = cellOf(Math.floor(at / width), k);
          column.weighted += part.weighted;
          column.respondents += part.respondents;
          column.sumSqWeights += part.sumSqWeights;
        }
      } else {
        column = overlaps!.totals[k]!;
      }
      return { cell: cellOf(row, k), column };
    },
  };
}
