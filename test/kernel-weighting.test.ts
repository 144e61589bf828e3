// The weighting walks in the kernel (assembly/weighting.ts, driven by RespondentWalk) against
// a plain JavaScript walk written here: fine cells numbered in order of first appearance,
// their base totals, per value the respondents, sums, min and max, the weights' spread, the
// new weights and their totals per cell, all to the last bit. Random data of odd sizes, blanks
// (rank 0), values no respondent has, u8 / u16 / u32 index columns, more respondents than a
// block (64Ki), more cells than the first records' room, and keys past the direct table (Map).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RankColumn } from '../src/dataset/file/respondent-columns.js';
import type { StoredVariable } from '../src/dataset/format.js';
import { CELL_BLOCK, RespondentWalk } from '../src/facade/weight-cells.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';

const kernel = mainThreadKernel();

interface Shape {
  respondents: number;
  /** Per variable: its values (ranks 1..values, 0 = blank). */
  values: number[];
  seed: number;
  trim?: [number, number];
}

/** The reference: one respondent at a time, keys as strings. */
function reference(columns: number[][], base: Float64Array, factorOf: (cell: number) => number, trim: [number, number] | undefined) {
  const n = base.length;
  const cellOfKey = new Map<string, number>();
  const cellOf = new Int32Array(n);
  const cellBase: number[] = [];
  const cellRespondents: number[] = [];
  const cellFirst: number[] = [];
  for (let r = 0; r < n; r++) {
    const key = columns.map((column) => column[r]).join(',');
    let cell = cellOfKey.get(key);
    if (cell === undefined) {
      cellOfKey.set(key, (cell = cellBase.length));
      cellBase.push(0);
      cellRespondents.push(0);
      cellFirst.push(r);
    }
    cellOf[r] = cell;
    cellBase[cell]! += base[r]!;
    cellRespondents[cell]!++;
  }
  const sums = (weights: Float64Array) => {
    const variables = columns.map((column, v) => {
      const size = column.reduce((largest, rank) => Math.max(largest, rank), 0) + 1;
      const respondents = new Float64Array(size);
      const sum = new Float64Array(size);
      const min = new Float64Array(size).fill(Infinity);
      const max = new Float64Array(size).fill(-Infinity);
      for (let r = 0; r < n; r++) {
        const rank = column[r]!;
        respondents[rank]!++;
        sum[rank]! += weights[r]!;
        if (weights[r]! < min[rank]!) min[rank] = weights[r]!;
        if (weights[r]! > max[rank]!) max[rank] = weights[r]!;
      }
      return { v, respondents, sum, min, max };
    });
    let total = 0;
    let squares = 0;
    let min = Infinity;
    let max = -Infinity;
    for (let r = 0; r < n; r++) {
      total += weights[r]!;
      squares += weights[r]! * weights[r]!;
      if (weights[r]! < min) min = weights[r]!;
      if (weights[r]! > max) max = weights[r]!;
    }
    return { variables, total, squares, min, max };
  };
  const baseSums = sums(base);
  const weights = Float64Array.from(base, (w, r) => w * factorOf(cellOf[r]!));
  let trimmed = 0;
  if (trim !== undefined) {
    // R's trimWeights(): weights outside the bounds set to them, the amount trimmed shared equally by the others.
    const outside = Array.from(weights, (w) => w < trim[0] || w > trim[1]);
    let trimmings = 0;
    weights.forEach((w, r) => {
      if (!outside[r]) return;
      const bounded = Math.max(trim[0], Math.min(w, trim[1]));
      trimmings += w - bounded;
      weights[r] = bounded;
      trimmed++;
    });
    if (trimmed > 0 && trimmed < n) weights.forEach((_, r) => (weights[r]! += outside[r] ? 0 : trimmings / (n - trimmed)));
  }
  const totals = new Float64Array(cellBase.length);
  for (let r = 0; r < n; r++) totals[cellOf[r]!]! += weights[r]!;
  const ranks = columns.map((column) => cellFirst.map((r) => column[r]!));
  return { cellBase, cellRespondents, ranks, baseSums, weights, totals, trimmed, newSums: sums(weights) };
}

function same(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string): void {
  expect(actual.length, what).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    if (!Object.is(actual[i], expected[i])) expect(`${what}[${i}] = ${actual[i]}`).toBe(`${what}[${i}] = ${expected[i]}`);
  }
}

function check({ respondents: n, values, seed, trim }: Shape): void {
  let state = seed >>> 0 || 1;
  const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const words = Math.ceil(n / 128) * 2;
  const regions: Array<{ ptr: number; bytes: number }> = [];
  const alloc = (bytes: number) => {
    const ptr = kernel.memory.alloc(Math.max(bytes, 8));
    regions.push({ ptr, bytes: Math.max(bytes, 8) });
    return ptr;
  };
  try {
    // Index columns in kernel memory, padded to whole words as a dataset's are; some values never used.
    const ranks = values.map((count) => {
      const used = Math.max(1, Math.floor(count * (0.5 + random() / 2)));
      const blanks = random() < 0.5 ? 0 : random() * 0.2;
      return Array.from({ length: n }, () => (random() < blanks ? 0 : 1 + Math.floor(random() * used)));
    });
    const columns: RankColumn[] = values.map((count, v) => {
      const width = count < 256 ? 1 : count < 65536 ? 2 : 4;
      const ptr = alloc(words * 64 * width);
      const column = width === 1 ? new Uint8Array(kernel.memory.memory.buffer, ptr, n) : width === 2 ? new Uint16Array(kernel.memory.memory.buffer, ptr, n) : new Uint32Array(kernel.memory.memory.buffer, ptr, n);
      column.set(ranks[v]!);
      return column;
    });
    const variables = values.map((count, v) => ({ name: `v${v}`, values: Array.from({ length: count }, (_, k) => String(k)) }) as unknown as StoredVariable);
    // Weights: whole numbers, fractions, some zeros.
    const weightsPtr = alloc(words * 64 * 8);
    const weights = new Float64Array(kernel.memory.memory.buffer, weightsPtr, n);
    for (let r = 0; r < n; r++) weights[r] = random() < 0.05 ? 0 : random() < 0.5 ? 1 + Math.floor(random() * 300) : random() * 50;
    const base = weights.slice();
    const factorOf = (cell: number) => 0.25 + ((cell * 2654435761) % 1000) / 250;
    const expected = reference(ranks, base, factorOf, trim);

    const walk = new RespondentWalk(kernel, variables, columns, weights);
    try {
      const { fine, base: baseSums } = walk.fineCells();
      same(fine.base, expected.cellBase, 'cell base');
      same(fine.respondents, expected.cellRespondents, 'cell respondents');
      fine.ranks.forEach((cellRanks, v) => same(cellRanks, expected.ranks[v]!, `cell ranks of v${v}`));
      const factors = Float64Array.from({ length: fine.base.length }, (_, cell) => factorOf(cell));
      const after = walk.newWeights(factors, trim);
      same(weights, expected.weights, 'new weights');
      same(after.fineTotals, expected.totals, 'cell totals');
      expect(after.trimmed).toBe(expected.trimmed);
      for (const [sums, reference] of [[baseSums, expected.baseSums], [after.sums, expected.newSums]] as const) {
        reference.variables.forEach(({ v, respondents, sum, min, max }) => {
          const got = sums.variables[v]!;
          // Ranks past the largest used are values no respondent has: nothing added.
          same(got.respondents.subarray(0, respondents.length), respondents, `respondents of v${v}`);
          expect(got.respondents.subarray(respondents.length).every((x) => x === 0)).toBe(true);
          same(got.sum.subarray(0, sum.length), sum, `sums of v${v}`);
          same(got.min.subarray(0, min.length), min, `min of v${v}`);
          same(got.max.subarray(0, max.length), max, `max of v${v}`);
        });
        expect(sums.spread.respondents).toBe(n);
        same([sums.spread.sum, sums.spread.min, sums.spread.max, sums.spread.designEffect], [reference.total, reference.min, reference.max, (n * reference.squares) / (reference.total * reference.total)], 'spread');
      }
    } finally {
      walk.release();
    }
  } finally {
    for (const { ptr, bytes } of regions) kernel.memory.release(ptr, bytes);
  }
}

describe('weighting walks in the kernel = a walk in JavaScript, to the bit', () => {
  it('on random data (odd sizes, blanks, unused values, u8 and u16 columns)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.array(fc.constantFrom(1, 2, 3, 9, 51, 300), { minLength: 1, maxLength: 4 }),
        fc.integer(),
        fc.boolean(),
        (respondents, values, seed, trimmed) => check({ respondents, values, seed, ...(trimmed ? { trim: [2, 400] as [number, number] } : {}) }),
      ),
      { numRuns: 60 },
    );
  });

  it('over several blocks, with more cells than the records first had room for', () => {
    check({ respondents: 2 * CELL_BLOCK + 12345, values: [200, 300], seed: 7 });
    check({ respondents: CELL_BLOCK + 1, values: [51, 2, 9, 25], seed: 11, trim: [1, 250] });
  });

  it('with keys past the direct table (a u32 column and a Map of keys)', () => {
    check({ respondents: 3001, values: [70000, 100], seed: 5 });
  });
});
