// cellsTile walks the weight runs for two rows at a time (addRunsPair): each cell must equal,
// to the last bit, the cell of a tile of that one row (addRuns), on weight vectors that make
// every kind of run and rows of every density, with odd and even row counts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bitsetWords } from '../src/kernel/exports.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';

const kernel = mainThreadKernel();

describe('cellsTile over row pairs = cellsTile one row at a time', () => {
  it('on random weights, rows and columns', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 * 2048 * 64 }), fc.integer({ min: 2, max: 5 }), fc.integer({ min: 1, max: 3 }), fc.integer(), (respondents, nRows, nColumns, seed) => {
        let state = seed >>> 0 || 1;
        const random = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32);
        const { memory, layout } = kernel;
        const words = bitsetWords(respondents);
        const owned: Array<[number, number]> = [];
        const alloc = (bytes: number) => {
          const ptr = memory.alloc(bytes);
          owned.push([ptr, bytes]);
          return ptr;
        };
        const weights = alloc(words * 64 * 8);
        const w = memory.f64(weights, words * 64);
        for (let r = 0; r < respondents; ) {
          const kind = Math.floor(random() * 3);
          const length = Math.min(respondents - r, 1 + Math.floor(random() * (kind === 0 ? 20000 : 300)));
          const one = 0.5 + random() * 3;
          for (let i = 0; i < length; i++) w[r + i] = kind === 0 ? one : kind === 1 ? [1, 2.5, 7][Math.floor(random() * 3)]! : random() * 1000;
          r += length;
        }
        const runs = kernel.weightRuns(weights, words, respondents);
        const bitset = (density: number) => {
          const ptr = alloc(words * 8);
          const bits = new Uint32Array(memory.memory.buffer, ptr, words * 2);
          for (let r = 0; r < respondents; r++) if (random() < density) bits[r >>> 5]! |= 1 << (r & 31);
          return ptr;
        };
        try {
          const rows = Array.from({ length: nRows }, () => bitset([0, 0.01, 0.3, 0.9, 1][Math.floor(random() * 5)]!));
          const columns = Array.from({ length: nColumns }, () => bitset([0, 0.01, 0.3, 0.9, 1][Math.floor(random() * 5)]!));
          const rowPtrs = alloc(nRows * 4);
          const columnPtrs = alloc(nColumns * 4);
          new Uint32Array(memory.memory.buffer, rowPtrs, nRows).set(rows);
          new Uint32Array(memory.memory.buffer, columnPtrs, nColumns).set(columns);
          const tile = alloc(nRows * nColumns * layout.cellBytes);
          const one = alloc(nColumns * layout.cellBytes);
          kernel.exports.cellsTile(rowPtrs, nRows, columnPtrs, nColumns, weights, runs.runs, runs.nRuns, words, tile);
          const cells = memory.f64(tile, nRows * nColumns * 3).slice();
          for (let r = 0; r < nRows; r++) {
            memory.f64(one, nColumns * 3).fill(0);
            kernel.exports.cellsTile(rowPtrs + r * 4, 1, columnPtrs, nColumns, weights, runs.runs, runs.nRuns, words, one);
            const single = memory.f64(one, nColumns * 3);
            for (let i = 0; i < nColumns * 3; i++) expect(Object.is(cells[r * nColumns * 3 + i], single[i])).toBe(true);
          }
        } finally {
          for (const [ptr, bytes] of owned) memory.release(ptr, bytes);
          memory.release(runs.runs, runs.bytes);
        }
      }),
      { numRuns: 40 },
    );
  });
});
