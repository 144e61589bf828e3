import type { CellSums } from './types.js';

/*
 * Percentages and the index of a crosstab cell. Each is a ratio of weighted sums
 * (Σw); a zero denominator gives NaN (the statistic is undefined, not zero).
 *
 * Totals: the column total is every base respondent in the column, the row total
 * every base respondent in the row (whatever their column), the table total the
 * whole base. A respondent with a blank row variable matches no row but stays in
 * its column total, as a domain indicator that is 0 (not NA) does in R.
 */

/**
 * Weighted proportion of the column that is in the cell: p = Σw(cell) / Σw(column).
 *
 * Equals `coef(svymean(~y, subset(design, column)))` for the row indicator y
 * (R survey package; Lumley 2010, §2.3, the ratio estimator of a domain mean).
 */
export function columnProportion(cell: CellSums, column: CellSums): number {
  return ratio(cell.weighted, column.weighted);
}

/** Vertical (column) percentage: 100 · Σw(cell) / Σw(column). */
export function verticalPercent(cell: CellSums, column: CellSums): number {
  return 100 * ratio(cell.weighted, column.weighted);
}

/** Horizontal (row) percentage: 100 · Σw(cell) / Σw(row total). */
export function horizontalPercent(cell: CellSums, row: CellSums): number {
  return 100 * ratio(cell.weighted, row.weighted);
}

/** Table (total) percentage: 100 · Σw(cell) / Σw(table total). */
export function tablePercent(cell: CellSums, table: CellSums): number {
  return 100 * ratio(cell.weighted, table.weighted);
}

/**
 * Index (MRI-Simmons / Quantipy "index"): how much more likely the column is to
 * be in the row than the base as a whole, 100 = average.
 *
 *   index = 100 · (Σw(cell) / Σw(column)) / (Σw(row) / Σw(table))
 *         = 100 · Σw(cell) · Σw(table) / (Σw(row) · Σw(column))
 *
 * The second form shows that the "column % over base %" reading and the
 * "row % over column share" reading give the same number.
 */
export function index(cell: CellSums, row: CellSums, column: CellSums, table: CellSums): number {
  return (100 * ratio(cell.weighted, column.weighted)) / ratio(row.weighted, table.weighted);
}

function ratio(part: number, whole: number): number {
  return whole === 0 ? Number.NaN : part / whole;
}
