import { CrosstabError, ErrorCode } from '../errors.js';
import { twoSidedPValue } from './normal.js';
import { columnProportion } from './proportions.js';
import { kishEffectiveBase, linearizationVariance } from './standard-error.js';
import type { CellSums } from './types.js';

/** One column of a row: the cell and its column total. */
export interface ColumnCell {
  cell: CellSums;
  column: CellSums;
}

export type ComparisonMethod = 'linearization' | 'pooled-effective';
/** The multiple-comparison corrections of column tests, the default first. */
export const CORRECTIONS = ['none', 'bonferroni', 'holm'] as const;
export type Correction = (typeof CORRECTIONS)[number];

export interface ComparisonOptions {
  /**
   * `linearization` (default): unpooled design-based z, as R's
   * `svycontrast(svyby(~y, ~col, design, svymean, covmat=TRUE), c(1, -1))` and
   * `svyttest(y ~ col, ...)` compute it. `pooled-effective`: the classic pooled
   * two-proportion z on Kish effective bases (SPSS / UNICOM "effective base" test).
   */
  method?: ComparisonMethod;
  /** n of the design (see `StandardErrorOptions.designRespondents`); needed for `linearization`. */
  designRespondents?: number;
  /**
   * Design-based Var(p_a − p_b) of the columns at positions a, b (with their covariance, as
   * R's `svyby(covmat = TRUE)` + `svycontrast`); replaces the `linearization` variance,
   * whose zero covariance holds only for the simple design.
   */
  differenceVariance?: (a: number, b: number) => number;
}

export interface ProportionComparison {
  /** pA − pB. */
  difference: number;
  /** SE of the difference under the chosen method. */
  standardError: number;
  /** difference / standardError; NaN when the SE is 0 or undefined (no test). */
  z: number;
  /** Two-sided normal p-value of z; NaN when z is NaN. */
  pValue: number;
}

/**
 * Two-proportion z-test between two columns of the same column variable.
 *
 * `linearization`: columns of one variable are disjoint domains, so under
 * `svydesign(ids=~1, weights=~w)` their influence values never overlap and the
 * covariance of the two domain means is 0 (their scores sum to 0 in each domain):
 *
 *   z = (pA − pB) / √( Var_lin(pA) + Var_lin(pB) )
 *
 * with Var_lin from {@link linearizationVariance} and the design's n. Matches R's
 * `svycontrast` on `svyby(..., covmat = TRUE)` and the t statistic of `svyttest`
 * (Lumley 2010, §2.3, §5.2); the p-value uses the normal, not svyttest's t(df).
 *
 * `pooled-effective`: e = (Σw)²/Σw² per column (Kish), p̄ = (eA pA + eB pB)/(eA + eB),
 *
 *   z = (pA − pB) / √( p̄ (1 − p̄) (1/eA + 1/eB) )
 *
 * the pooled test of SPSS Custom Tables / UNICOM Intelligence "column proportions"
 * with the effective-base option; equals ±√ of R's `prop.test(c(pA·eA, pB·eB),
 * c(eA, eB), correct = FALSE)` statistic.
 */
export function compareProportions(a: ColumnCell, b: ColumnCell, options: ComparisonOptions = {}): ProportionComparison {
  const method = options.method ?? 'linearization';
  const pA = columnProportion(a.cell, a.column);
  const pB = columnProportion(b.cell, b.column);
  const difference = pA - pB;
  let variance: number;
  if (method === 'linearization') {
    const n = options.designRespondents;
    if (n === undefined) {
      throw new CrosstabError(ErrorCode.invalidOption, 'options.designRespondents is required for the linearization test', {
        field: 'designRespondents',
        hint: "pass the base's respondent count, or use method: 'pooled-effective'",
      });
    }
    variance = linearizationVariance(a.cell, a.column, n) + linearizationVariance(b.cell, b.column, n);
  } else if (method === 'pooled-effective') {
    const baseA = kishEffectiveBase(a.column);
    const baseB = kishEffectiveBase(b.column);
    const pooled = (baseA * pA + baseB * pB) / (baseA + baseB);
    variance = pooled * (1 - pooled) * (1 / baseA + 1 / baseB);
  } else {
    throw new CrosstabError(
      ErrorCode.invalidOption,
      `options.method must be 'linearization' or 'pooled-effective', not ${String(method)}`,
      { field: 'method' },
    );
  }
  const standardError = Math.sqrt(variance);
  const z = standardError > 0 ? difference / standardError : Number.NaN;
  return { difference, standardError, z, pValue: twoSidedPValue(z) };
}

/** The z-test of pA − pB with a given design-based variance of the difference. */
function designComparison(a: ColumnCell, b: ColumnCell, variance: number): ProportionComparison {
  const difference = columnProportion(a.cell, a.column) - columnProportion(b.cell, b.column);
  const standardError = Math.sqrt(variance);
  const z = standardError > 0 ? difference / standardError : Number.NaN;
  return { difference, standardError, z, pValue: twoSidedPValue(z) };
}

/**
 * Multiple-comparison adjustment of a family of p-values, as R's `p.adjust`:
 * NaN entries (untested pairs) stay NaN and do not count in the family size m.
 *  - `bonferroni`: min(1, m · p) (Bonferroni; Dunn 1961).
 *  - `holm`: sort ascending, p̃_(i) = min(1, max_{j ≤ i} (m − j + 1) · p_(j))
 *    (Holm 1979, "A simple sequentially rejective multiple test procedure").
 */
export function adjustPValues(pValues: readonly number[], correction: Correction): number[] {
  if (correction === 'none') return [...pValues];
  const tested = pValues.map((p, position) => ({ p, position })).filter(({ p }) => !Number.isNaN(p));
  const m = tested.length;
  const adjusted = pValues.map(() => Number.NaN);
  if (correction === 'bonferroni') {
    for (const { p, position } of tested) adjusted[position] = Math.min(1, m * p);
    return adjusted;
  }
  if (correction !== 'holm') {
    throw new CrosstabError(
      ErrorCode.invalidOption,
      `correction must be 'none', 'bonferroni' or 'holm', not ${String(correction)}`,
      { field: 'correction' },
    );
  }
  tested.sort((x, y) => x.p - y.p);
  let running = 0;
  tested.forEach(({ p, position }, rank) => {
    running = Math.max(running, (m - rank) * p);
    adjusted[position] = Math.min(1, running);
  });
  return adjusted;
}

/** Column key letter: 0 → A, 25 → Z, 26 → AA, 27 → AB … (SPSS column keys; spreadsheet-style past Z). */
export function columnLetter(position: number): string {
  if (!Number.isInteger(position) || position < 0) {
    throw new CrosstabError(ErrorCode.invalidOption, `column position must be a non-negative integer, not ${String(position)}`, {
      field: 'position',
    });
  }
  let letters = '';
  for (let rest = position + 1; rest > 0; rest = Math.floor((rest - 1) / 26)) {
    letters = String.fromCharCode(65 + ((rest - 1) % 26)) + letters;
  }
  return letters;
}

export interface ColumnTestOptions extends ComparisonOptions {
  /** Significance level; default 0.05. */
  alpha?: number;
  /** Family-wise correction over the row's pairs of this column variable; default `none`. */
  correction?: Correction;
}

export interface PairResult extends ProportionComparison {
  /** Positions of the two columns (a < b). */
  a: number;
  b: number;
  /** p-value after the correction (equal to pValue for `none`). */
  adjustedPValue: number;
  /** adjustedPValue < alpha. */
  significant: boolean;
}

export interface ColumnTestResult {
  pairs: PairResult[];
  /**
   * Per column, SPSS style: the letters of the columns whose proportion is
   * significantly smaller, in column order ('' when none).
   */
  letters: string[];
}

/**
 * Column-comparison significance for one row across the columns of one column
 * variable: every pair (a < b) is tested with {@link compareProportions}, the
 * family of the row's pairs is corrected with {@link adjustPValues}, and each column
 * gets the letters of the columns it is significantly greater than (IBM SPSS
 * Custom Tables "Compare column proportions", APA-style column keys).
 */
export function testColumns(columns: readonly ColumnCell[], options: ColumnTestOptions = {}): ColumnTestResult {
  const alpha = options.alpha ?? 0.05;
  if (!(alpha > 0 && alpha < 1)) {
    throw new CrosstabError(ErrorCode.invalidOption, `options.alpha must be between 0 and 1, not ${String(alpha)}`, {
      field: 'alpha',
    });
  }
  const tests: Array<ProportionComparison & { a: number; b: number }> = [];
  for (let a = 0; a < columns.length; a++) {
    for (let b = a + 1; b < columns.length; b++) {
      tests.push({ a, b, ...(options.differenceVariance ? designComparison(columns[a]!, columns[b]!, options.differenceVariance(a, b)) : compareProportions(columns[a]!, columns[b]!, options)) });
    }
  }
  const adjusted = adjustPValues(
    tests.map((test) => test.pValue),
    options.correction ?? 'none',
  );
  const pairs = tests.map((test, k) => {
    const adjustedPValue = adjusted[k]!;
    return { ...test, adjustedPValue, significant: adjustedPValue < alpha };
  });
  const greaterThan: number[][] = columns.map(() => []);
  for (const pair of pairs) {
    if (!pair.significant) continue;
    if (pair.difference > 0) greaterThan[pair.a]!.push(pair.b);
    if (pair.difference < 0) greaterThan[pair.b]!.push(pair.a);
  }
  const letters = greaterThan.map((smaller) =>
    smaller
      .sort((x, y) => x - y)
      .map(columnLetter)
      .join(''),
  );
  return { pairs, letters };
}
