// Respondents in weight order: a stable sort by weight (ties in input order), and the sorted
// weights as runs that give the same bytes as gathering them row by row (-0 kept apart).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { weightOrder } from '../src/dataset/build/weight-order.js';

/** The obviously correct order: rows sorted by weight, then by row. */
function reference(weights: number[]): number[] {
  return weights.map((_, row) => row).sort((a, b) => weights[a]! - weights[b]! || a - b);
}

describe('weightOrder', () => {
  /** Checks weightOrder of `weights` against the reference: order, inverse, runs to the bit (none with a -0). */
  const check = (weights: number[]) => {
    const values = Float64Array.from(weights);
    const { order, respondentOf, runs } = weightOrder(values, values.length);
    expect(Array.from(order)).toEqual(reference(weights));
    // Its inverse: the respondent each input row is stored as.
    expect(Array.from(order, (row) => respondentOf[row])).toEqual(Array.from(order, (_, respondent) => respondent));
    const gathered = Float64Array.from(order, (row) => values[row]!);
    const hasNegativeZero = weights.some((w) => Object.is(w, -0));
    expect(runs === undefined).toBe(hasNegativeZero);
    if (runs !== undefined) {
      const filled = new Float64Array(values.length);
      runs.weights.forEach((w, k) => filled.fill(w, runs.starts[k], runs.starts[k + 1]));
      expect(runs.starts[runs.weights.length]).toBe(values.length);
      expect(Buffer.from(filled.buffer).equals(Buffer.from(gathered.buffer))).toBe(true);
    }
  };

  it('sorts rows by weight, ties in input order, and its runs are the sorted weights to the bit', () => {
    const weight = fc.oneof(fc.integer({ min: 0, max: 30 }), fc.constantFrom(0, -0, 0.5, 1e-300, 2 ** 53, 1.1), fc.double({ min: 0, max: 1e6, noNaN: true }));
    fc.assert(fc.property(fc.array(weight, { maxLength: 400 }), check), { numRuns: 500 });
  });

  it('the same when every weight is a small integer (counted by value), -0 and the largest counted integer among them', () => {
    const weight = fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 5 }), fc.constantFrom(-0, 2 ** 20 - 1, 2 ** 20));
    fc.assert(fc.property(fc.array(weight, { maxLength: 400 }), check), { numRuns: 500 });
  });

  it('sorts by comparison past 2^20 distinct weights, with the same order and its inverse', () => {
    const rows = 2 ** 20 + 100;
    // Distinct weights in a scrambled order, and some ties at the end.
    const values = Float64Array.from({ length: rows }, (_, row) => (row < rows - 50 ? ((row * 7919) % rows) / 4 : 3));
    const { order, respondentOf, runs } = weightOrder(values, rows);
    expect(runs).toBeUndefined();
    let unordered = 0;
    let notInverse = 0;
    for (let respondent = 0; respondent < rows; respondent++) {
      const [a, b] = [order[respondent - 1]!, order[respondent]!];
      if (respondent > 0 && !(values[a]! < values[b]! || (values[a] === values[b] && a < b))) unordered++;
      if (respondentOf[b] !== respondent) notInverse++;
    }
    expect({ unordered, notInverse }).toEqual({ unordered: 0, notInverse: 0 });
  });

  it('keeps input order without a weight, filling the arrays it is given', () => {
    const given = new Uint32Array(5).fill(9);
    const inverse = new Uint32Array(5).fill(9);
    const { order, respondentOf, runs } = weightOrder(undefined, 5, given, inverse);
    expect(order).toBe(given);
    expect(respondentOf).toBe(inverse);
    expect(Array.from(order)).toEqual([0, 1, 2, 3, 4]);
    expect(Array.from(respondentOf)).toEqual([0, 1, 2, 3, 4]);
    expect(runs).toBeUndefined();
  });
});
