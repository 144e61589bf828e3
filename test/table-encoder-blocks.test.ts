// The column encoder's bulk paths (a file's dictionary indices with or without definition
// levels, numbers, 64-bit integers as Arrow hands them) over more rows than one block of ids
// (65,536) and across the column's 2^20-row chunks: every row as set() one cell at a time makes it.
import { describe, expect, it } from 'vitest';
import { type CellValue, ColumnEncoder } from '../src/dataset/input/table-encoder.js';

const rows = 150_000;
/** Row r's value index into `words`, or -1 (blank): runs, nulls and a new value now and then. */
const indexOf = (r: number) => (r % 13 === 0 ? -1 : (r * 7919) % (r < 70_000 ? 300 : 700));
const words = Array.from({ length: 700 }, (_, i) => i * 37 - 5000);

function oneByOne(cells: CellValue[], start: number): ColumnEncoder {
  const encoder = new ColumnEncoder({ name: 'q' }, 1);
  cells.forEach((cell, row) => encoder.set(start + row, cell));
  return encoder;
}

function expectSame(actual: ColumnEncoder, expected: ColumnEncoder, total: number): void {
  expect(actual.dictionary).toEqual(expected.dictionary);
  expect(Array.from(actual.counts())).toEqual(Array.from(expected.counts()));
  expect(Buffer.from(actual.take(total).buffer).equals(Buffer.from(expected.take(total).buffer))).toBe(true);
}

describe('column encoder, more rows than a block of ids', () => {
  const cells = Array.from({ length: rows }, (_, r) => (indexOf(r) < 0 ? null : words[indexOf(r)]!));
  // Starts just before the column's second chunk, so the rows cross it too.
  const start = (1 << 20) - 40_000;
  const expected = () => oneByOne(cells, start);

  it('takes dictionary indices with definition levels', () => {
    const defined = Int32Array.from(cells, (cell) => (cell === null ? 0 : 1));
    const indices = Int32Array.from(Array.from({ length: rows }, (_, r) => indexOf(r)).filter((index) => index >= 0));
    const actual = new ColumnEncoder({ name: 'q' }, 1);
    actual.setIndexed(start, words, indices, rows, new Int32Array(words.length).fill(-1), defined);
    expectSame(actual, expected(), start + rows);
  });

  it('takes dictionary indices with -1 for a blank row', () => {
    const actual = new ColumnEncoder({ name: 'q' }, 1);
    actual.setIndexed(start, words, Int32Array.from({ length: rows }, (_, r) => indexOf(r)), rows, new Int32Array(words.length).fill(-1));
    expectSame(actual, expected(), start + rows);
  });

  it('takes numbers (NaN blank) and 64-bit integers (with a validity bitmap)', () => {
    const numbers = new ColumnEncoder({ name: 'q' }, 1);
    numbers.setValues(start, Float64Array.from(cells, (cell) => (cell === null ? Number.NaN : Number(cell))));
    expectSame(numbers, expected(), start + rows);
    const bits = new Uint8Array(Math.ceil((rows + 3) / 8));
    cells.forEach((cell, r) => {
      if (cell !== null) bits[(r + 3) >> 3]! |= 1 << ((r + 3) & 7);
    });
    const integers = new ColumnEncoder({ name: 'q' }, 1);
    integers.setValues(start, BigInt64Array.from(cells, (cell) => BigInt(cell ?? 0)), 0, rows, { bits, offset: 3 });
    expectSame(integers, expected(), start + rows);
  });
});
