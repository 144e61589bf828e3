// The group-by pass cut into tasks, on the kernel: by base word ranges run one after the
// other into one grid (inline slices) and by grid row ranges (pool tasks), each equal to
// one pass over every word and row to the last bit, with fractional weights (where adding
// the same weights in another order can change the last bit), u8, u16 and u32 index
// columns, values off the axes and blanks, the one pass also against a grid added up here
// respondent by respondent; row-range tasks send other rows' respondents to their own
// scratch cells, never into the grid.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bitsetWords } from '../src/kernel/exports.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { type GroupByPass, groupByTask, rowRanges, SCRATCH_STRIDE, wordRanges } from '../src/query/plans/group-by.js';

const kernel = mainThreadKernel();
const memory = kernel.memory;

/** A random pass over `respondents`: base, two index columns, rank -> position maps, weights. */
function randomPass(respondents: number, nRows: number, nColumns: number, widthA: number, widthB: number, random: () => number) {
  const words = bitsetWords(respondents);
  const taken: Array<[number, number]> = [];
  const alloc = (bytes: number) => {
    const ptr = memory.alloc(bytes);
    taken.push([ptr, bytes]);
    return ptr;
  };
  const base = alloc(words * 8);
  const bits = new Uint32Array(memory.memory.buffer, base, words * 2);
  let inBase = 0;
  for (let r = 0; r < respondents; r++) if (random() < 0.6) (bits[r >>> 5]! |= 1 << (r & 31)), inBase++;
  const cellBytes = kernel.layout.cellBytes;
  const rowBytes = (nColumns + 1) * cellBytes;
  // Ranks 0 (blank) to n + 2: some respondents hold a value off the axis. Rank position + 1
  // is on the axis at `position`; the map holds its byte offset (position x stride), the
  // extra row or column's (n x stride) for the others.
  const column = (width: number, n: number, stride: number) => {
    const ptr = alloc(words * 64 * width);
    const buffer = memory.memory.buffer;
    const view = width === 1 ? new Uint8Array(buffer, ptr, words * 64) : width === 2 ? new Uint16Array(buffer, ptr, words * 64) : new Uint32Array(buffer, ptr, words * 64);
    const positions: number[] = [];
    for (let r = 0; r < respondents; r++) {
      view[r] = Math.floor(random() * (n + 3));
      positions.push(view[r]! >= 1 && view[r]! <= n ? view[r]! - 1 : n);
    }
    const map = alloc((n + 3) * 4);
    const offsets = new Uint32Array(memory.memory.buffer, map, n + 3).fill(n * stride);
    for (let position = 0; position < n; position++) offsets[position + 1] = position * stride;
    return { index: { ptr, width }, map, positions };
  };
  const a = column(widthA, nRows, rowBytes);
  const b = column(widthB, nColumns, cellBytes);
  const weights = alloc(words * 64 * 8);
  const w = memory.f64(weights, words * 64);
  for (let r = 0; r < respondents; r++) w[r] = random() * 1000 + 0.1;
  const gridBytes = (nRows + 1) * rowBytes;
  // The grid computed here, respondent by respondent in order: (Σw, Σw², n) per cell.
  const expected = new Float64Array(gridBytes / 8);
  for (let r = 0; r < respondents; r++) {
    if ((bits[r >>> 5]! & (1 << (r & 31))) === 0) continue;
    const at = (a.positions[r]! * (nColumns + 1) + b.positions[r]!) * 3;
    expected[at]! += w[r]!;
    expected[at + 1]! += w[r]! * w[r]!;
    expected[at + 2]! += 1;
  }
  const pass = (tasks: number): GroupByPass => ({ base, a: a.index, offsetsA: a.map, b: b.index, offsetsB: b.map, rowBytes, weights, grid: alloc(gridBytes), scratch: alloc(tasks * SCRATCH_STRIDE) });
  const grid = (p: GroupByPass) => [...memory.f64(p.grid, gridBytes / 8)];
  const release = () => taken.forEach(([ptr, bytes]) => memory.release(ptr, bytes));
  return { words, inBase, pass, grid, expected, release };
}

describe('group-by tasks', () => {
  it('word slices in order and row ranges each equal one pass, to the last bit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom(1, 2, 4),
        fc.constantFrom(1, 2, 4),
        fc.integer(),
        (respondents, nRows, nColumns, parts, widthA, widthB, seed) => {
          let state = seed >>> 0 || 1;
          const random = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32);
          const data = randomPass(respondents, nRows, nColumns, widthA, widthB, random);
          try {
            const one = data.pass(1);
            kernel.runTask(groupByTask(one, 0, 0, data.words));
            const slices = wordRanges(data.words, parts);
            expect(slices.length).toBeLessThanOrEqual(parts);
            const sliced = data.pass(slices.length);
            slices.forEach(({ from, to }, i) => kernel.runTask(groupByTask(sliced, i, from, to)));
            const rowSplit = rowRanges(Array.from({ length: nRows + 1 }, () => 1), parts);
            const byRows = data.pass(rowSplit.length);
            // Each row-range task adds only its rows' respondents into the grid: together, each base respondent once.
            const placed = rowSplit.map((rows, i) => kernel.runTask(groupByTask(byRows, i, 0, data.words, rows)));
            expect(placed.reduce((sum, n) => sum + n, 0)).toBe(data.inBase);
            const want = data.grid(one);
            expect(want).toEqual([...data.expected]);
            // Every respondent of the base is in one cell (the grid's cells hold Σw, Σw², n).
            expect(want.filter((_, i) => i % (kernel.layout.cellBytes / 8) === 2).reduce((sum, n) => sum + n, 0)).toBe(data.inBase);
            expect(data.grid(sliced)).toEqual(want);
            expect(data.grid(byRows)).toEqual(want);
          } finally {
            data.release();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('word ranges are consecutive, cover every word once and come in order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 1, max: 64 }), (words, parts) => {
        const ranges = wordRanges(words, parts);
        expect(ranges[0]!.from).toBe(0);
        expect(ranges.at(-1)!.to).toBe(words);
        ranges.forEach((range, i) => {
          if (i > 0) expect(range.from).toBe(ranges[i - 1]!.to);
          if (words > 0) expect(range.to).toBeGreaterThan(range.from);
        });
        expect(ranges.length).toBeLessThanOrEqual(Math.max(1, parts));
      }),
    );
  });
});
