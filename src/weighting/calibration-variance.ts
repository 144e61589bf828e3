/**
 * Linearization variance of estimates made with a calibrated weight, as R's survey package
 * computes it for a raked, post-stratified or calibrated design (`svyrecvar` with the
 * design's `postStrata`): each respondent's influence value x_i is replaced by a residual
 * before the per-PSU sums, and the Taylor (or simple) variance is taken of those.
 *
 * - `regression` (R's calibrate() and postStratify()): x_i − w_i m_i'β, β the regression of
 *   x_i / w_i on the model matrix m with the base weights (R: `qr.resid(qr(mm·√ww), x/(g√ww))·g√ww`).
 * - `raking` (R's rake()): 10 rounds over the margins of x ← x − ψ_m · ave(x / ψ_m, margin m),
 *   ψ_m the weights right after margin m in the last pass, ave the unweighted mean within
 *   a category (R's backfitting, which approximates the regression residual).
 *
 * Respondents of one cell (a combination of the target variables' values) share their model
 * row and their factors, so both reduce to one coefficient per cell and slot; the residual
 * per-PSU sums are the plain ones minus Σ_c coefficient_c · (weights of cell c in the PSU).
 */
import { pseudoInverse } from './pseudo-inverse.js';

/** R's survey (svyrecvar) backfits a raked design's residuals this many rounds. */
const RAKING_ROUNDS = 10;

/** Sums per cluster (a PSU, or a cell of the model) and slot of a table: `sums[cluster * slots + slot]`. */
export interface PsuSums {
  clusters: number;
  slots: number;
  sums: Float64Array;
}

/** A calibrated weight's model over cells of its target variables. */
export interface CalibrationModel {
  kind: 'raking' | 'regression';
  cells: number;
  /** Per margin: its categories and each cell's category (0-based). */
  margins: ReadonlyArray<{ categories: number; category: ArrayLike<number> }>;
  /** Raking: per margin, each cell's weight / base weight right after that margin in the last pass. */
  steps?: ReadonlyArray<ArrayLike<number>>;
  /** Per cell: respondents (raking) or the sum of the base weights (regression). */
  cellTotals: Float64Array;
}

/** Weights per (PSU, cell) pair that has respondents: final weights (regression) or base weights (raking). */
export interface PsuCellWeights {
  psu: Int32Array;
  cell: Int32Array;
  weight: Float64Array;
}

/**
 * The per-PSU sums of the calibration residuals of every slot of a table.
 * `psuSums`: per PSU and slot, Σ final weight (the plain influence sums). `cellSums`: per cell
 * and slot (`clusters` = the model's cells), Σ base weight (regression) or respondents (raking).
 */
export function calibratedPsuSums(psuSums: PsuSums, cellSums: PsuSums, pairs: PsuCellWeights, model: CalibrationModel): PsuSums {
  const { slots } = psuSums;
  const out = Float64Array.from(psuSums.sums);
  const coefficients = model.kind === 'raking' ? rakingCoefficients(cellSums, model) : regressionCoefficients(cellSums, model);
  const cells = model.cells;
  for (let j = 0; j < pairs.psu.length; j++) {
    const row = pairs.psu[j]! * slots;
    const weight = pairs.weight[j]!;
    const cell = pairs.cell[j]!;
    for (let s = 0; s < slots; s++) out[row + s]! -= coefficients[s * cells + cell]! * weight;
  }
  return { clusters: psuSums.clusters, slots, sums: out };
}

/** Regression: per slot, each cell's fitted value m_c'β (slot-major). */
function regressionCoefficients(cellSums: PsuSums, model: CalibrationModel): Float64Array {
  const { cells, margins, cellTotals } = model;
  // R's model matrix for ~a + b: an intercept and every category but the first of each margin.
  const offsets: number[] = [];
  let p = 1;
  for (const margin of margins) {
    offsets.push(p - 1);
    p += margin.categories - 1;
  }
  const columns = Array.from({ length: cells }, (_, c) => {
    const active = [0];
    margins.forEach((margin, m) => {
      const k = margin.category[c]!;
      if (k > 0) active.push(offsets[m]! + k);
    });
    return active;
  });
  const cross = new Float64Array(p * p);
  columns.forEach((active, c) => {
    for (const i of active) for (const j of active) cross[i * p + j]! += cellTotals[c]!;
  });
  const inverse = pseudoInverse(cross, p);
  const { slots } = cellSums;
  const out = new Float64Array(slots * cells);
  const rhs = new Float64Array(p);
  const beta = new Float64Array(p);
  for (let s = 0; s < slots; s++) {
    rhs.fill(0);
    columns.forEach((active, c) => {
      const total = cellSums.sums[c * slots + s]!;
      if (total !== 0) for (const i of active) rhs[i]! += total;
    });
    for (let i = 0; i < p; i++) {
      let sum = 0;
      for (let j = 0; j < p; j++) sum += inverse[i * p + j]! * rhs[j]!;
      beta[i] = sum;
    }
    columns.forEach((active, c) => {
      let fitted = 0;
      for (const i of active) fitted += beta[i]!;
      out[s * cells + c] = fitted;
    });
  }
  return out;
}

/**
 * Raking: per slot, each cell's d_c, where the residual of a respondent of cell c is
 * ww_i (y_i g_c − d_c). A step over margin m adds f_mc · mean_k to d_c, mean_k being the
 * unweighted mean of x/ψ_m = (y_i g_c − d_c) / f_mc over the respondents of c's category k.
 */
function rakingCoefficients(cellSums: PsuSums, model: CalibrationModel): Float64Array {
  const { cells, margins, cellTotals: respondents } = model;
  const steps = model.steps!;
  const final = steps[steps.length - 1]!;
  const { slots } = cellSums;
  const out = new Float64Array(slots * cells);
  const sizes = margins.map((margin) => {
    const size = new Float64Array(margin.categories);
    for (let c = 0; c < cells; c++) size[margin.category[c]!]! += respondents[c]!;
    return size;
  });
  const sums = margins.map((margin) => new Float64Array(margin.categories));
  for (let s = 0; s < slots; s++) {
    const d = out.subarray(s * cells, (s + 1) * cells);
    for (let round = 0; round < RAKING_ROUNDS; round++) {
      margins.forEach((margin, m) => {
        const step = steps[m]!;
        const sum = sums[m]!.fill(0);
        for (let c = 0; c < cells; c++) {
          sum[margin.category[c]!]! += (final[c]! * cellSums.sums[c * slots + s]! - respondents[c]! * d[c]!) / step[c]!;
        }
        const size = sizes[m]!;
        for (let c = 0; c < cells; c++) {
          const k = margin.category[c]!;
          d[c]! += (step[c]! * sum[k]!) / size[k]!;
        }
      });
    }
  }
  return out;
}
