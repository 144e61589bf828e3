import { columnProportion } from './proportions.js';
import type { CellSums } from './types.js';

/**
 * Covariance of two column proportions p_A = W(R∧A)/W(A) and p_B = W(R∧B)/W(B) whose
 * columns share respondents, under the simple design `svydesign(ids = ~1, weights = ~w)`
 * with N respondents (each its own PSU). The influence values z_i = w_i (y_i − p) / W(col)
 * of the two ratios are both non-zero only for respondents in A ∧ B; each set sums to 0, so
 * R's centring in `svyrecvar` drops out and, y being 0/1,
 *
 *   Cov(p_A, p_B) = N/(N−1) · Σ_{A∧B} w_i² (y_i − p_A)(y_i − p_B) / (W(A) W(B))
 *                 = N/(N−1) · [ (1−p_A)(1−p_B) S(R∧A∧B) + p_A p_B (S(A∧B) − S(R∧A∧B)) ] / (W(A) W(B))
 *
 * with S the Σw² of the respondents in both columns (`cellBoth`: in the row too;
 * `columnBoth`: in both columns' denominators). 0 when no respondent is in both. Equals the
 * off-diagonal of R's `svyratio(~y a_A + y a_B, ~a_A + a_B, design, covmat = TRUE)`.
 */
export function overlapCovariance(
  cellA: CellSums,
  columnA: CellSums,
  cellB: CellSums,
  columnB: CellSums,
  cellBoth: CellSums,
  columnBoth: CellSums,
  designRespondents: number,
): number {
  if (columnBoth.respondents === 0) return 0;
  const pA = columnProportion(cellA, columnA);
  const pB = columnProportion(cellB, columnB);
  const outsideRow = Math.max(0, columnBoth.sumSqWeights - cellBoth.sumSqWeights);
  const crossProducts = (1 - pA) * (1 - pB) * cellBoth.sumSqWeights + pA * pB * outsideRow;
  const n = designRespondents;
  return ((n / (n - 1)) * crossProducts) / (columnA.weighted * columnB.weighted);
}
