import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { calibrate, type CellProblem, marginTotals, postStratify, rake, trimWeights } from '../../src/weighting/index.js';

/**
 * Properties of the weighting algorithms on random cell problems: a converged fit meets
 * every target; logit calibration keeps g inside its bounds; trimming keeps the total.
 */

/** Random cells over two or three variables, every category with weight, and consistent targets. */
const problems = fc
  .record({
    sizes: fc.array(fc.integer({ min: 2, max: 5 }), { minLength: 2, maxLength: 3 }),
    seed: fc.integer({ min: 1, max: 2 ** 30 }),
    cells: fc.integer({ min: 1, max: 4 }),
  })
  .map(({ sizes, seed, cells }) => {
    let state = seed;
    const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    // Every combination once (so every category has respondents), some more than once.
    const combos: number[][] = [];
    const walk = (prefix: number[]): void => {
      if (prefix.length === sizes.length) combos.push(prefix);
      else for (let k = 0; k < sizes[prefix.length]!; k++) walk([...prefix, k]);
    };
    walk([]);
    for (let extra = 0; extra < cells; extra++) combos.push(combos[Math.floor(random() * combos.length)]!);
    const base = Float64Array.from(combos, () => 0.5 + 2 * random());
    const total = base.reduce((a, b) => a + b, 0);
    const problem: CellProblem = {
      base,
      margins: sizes.map((size, m) => {
        const raw = Array.from({ length: size }, () => 0.6 + random());
        const sum = raw.reduce((a, b) => a + b, 0);
        return { category: Int32Array.from(combos, (combo) => combo[m]!), targets: Float64Array.from(raw, (r) => (r / sum) * total * 1.1) };
      }),
    };
    return problem;
  });

const meets = (problem: CellProblem, factor: Float64Array, tolerance: number) => {
  for (const margin of problem.margins) {
    const totals = marginTotals(problem.base, factor, margin);
    totals.forEach((total, k) => expect(Math.abs(total - margin.targets[k]!) / margin.targets[k]!).toBeLessThan(tolerance));
  }
};

describe('weighting algorithms', () => {
  it('rake meets every margin once converged', () => {
    fc.assert(fc.property(problems, (problem) => {
      const solution = rake(problem, { epsilon: 1e-12, maxIterations: 2000 });
      expect(solution.converged).toBe(true);
      meets(problem, solution.factor, 1e-8);
    }), { numRuns: 60 });
  });

  it('linear and raking calibration meet every margin; logit keeps g inside its bounds', () => {
    fc.assert(fc.property(problems, (problem) => {
      const linear = calibrate(problem, { calfun: 'linear', bounds: { lower: -Infinity, upper: Infinity }, epsilon: 1e-10, maxIterations: 50 });
      meets(problem, linear.factor, 1e-9);
      const raking = calibrate(problem, { calfun: 'raking', bounds: { lower: -Infinity, upper: Infinity }, epsilon: 1e-10, maxIterations: 100 });
      expect(raking.converged).toBe(true);
      meets(problem, raking.factor, 1e-8);
      const logit = calibrate(problem, { calfun: 'logit', bounds: { lower: 0.3, upper: 4 }, epsilon: 1e-10, maxIterations: 100 });
      if (logit.converged) {
        meets(problem, logit.factor, 1e-8);
        logit.factor.forEach((g) => expect(g > 0.3 && g < 4).toBe(true));
      }
    }), { numRuns: 60 });
  });

  it('post-stratification on one margin meets it in one step', () => {
    fc.assert(fc.property(problems, (problem) => {
      const one = { base: problem.base, margins: [problem.margins[0]!] };
      const solution = postStratify(one);
      expect(solution.iterations).toBe(1);
      meets(one, solution.factor, 1e-12);
    }), { numRuns: 60 });
  });

  it('trimming keeps the total and moves only weights outside the bounds', () => {
    fc.assert(fc.property(fc.array(fc.double({ min: 0.01, max: 100, noNaN: true }), { minLength: 3, maxLength: 200 }), (values) => {
      const weights = Float64Array.from(values);
      const before = weights.reduce((a, b) => a + b, 0);
      const trimmed = trimWeights(weights, 1, 50);
      expect(trimmed).toBe(values.filter((v) => v < 1 || v > 50).length);
      if (trimmed < values.length) expect(Math.abs(weights.reduce((a, b) => a + b, 0) - before) / before).toBeLessThan(1e-12);
    }), { numRuns: 100 });
  });
});
