/** Spread of a set of weights and what it costs in precision (Kish's approximation). */
export interface WeightSpread {
  respondents: number;
  sum: number;
  min: number;
  max: number;
  /** max / min (Infinity when a weight is 0). */
  ratio: number;
  mean: number;
  /** Kish's design effect of weighting: n Σw² / (Σw)² = 1 + CV² of the weights. */
  designEffect: number;
  /** (Σw)² / Σw²: the sample size an unweighted sample of equal precision would need. */
  effectiveSize: number;
  /** effectiveSize / respondents = 1 / designEffect. */
  efficiency: number;
}

/** The spread of `weights` (f64 sums), over every respondent or those `include` keeps. */
export function weightSpread(weights: Float64Array, include?: (respondent: number) => boolean): WeightSpread {
  let n = 0;
  let sum = 0;
  let squares = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let r = 0; r < weights.length; r++) {
    if (include !== undefined && !include(r)) continue;
    const weight = weights[r]!;
    n++;
    sum += weight;
    squares += weight * weight;
    if (weight < min) min = weight;
    if (weight > max) max = weight;
  }
  return spreadOf(n, sum, squares, min, max);
}

/** The spread of `n` weights from their sum, sum of squares, min and max (f64 sums in respondent order). */
export function spreadOf(n: number, sum: number, squares: number, min: number, max: number): WeightSpread {
  const designEffect = (n * squares) / (sum * sum);
  const effectiveSize = (sum * sum) / squares;
  return { respondents: n, sum, min, max, ratio: min > 0 ? max / min : Infinity, mean: sum / n, designEffect, effectiveSize, efficiency: effectiveSize / n };
}
