import { CrosstabError, ErrorCode } from '../errors.js';
import { columnProportion } from './proportions.js';
import type { CellSums } from './types.js';

/**
 * qnorm(0.975) to full double precision: the two-sided 95% critical value of the
 * standard normal distribution (R prints 1.9599639845400536 with %.17g).
 */
export const NORMAL_CRITICAL_95 = 1.9599639845400536;

/** The standard-error methods of column proportions, the default first. */
export const STANDARD_ERROR_METHODS = ['linearization', 'kish'] as const;
export type StandardErrorMethod = (typeof STANDARD_ERROR_METHODS)[number];

export interface StandardErrorOptions {
  /**
   * `linearization` (default): Taylor-linearization SE, as R's survey package
   * reports it. `kish`: binomial SE on the Kish effective base.
   */
  method?: StandardErrorMethod;
  /**
   * n in the with-replacement factor n / (n - 1): the number of respondents in
   * the design the table is drawn from. Required for `linearization`. Pass the
   * base's respondent count to match `svydesign(ids=~1, weights=~w, data=<base rows>)`;
   * pass the whole file's count to match `subset(svydesign(<whole file>), <base>)`.
   */
  designRespondents?: number;
}

/**
 * Kish effective base: n_eff = (Σw)² / Σw² (Kish 1965, Survey Sampling, §11.7).
 * The number of unweighted respondents that would give the same precision.
 */
export function kishEffectiveBase(sums: CellSums): number {
  return sums.sumSqWeights === 0 ? Number.NaN : (sums.weighted * sums.weighted) / sums.sumSqWeights;
}

/**
 * Kish design effect due to weighting: deff_w = n · Σw² / (Σw)² = n / n_eff
 * (Kish 1965; Kish 1992, "Weighting for unequal P_i", J. Official Statistics 8:183).
 */
export function kishDesignEffect(sums: CellSums): number {
  return sums.weighted === 0 ? Number.NaN : (sums.respondents * sums.sumSqWeights) / (sums.weighted * sums.weighted);
}

/**
 * Taylor-linearization variance of the weighted proportion p = Σw(cell) / Σw(column)
 * under a single-stage with-replacement design, `svydesign(ids=~1, weights=~w)`.
 *
 * The influence value of respondent i is z_i = w_i (y_i − p) / Σw(column) inside the
 * column and 0 outside it (y_i = 1 in the cell, 0 elsewhere, blanks included).
 * Σ z_i = 0, so the centring in R's `svyrecvar` drops out and
 *
 *   Var(p) = n/(n−1) · Σ_i w_i² (y_i − p)² / Σw(column)²
 *          = n/(n−1) · [ (1−p)² Σw²(cell) + p² (Σw²(column) − Σw²(cell)) ] / Σw(column)²
 *
 * with n = `designRespondents`: the number of rows of the whole design, not of the
 * column (R pads the domain's scores with zeros up to the design's n; `survey:::onestrat`).
 * Source: Lumley (2010), Complex Surveys, §2.2–2.3 and appendix C; Binder (1983);
 * R survey package `svymean` / `svyby`. Matches `SE(svyby(~y, ~column, design, svymean))`.
 */
export function linearizationVariance(cell: CellSums, column: CellSums, designRespondents: number): number {
  checkDesignRespondents(designRespondents);
  const p = columnProportion(cell, column);
  const outsideCell = Math.max(0, column.sumSqWeights - cell.sumSqWeights);
  const sumSqDeviations = (1 - p) * (1 - p) * cell.sumSqWeights + p * p * outsideCell;
  const n = designRespondents;
  return ((n / (n - 1)) * sumSqDeviations) / (column.weighted * column.weighted);
}

/** Linearization SE of the column proportion: √ of {@link linearizationVariance}. */
export function linearizationStandardError(cell: CellSums, column: CellSums, designRespondents: number): number {
  return Math.sqrt(linearizationVariance(cell, column, designRespondents));
}

/**
 * Kish-based SE of the column proportion: √( p(1−p) / n_eff ), n_eff = (Σw)² / Σw² of
 * the column (Kish 1965, §11.7; the "effective base" SE of MRI-Simmons, SPSS
 * Custom Tables and UNICOM Intelligence). It ignores how the weights fall inside
 * versus outside the cell, so it differs from the linearization SE unless the
 * weights are equal within the column.
 */
export function kishStandardError(cell: CellSums, column: CellSums): number {
  const p = columnProportion(cell, column);
  return Math.sqrt((p * (1 - p)) / kishEffectiveBase(column));
}

/** SE of the column proportion by the method in `options` (default: linearization). */
export function proportionStandardError(cell: CellSums, column: CellSums, options: StandardErrorOptions = {}): number {
  const method = options.method ?? 'linearization';
  if (method === 'kish') return kishStandardError(cell, column);
  if (method !== 'linearization') {
    throw new CrosstabError(ErrorCode.invalidOption, `options.method must be 'linearization' or 'kish', not ${String(method)}`, {
      field: 'method',
    });
  }
  if (options.designRespondents === undefined) {
    throw new CrosstabError(ErrorCode.invalidOption, 'options.designRespondents is required for the linearization SE', {
      field: 'designRespondents',
      hint: "pass the base's respondent count, or use method: 'kish'",
    });
  }
  return linearizationStandardError(cell, column, options.designRespondents);
}

/**
 * Margin of error: criticalValue · SE, by default the 95% one, qnorm(0.975) · SE
 * (not 1.96 · SE; the two differ by 2e-5 relative).
 */
export function marginOfError(standardError: number, criticalValue: number = NORMAL_CRITICAL_95): number {
  return criticalValue * standardError;
}

export interface DesignEffectOptions {
  /**
   * Multiply the SRS variance by (Σw − n) / Σw of the column, as R's
   * `svymean(..., deff = TRUE)` does (survey 4.1), treating Σw as the population
   * size. Only meaningful when the weights sum to a population; NaN when
   * Σw < n (as R's NA), and inflated when Σw is barely above n (GSS weights,
   * which sum to the sample size). Default false.
   */
  populationCorrection?: boolean;
}

/**
 * Design effect of the column proportion: deff = Var_lin(p) / Var_srs(p), where
 * Var_srs(p) = s² / n_col is the with-replacement SRS variance with s² =
 * n_col/(n_col−1) · p(1−p), the weighted variance of the indicator as
 * `svyvar` computes it in the column: Var_srs(p) = p(1−p) / (n_col − 1).
 * Source: Kish (1965) for the definition; R survey `svymean(deff=TRUE)` /
 * `svyvar` for the estimator (Lumley 2010, §2.7). With
 * `populationCorrection`, Var_srs is multiplied by (Σw_col − n_col)/Σw_col and the
 * result equals the DEff column of `svyby(..., svymean, deff = TRUE)`; without it,
 * that of `deff = "replace"`.
 */
export function designEffect(
  cell: CellSums,
  column: CellSums,
  designRespondents: number,
  options: DesignEffectOptions = {},
): number {
  const p = columnProportion(cell, column);
  let srsVariance = (p * (1 - p)) / (column.respondents - 1);
  if (options.populationCorrection === true) {
    // survey gives NA here ("Sample size greater than population size").
    if (column.weighted < column.respondents) return Number.NaN;
    srsVariance *= (column.weighted - column.respondents) / column.weighted;
  }
  return linearizationVariance(cell, column, designRespondents) / srsVariance;
}

/**
 * Linearization SE of a weighted total Σw(cell) under `svydesign(ids=~1, weights=~w)`:
 *
 *   Var(T) = n/(n−1) · Σ_i (w_i y_i − T/n)² = n/(n−1) · (Σw²(cell) − T²/n)
 *
 * over the design's n respondents (Lumley 2010, §2.2). Matches `SE(svytotal(~y, design))`
 * and `SE(svyby(~y, ~column, design, svytotal))`.
 */
export function totalStandardError(cell: CellSums, designRespondents: number): number {
  checkDesignRespondents(designRespondents);
  const n = designRespondents;
  const total = cell.weighted;
  return Math.sqrt(Math.max(0, (n / (n - 1)) * (cell.sumSqWeights - (total * total) / n)));
}

function checkDesignRespondents(designRespondents: number): void {
  if (!Number.isInteger(designRespondents) || designRespondents < 2) {
    throw new CrosstabError(
      ErrorCode.invalidOption,
      `designRespondents must be an integer of at least 2, not ${String(designRespondents)}`,
      { field: 'designRespondents' },
    );
  }
}
