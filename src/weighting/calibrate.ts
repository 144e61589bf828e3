import { type Bounds, calibrationFunction, type CalibrationFunction } from './calibration-functions.js';
import type { CellProblem, CellSolution } from './cells.js';
import { pseudoInverse } from './pseudo-inverse.js';

export interface CalibrateOptions {
  calfun: CalibrationFunction['name'];
  /** Bounds on g = new weight / base weight (R's `bounds`); logit needs finite ones. */
  bounds: Bounds;
  /** Largest |misfit| / (1 + |target|) accepted, per calibration total (R's `epsilon`, default 1e-7). */
  epsilon: number;
  /** R's `maxit` (default 50). */
  maxIterations: number;
}

/** R's grake(): when every target is over this many times its base total, weights are rescaled first. */
const RESCALE_THRESHOLD = 20;

/**
 * Calibration as R's survey::calibrate() does it on categorical targets. The model matrix
 * has an intercept and one indicator per category but the first of every margin (R's
 * treatment contrasts); the intercept's total is the first margin's sum. Linear
 * calibration without bounds is R's regcalibrate(), one solve; every other case is R's
 * grake(): Newton steps on the calibration equations with MASS::ginv() of the Jacobian,
 * step halving while a weight is not finite, and the same convergence test, rescaling and
 * iteration count.
 */
export function calibrate(problem: CellProblem, options: CalibrateOptions): CellSolution {
  const design = designOf(problem);
  if (options.calfun === 'linear' && options.bounds.lower === -Infinity && options.bounds.upper === Infinity) return regression(design);
  return newton(design, calibrationFunction(options.calfun, options.bounds), options);
}

/** The calibration problem in R's terms: per cell its active columns, and the population totals. */
interface Design {
  weights: Float64Array;
  /** Per cell, the model-matrix columns that are 1 (the intercept first). */
  columns: Int32Array[];
  population: Float64Array;
}

function designOf({ base, margins }: CellProblem): Design {
  const population: number[] = [margins[0]!.targets.reduce((sum, total) => sum + total, 0)];
  const offsets = margins.map((margin) => {
    const offset = population.length - 1;
    for (let k = 1; k < margin.targets.length; k++) population.push(margin.targets[k]!);
    return offset;
  });
  const columns = Array.from(base, (_, cell) => {
    const active = [0];
    margins.forEach((margin, m) => {
      const category = margin.category[cell]!;
      if (category > 0) active.push(offsets[m]! + category);
    });
    return Int32Array.from(active);
  });
  return { weights: base, columns, population: Float64Array.from(population) };
}

function sampleTotals(design: Design, weights: Float64Array, perCell: (cell: number) => number = () => 1): Float64Array {
  const totals = new Float64Array(design.population.length);
  design.columns.forEach((active, cell) => {
    const value = weights[cell]! * perCell(cell);
    for (const column of active) totals[column]! += value;
  });
  return totals;
}

function linearPredictor(design: Design, eta: Float64Array): Float64Array {
  return Float64Array.from(design.columns, (active) => {
    let sum = 0;
    for (const column of active) sum += eta[column]!;
    return sum;
  });
}

function crossProduct(design: Design, perCell: (cell: number) => number): Float64Array {
  const p = design.population.length;
  const matrix = new Float64Array(p * p);
  design.columns.forEach((active, cell) => {
    const value = perCell(cell);
    for (const i of active) for (const j of active) matrix[i * p + j]! += value;
  });
  return matrix;
}

function multiply(matrix: Float64Array, vector: Float64Array): Float64Array {
  const p = vector.length;
  const out = new Float64Array(p);
  for (let i = 0; i < p; i++) {
    let sum = 0;
    for (let j = 0; j < p; j++) sum += matrix[i * p + j]! * vector[j]!;
    out[i] = sum;
  }
  return out;
}

/** R's regcalibrate(): g = 1 + x'T⁻¹(population - sample totals), T = Σ w x x'. */
function regression(design: Design): CellSolution {
  const { weights, population } = design;
  const sample = sampleTotals(design, weights);
  const matrix = crossProduct(design, (cell) => weights[cell]!);
  const lambda = multiply(pseudoInverse(matrix, population.length), population.map((total, j) => total - sample[j]!));
  const xeta = linearPredictor(design, lambda);
  return { factor: xeta.map((u) => 1 + u), iterations: 1, converged: true };
}

function newton(design: Design, calfun: CalibrationFunction, options: CalibrateOptions): CellSolution {
  const { population } = design;
  const p = population.length;
  let weights = design.weights;
  let sample = sampleTotals(design, weights);
  let eta = new Float64Array(p);
  let xeta = linearPredictor(design, eta);
  let g = xeta.map((u) => 1 + calfun.adjust(u));
  let deriv = xeta.map((u) => calfun.derivative(u));
  let iter = 1;
  let scale: number | undefined;
  const scales = population.map((total, j) => total / sample[j]!);
  if (Math.min(...scales) > RESCALE_THRESHOLD) {
    scale = scales.reduce((sum, s) => sum + s, 0) / p;
    weights = weights.map((w) => w * scale!);
    sample = sample.map((total) => total * scale!);
  }
  const misfitOf = (): Float64Array => {
    const fitted = sampleTotals(design, weights, (cell) => calfun.adjust(xeta[cell]!));
    return population.map((total, j) => total - sample[j]! - fitted[j]!);
  };
  const step = () => {
    xeta = linearPredictor(design, eta);
    g = xeta.map((u) => 1 + calfun.adjust(u));
    deriv = xeta.map((u) => calfun.derivative(u));
  };
  let converged = false;
  for (;;) {
    const jacobian = crossProduct(design, (cell) => weights[cell]! * deriv[cell]!);
    let deta = multiply(pseudoInverse(jacobian, p), misfitOf());
    eta = eta.map((value, j) => value + deta[j]!);
    step();
    while (iter < options.maxIterations && (g.some((value) => !Number.isFinite(value)) || deriv.some((value) => !Number.isFinite(value)))) {
      iter++;
      deta = deta.map((value) => value / 2);
      eta = eta.map((value, j) => value - deta[j]!);
      step();
    }
    const misfit = misfitOf();
    if (misfit.every((value, j) => Math.abs(value) / (1 + Math.abs(population[j]!)) < options.epsilon)) {
      converged = true;
      break;
    }
    iter++;
    if (iter > options.maxIterations) break;
  }
  if (scale !== undefined) g = g.map((value) => value * scale!);
  return { factor: g, iterations: iter, converged };
}
