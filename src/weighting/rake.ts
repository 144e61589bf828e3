import { type CellProblem, type CellSolution, marginTotals } from './cells.js';

export interface RakeOptions {
  /**
   * Convergence threshold as in R's survey::rake(): below 1 it is a fraction of the sum of
   * the base weights, from 1 up an absolute weighted count.
   */
  epsilon: number;
  /** Most full passes over the margins (R's `maxit`). */
  maxIterations: number;
}

/**
 * Iterative proportional fitting as R's survey::rake() does it: each pass post-stratifies
 * on every margin in turn (factor *= target / current total); after a pass, the weighted
 * count of every cell (the joint table of all target variables) is compared with the one
 * before the pass, and the fit has converged once no cell moved by `epsilon` or more.
 * `iterations` counts passes, the converging one included.
 */
export function rake(problem: CellProblem, options: RakeOptions): CellSolution {
  const { base, margins } = problem;
  const cells = base.length;
  const factor = new Float64Array(cells).fill(1);
  let sumBase = 0;
  for (let cell = 0; cell < cells; cell++) sumBase += base[cell]!;
  const epsilon = options.epsilon < 1 ? options.epsilon * sumBase : options.epsilon;
  const previous = Float64Array.from(base);
  let passes = 0;
  const steps = margins.map(() => new Float64Array(cells));
  while (passes < options.maxIterations) {
    margins.forEach((margin, m) => {
      postStratifyInPlace(base, factor, margin.category, margin.targets);
      steps[m]!.set(factor);
    });
    passes++;
    let delta = 0;
    for (let cell = 0; cell < cells; cell++) {
      const now = base[cell]! * factor[cell]!;
      delta = Math.max(delta, Math.abs(previous[cell]! - now));
      previous[cell] = now;
    }
    if (delta < epsilon) return { factor, iterations: passes, converged: true, steps };
  }
  return { factor, iterations: passes, converged: false, steps };
}

/**
 * Post-stratification (R's survey::postStratify()): one margin, each cell's weight scaled by
 * its category's target over its category's weighted total.
 */
export function postStratify(problem: CellProblem): CellSolution {
  const factor = new Float64Array(problem.base.length).fill(1);
  for (const margin of problem.margins) postStratifyInPlace(problem.base, factor, margin.category, margin.targets);
  return { factor, iterations: 1, converged: true };
}

function postStratifyInPlace(base: Float64Array, factor: Float64Array, category: Int32Array, targets: Float64Array): void {
  const totals = marginTotals(base, factor, { category, targets });
  const scale = new Float64Array(targets.length);
  for (let k = 0; k < targets.length; k++) scale[k] = targets[k]! / totals[k]!;
  for (let cell = 0; cell < base.length; cell++) factor[cell]! *= scale[category[cell]!]!;
}
