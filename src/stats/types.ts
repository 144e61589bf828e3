/**
 * The weighted sums of one cell (or of a row, column or table total) that every
 * statistic in `src/stats` starts from. The engine's `Cell` has these fields
 * (plus `stability`), so a `Cell` can be passed wherever a `CellSums` is expected.
 */
export interface CellSums {
  /** Σw: sum of the weights of the matching respondents. */
  weighted: number;
  /** n: unweighted count of the matching respondents. */
  respondents: number;
  /** Σw²: sum of the squared weights of the matching respondents. */
  sumSqWeights: number;
}
