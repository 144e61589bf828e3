/**
 * Design-based variances for complex surveys, as R's survey package computes
 * them: Taylor linearization with strata and PSUs (`svyrecvar`, `survey:::onestrat`) and
 * replicate weights (`svrVar`). See docs/statistics.md § Complex designs.
 */
import { CrosstabError, ErrorCode } from '../errors.js';

/** How strata with a single PSU are handled, as R's `options(survey.lonely.psu)`. */
export const LONELY_PSU = ['fail', 'adjust', 'certainty', 'remove'] as const;
export type LonelyPsu = (typeof LONELY_PSU)[number];

/** PSUs of a Taylor design: which stratum each PSU is in, PSUs per stratum, the fpc factor. */
export interface PsuStructure {
  clusters: number;
  /** Per PSU, its stratum number. */
  stratumOf: Int32Array;
  /** Per stratum: label, n_h = PSUs in the whole sample, f_h = 1 − n_h/N_h (1 without fpc). */
  strata: ReadonlyArray<{ label: string; psus: number; fpcFactor: number }>;
}

/** Replicate-weight settings, as `svrepdesign`: v = scale · Σ_r rscales_r (θ_r − θ̄)². */
export interface ReplicateSettings {
  scale: number;
  rscales: readonly number[];
  /** Centre on the full-sample estimate (R `mse = TRUE`) instead of the replicates' mean. */
  mse: boolean;
}

/**
 * Covariance matrix (p × p, row-major) of p estimators from their per-PSU scores
 * (`scores[j][psu]`: Σ over the PSU's respondents of the estimator's influence values;
 * PSUs with no respondent in the domain have score 0, which is R's padding of a domain's
 * PSU totals with zeros up to n_h). Per stratum h with n_h > 1:
 *
 *   V_h = f_h · n_h / (n_h − 1) · Σ_j (z_hj − z̄_h)(z_hj − z̄_h)ᵀ
 *
 * A stratum with one PSU: `fail` throws naming the stratum; `certainty` and `remove` add 0;
 * `adjust` adds f_h · z_h1 z_h1ᵀ (R centres a lonely PSU at the grand mean of the scores,
 * which is 0). Matches `svyrecvar` for a one-stage design (R survey 4.1, `onestrat`).
 * `touched(psu)` says whether the domain's base has respondents in the PSU: R only fails on
 * a lonely stratum the estimate reaches.
 */
export function taylorCovariance(scores: readonly Float64Array[], design: PsuStructure, lonely: LonelyPsu, touched?: (psu: number) => boolean): Float64Array {
  const p = scores.length;
  const out = new Float64Array(p * p);
  const { strata } = design;
  const members = stratumMembers(design);
  const centred = new Float64Array(p);
  const mean = new Float64Array(p);
  for (let h = 0; h < strata.length; h++) {
    const stratum = strata[h]!;
    const psus = members[h]!;
    const n = stratum.psus;
    const f = stratum.fpcFactor;
    if (f < 1e-7) continue; // census stratum: R returns 0
    let scale: number;
    mean.fill(0);
    if (n > 1) {
      scale = (f * n) / (n - 1);
      for (let j = 0; j < p; j++) {
        const score = scores[j]!;
        let sum = 0;
        for (const psu of psus) sum += score[psu]!;
        mean[j] = sum / n;
      }
    } else {
      if (lonely === 'fail') {
        if (touched && !psus.some(touched)) continue;
        throw new CrosstabError(ErrorCode.invalidOption, `stratum ${stratum.label} has only one PSU: no variance can be estimated with lonelyPsu "fail"`, {
          field: 'lonelyPsu',
          hint: 'Choose `lonelyPsu` "adjust", "certainty" or "remove", as R options(survey.lonely.psu); or merge the stratum with another at build time.',
          hintOptions: ['lonelyPsu'],
        });
      }
      if (lonely !== 'adjust') continue;
      scale = f;
    }
    for (const psu of psus) {
      for (let j = 0; j < p; j++) centred[j] = scores[j]![psu]! - mean[j]!;
      for (let a = 0; a < p; a++) {
        const x = centred[a]! * scale;
        if (x === 0) continue;
        const row = a * p;
        for (let b = a; b < p; b++) out[row + b]! += x * centred[b]!;
      }
    }
  }
  for (let a = 0; a < p; a++) for (let b = 0; b < a; b++) out[a * p + b] = out[b * p + a]!;
  return out;
}

const membersCache = new WeakMap<PsuStructure, number[][]>();

/** The PSUs of each stratum (computed once per design). */
function stratumMembers(design: PsuStructure): number[][] {
  let members = membersCache.get(design);
  if (!members) {
    const list: number[][] = design.strata.map(() => []);
    design.stratumOf.forEach((stratum, psu) => list[stratum]!.push(psu));
    members = list;
    membersCache.set(design, members);
  }
  return members;
}

/** Variance of one estimator from its per-PSU scores; see {@link taylorCovariance}. */
export function taylorVariance(scores: Float64Array, design: PsuStructure, lonely: LonelyPsu, touched?: (psu: number) => boolean): number {
  return taylorCovariance([scores], design, lonely, touched)[0]!;
}

/**
 * Covariance (p × p) of p estimators from their replicate estimates
 * (`thetas[j][r]`) and full-sample estimates, as R's `svrVar`: replicates giving NaN for
 * any estimator are dropped (R's na.action), the centre is the mean of the replicates with
 * rscales > 0 (or the full-sample estimate with `mse`).
 */
export function replicateCovariance(thetas: readonly Float64Array[], full: readonly number[], settings: ReplicateSettings): Float64Array {
  const p = thetas.length;
  const replicates = settings.rscales.length;
  const kept: number[] = [];
  for (let r = 0; r < replicates; r++) if (thetas.every((theta) => !Number.isNaN(theta[r]!))) kept.push(r);
  const out = new Float64Array(p * p);
  if (kept.length === 0) return out.fill(Number.NaN);
  const centre = thetas.map((theta, j) => {
    if (settings.mse) return full[j]!;
    let sum = 0;
    let count = 0;
    for (const r of kept) {
      if (settings.rscales[r]! > 0) {
        sum += theta[r]!;
        count++;
      }
    }
    return sum / count;
  });
  for (const r of kept) {
    const weight = settings.rscales[r]! * settings.scale;
    for (let a = 0; a < p; a++) {
      const x = (thetas[a]![r]! - centre[a]!) * weight;
      for (let b = a; b < p; b++) out[a * p + b]! += x * (thetas[b]![r]! - centre[b]!);
    }
  }
  for (let a = 0; a < p; a++) for (let b = 0; b < a; b++) out[a * p + b] = out[b * p + a]!;
  return out;
}

/** Variance of one estimator from its replicate estimates; see {@link replicateCovariance}. */
export function replicateVariance(thetas: Float64Array, full: number, settings: ReplicateSettings): number {
  return replicateCovariance([thetas], [full], settings)[0]!;
}

/**
 * Per-PSU scores of a ratio Y / X (a domain mean or column proportion) from per-PSU sums
 * of Y and X: z_k = (Y_k − (Y/X) X_k) / X (Binder 1983; R `svymean` influence functions).
 */
export function ratioScores(numerator: Float64Array, denominator: Float64Array, y: number, x: number): Float64Array {
  const ratio = y / x;
  const out = new Float64Array(numerator.length);
  for (let k = 0; k < out.length; k++) out[k] = (numerator[k]! - ratio * denominator[k]!) / x;
  return out;
}
