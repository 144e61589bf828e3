// A column's row ids widen from one byte to two or four as its dictionary grows
// (src/dataset/input/row-ids.ts): the wider array holds every id the narrow one held, wherever
// in it (first row, last row, an array that starts at any byte of its buffer), and is all
// blank when the narrow one was (then it is made without converting a copy).
import { describe, expect, it } from 'vitest';
import { rowIds, widened } from '../src/dataset/input/row-ids.js';

describe('widened', () => {
  it('keeps each id wherever it lies, in arrays that start at any byte of their buffer', () => {
    for (const length of [1, 2, 3, 4, 5, 7, 8, 9, 1001]) {
      for (const shift of [0, 1, 2, 3]) {
        for (const at of new Set([0, 1, 2, 3, length >> 1, length - 4, length - 3, length - 2, length - 1].filter((k) => k >= 0 && k < length))) {
          const ids = new Uint8Array(new ArrayBuffer(length + shift), shift, length);
          ids[at] = 200;
          const wider = widened(ids, 300);
          expect(wider).toBeInstanceOf(Uint16Array);
          const expected = new Array<number>(length).fill(0);
          expected[at] = 200;
          expect(Array.from(wider)).toEqual(expected);
        }
      }
    }
    const two = new Uint16Array(new ArrayBuffer(2 * 11 + 2), 2, 11);
    two[10] = 40_000;
    expect(Array.from(widened(two, 70_000))).toEqual([...new Array<number>(10).fill(0), 40_000]);
  });

  it('makes a blank wider array of a blank one, and returns an array that can hold the id as it is', () => {
    for (const length of [0, 1, 5, 4096]) {
      const wider = widened(rowIds(length), 256);
      expect(wider).toBeInstanceOf(Uint16Array);
      expect(wider.length).toBe(length);
      expect(wider.every((id) => id === 0)).toBe(true);
    }
    const ids = rowIds(8, 300);
    expect(widened(ids, 65_535)).toBe(ids);
    expect(widened(rowIds(3), 70_000)).toBeInstanceOf(Uint32Array);
  });
});
