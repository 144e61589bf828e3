/**
 * A weighting problem over cells: respondents who share every target variable's category
 * share their adjustment, so raking, post-stratification and calibration on categorical
 * targets work on sums per cell, and a respondent's new weight is its base weight times
 * its cell's factor.
 */
export interface CellProblem {
  /** Sum of the base weights per cell (f64). */
  base: Float64Array;
  /** One entry per margin: the category of each cell and the target total per category. */
  margins: CellMargin[];
}

export interface CellMargin {
  /** Category index (0-based, < targets.length) of each cell. */
  category: Int32Array;
  /** Target total per category. */
  targets: Float64Array;
}

/** What a weighting run did, per cell and overall. */
export interface CellSolution {
  /** New weight / base weight, per cell. */
  factor: Float64Array;
  iterations: number;
  converged: boolean;
  /** Raking: per margin, the factor per cell right after that margin in the last pass (its variance needs them). */
  steps?: Float64Array[];
}

/** Weighted total per category of `margin` with the cell weights `base[c] * factor[c]`. */
export function marginTotals(base: Float64Array, factor: Float64Array, margin: CellMargin): Float64Array {
  const totals = new Float64Array(margin.targets.length);
  for (let cell = 0; cell < base.length; cell++) totals[margin.category[cell]!]! += base[cell]! * factor[cell]!;
  return totals;
}
