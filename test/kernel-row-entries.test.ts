// rowEntries + cellsTileEntries (sparse table rows as entries) against cellDense (the dense
// walk of the weight runs): the same counts, and sums equal to 1e-12 relative, on weight
// vectors that make every kind of run (equal weights over many words, mixed words split
// into segments, words walked bit by bit), rows of every density and spans of several
// chunks; a row with more entries than the room given is refused (-1), not cut short.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bitsetWords } from '../src/kernel/exports.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';

const kernel = mainThreadKernel();
const close = (a: number, b: number) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b));

describe('cellsTileEntries = cellDense per cell', () => {
  it('on random weights, rows and columns', () => {
    fc.assert(
      fc.property(
        // Up to 3 chunks of words, so entries of several chunks and empty chunks occur.
        fc.integer({ min: 1, max: 3 * 2048 * 64 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer(),
        (respondents, nRows, nColumns, seed) => {
          let state = seed >>> 0 || 1;
          const random = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32);
          const { memory, layout } = kernel;
          const words = bitsetWords(respondents);
          const weights = memory.alloc(words * 64 * 8);
          const w = memory.f64(weights, words * 64);
          for (let r = 0; r < respondents; ) {
            const kind = Math.floor(random() * 3);
            const length = Math.min(respondents - r, 1 + Math.floor(random() * (kind === 0 ? 20000 : 300)));
            const one = 0.5 + random() * 3;
            for (let i = 0; i < length; i++) w[r + i] = kind === 0 ? one : kind === 1 ? [1, 2.5, 7][Math.floor(random() * 3)]! : random() * 1000;
            r += length;
          }
          const runs = kernel.weightRuns(weights, words, respondents);
          const owned: Array<[number, number]> = [];
          const alloc = (bytes: number) => {
            const ptr = memory.alloc(bytes);
            owned.push([ptr, bytes]);
            return ptr;
          };
          const bitset = (density: number) => {
            const ptr = alloc(words * 8);
            const bits = new Uint32Array(memory.memory.buffer, ptr, words * 2);
            for (let r = 0; r < respondents; r++) if (random() < density) bits[r >>> 5]! |= 1 << (r & 31);
            return ptr;
          };
          try {
            const rows = Array.from({ length: nRows }, () => bitset([0, 0.0005, 0.01, 0.2, 1][Math.floor(random() * 5)]!));
            const columns = Array.from({ length: nColumns }, () => bitset([0, 0.01, 0.3, 0.9, 1][Math.floor(random() * 5)]!));
            const nChunks = Math.ceil(words / layout.chunkWords);
            const entryPtrs = alloc(nRows * 4);
            const chunkPtrs = alloc(nRows * 4);
            rows.forEach((row, r) => {
              const set = kernel.exports.popcount(row, words);
              const out = alloc(Math.max(1, set) * layout.rowEntryBytes);
              const chunks = alloc((nChunks + 1) * 4);
              const n = kernel.exports.rowEntries(row, weights, runs.runs, runs.nRuns, words, out, set, chunks);
              expect(n).toBeGreaterThanOrEqual(0);
              expect(n).toBeLessThanOrEqual(set);
              // One entry fewer than the row needs: refused, whatever it wrote.
              if (n > 0) expect(kernel.exports.rowEntries(row, weights, runs.runs, runs.nRuns, words, out, n - 1, chunks)).toBe(-1);
              expect(kernel.exports.rowEntries(row, weights, runs.runs, runs.nRuns, words, out, set, chunks)).toBe(n);
              new Uint32Array(memory.memory.buffer, entryPtrs, nRows)[r] = out;
              new Uint32Array(memory.memory.buffer, chunkPtrs, nRows)[r] = chunks;
            });
            const columnPtrs = alloc(nColumns * 4);
            new Uint32Array(memory.memory.buffer, columnPtrs, nColumns).set(columns);
            const acc = alloc(nRows * nColumns * layout.cellBytes);
            memory.f64(acc, nRows * nColumns * 3).fill(0);
            kernel.exports.cellsTileEntries(entryPtrs, chunkPtrs, nRows, columnPtrs, nColumns, words, acc);
            const cells = memory.f64(acc, nRows * nColumns * 3);
            const vector = { ptr: weights, runs: runs.runs, nRuns: runs.nRuns, exactSums: false };
            rows.forEach((row, r) => columns.forEach((column, c) => {
              const want = kernel.cellDense(row, column, vector, words);
              const at = (r * nColumns + c) * 3;
              expect(cells[at + 2]).toBe(want.respondents);
              expect(close(cells[at]!, want.weighted)).toBe(true);
              expect(close(cells[at + 1]!, want.sumSqWeights)).toBe(true);
            }));
          } finally {
            for (const [ptr, bytes] of owned) memory.release(ptr, bytes);
            memory.release(runs.runs, runs.bytes);
            memory.release(weights, words * 64 * 8);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
