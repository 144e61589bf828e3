// cellsDense (a crosstab's base and target cells in one walk of the weight runs) against
// cellDense (one walk per cell): the same count, sum and sum of squares to the last bit, on
// weight vectors that make every kind of run (equal weights over many words, mixed words
// split into segments, words walked bit by bit) and bitsets of every density.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bitsetWords } from '../src/kernel/exports.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';

const kernel = mainThreadKernel();

describe('cellsDense = cellDense per cell', () => {
  it('on random weights and bitsets', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3000 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer(),
        (respondents, targets, seed) => {
          let state = seed >>> 0 || 1;
          const random = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32);
          const words = bitsetWords(respondents);
          const memory = kernel.memory;
          const weights = memory.alloc(words * 64 * 8);
          // Stretches of one weight, of a few weights, and of all-different weights.
          const w = memory.f64(weights, words * 64);
          let row = 0;
          while (row < respondents) {
            const kind = Math.floor(random() * 3);
            const length = Math.min(respondents - row, 1 + Math.floor(random() * 300));
            const one = 0.5 + random() * 3;
            for (let i = 0; i < length; i++) w[row + i] = kind === 0 ? one : kind === 1 ? [1, 2.5, 7][Math.floor(random() * 3)]! : random() * 1000;
            row += length;
          }
          const runs = kernel.weightRuns(weights, words, respondents);
          const vector = { ptr: weights, runs: runs.runs, nRuns: runs.nRuns, exactSums: false };
          const bitset = (density: number) => {
            const ptr = memory.alloc(words * 8);
            const bits = new Uint32Array(memory.memory.buffer, ptr, words * 2);
            for (let r = 0; r < respondents; r++) if (random() < density) bits[r >>> 5]! |= 1 << (r & 31);
            return ptr;
          };
          const base = bitset(0.2 + random() * 0.8);
          const others = Array.from({ length: targets }, () => bitset([0, 0.01, 0.3, 0.9, 1][Math.floor(random() * 5)]!));
          const bs = [base, ...others];
          try {
            const fused = kernel.cellsDense(base, bs, vector, words);
            const each = bs.map((b) => kernel.cellDense(base, b, vector, words));
            expect(fused.length).toBe(each.length);
            fused.forEach((cell, j) => {
              expect(cell.respondents).toBe(each[j]!.respondents);
              expect(Object.is(cell.weighted, each[j]!.weighted)).toBe(true);
              expect(Object.is(cell.sumSqWeights, each[j]!.sumSqWeights)).toBe(true);
            });
          } finally {
            for (const b of bs) memory.release(b, words * 8);
            memory.release(runs.runs, runs.bytes);
            memory.release(weights, words * 64 * 8);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
