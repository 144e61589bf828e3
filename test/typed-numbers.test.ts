// Arrow Int and Float columns are numbered in WebAssembly (src/dataset/input/typed-numbers.ts,
// assembly/typed-numbers.ts): the dictionary, ids and counts must be exactly what
// ColumnEncoder.setValues makes of the same values, for every stored type, with nulls, NaN,
// -0, integers beyond 2^53, codes on both sides of the small-number table, several batches,
// and a column that already had values.
import { describe, expect, it } from 'vitest';
import { ColumnEncoder } from '../src/dataset/input/column-encoder.js';
import { NumberKind, TypedNumbers } from '../src/dataset/input/typed-numbers.js';
import type { Validity } from '../src/dataset/input/cell-values.js';
import { seededRandom as random } from './support/large-dataset.js';

type Values = BigInt64Array | BigUint64Array | Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array | Float64Array | Float32Array;

/** Values a survey column of `kind` may hold: codes, codes past 16,383, big and negative numbers, and per kind its edges. */
function values(kind: NumberKind, rows: number, next: () => number): Values {
  const pick = (choices: number[]) => choices[Math.floor(next() * choices.length)]!;
  const whole = () => pick([0, 1, 2, 3, 9, 16383, 16384, 16385, 20000, 99999, -1, -5, 127, 255, 32767, 65535, 1e6, 123456789]);
  switch (kind) {
    case NumberKind.int64:
      return BigInt64Array.from({ length: rows }, () => (next() < 0.1 ? BigInt(pick([2 ** 53, 2 ** 53 + 2, -(2 ** 53) - 2])) * BigInt(pick([1, 3])) : next() < 0.05 ? -(2n ** 63n) : BigInt(whole())));
    case NumberKind.uint64:
      return BigUint64Array.from({ length: rows }, () => (next() < 0.1 ? 2n ** 64n - BigInt(pick([1, 2, 3])) : BigInt(Math.abs(whole()))));
    case NumberKind.int32:
      return Int32Array.from({ length: rows }, () => (next() < 0.05 ? pick([-(2 ** 31), 2 ** 31 - 1]) : whole()));
    case NumberKind.uint32:
      return Uint32Array.from({ length: rows }, () => (next() < 0.05 ? 2 ** 32 - 1 : Math.abs(whole())));
    case NumberKind.int16:
      return Int16Array.from({ length: rows }, whole);
    case NumberKind.uint16:
      return Uint16Array.from({ length: rows }, whole);
    case NumberKind.int8:
      return Int8Array.from({ length: rows }, whole);
    case NumberKind.uint8:
      return Uint8Array.from({ length: rows }, whole);
    case NumberKind.float64:
      return Float64Array.from({ length: rows }, () => pick([0, -0, NaN, -NaN, 0.1, 2.5, 3, 16383, 16383.5, 16384, -7, 1e-7, 1e300, Infinity, -Infinity, 2 ** 53 + 2, Math.PI]));
    default:
      return Float32Array.from({ length: rows }, () => pick([0, -0, NaN, 0.1, 2.5, 3, 16383, 16384, -7, 1e-7, Infinity]));
  }
}

function bitmap(rows: number, offset: number, next: () => number): Validity {
  const bits = new Uint8Array((offset + rows + 7) >> 3);
  for (let k = 0; k < rows; k++) if (next() < 0.8) bits[(offset + k) >> 3]! |= 1 << ((offset + k) & 7);
  return { bits, offset };
}

/** The ids as a short digest (length and a sum over rows), so a mismatch is reported at once, not diffed row by row. */
function idDigest(ids: ArrayLike<number>): string {
  let sum = 0;
  for (let k = 0; k < ids.length; k++) sum = (Math.imul(sum, 31) + ids[k]! * (k + 1)) | 0;
  return `${ids.length} ids, digest ${sum}`;
}

function table(encoder: ColumnEncoder, rows: number) {
  return { dictionary: [...encoder.dictionary], counts: [...encoder.counts()], ids: idDigest(encoder.take(rows)) };
}

const kinds = Object.entries(NumberKind) as Array<[string, NumberKind]>;

describe('TypedNumbers numbers stored values as ColumnEncoder.setValues does', () => {
  it.each(kinds)('%s: batches with and without nulls, a bitmap offset, a column that had values', (_name, kind) => {
    const next = random(17 + kind);
    for (const seeded of [false, true]) {
      const theirs = new ColumnEncoder({ name: 'x' }, 16);
      const ours = new ColumnEncoder({ name: 'x' }, 16);
      const numbers = new TypedNumbers();
      let start = 0;
      if (seeded) {
        // Values numbered another way first: the wasm ids are then not the column's.
        for (const encoder of [theirs, ours]) encoder.setValues(0, ['x', 7, 'y', 16384, 0.1]);
        start = 5;
      }
      for (const [rows, offset, nulls] of [[1000, 0, false], [5000, 3, true], [1, 0, true], [20000, 8, true], [777, 0, false]] as const) {
        const batch = values(kind, rows, next);
        const valid = nulls ? bitmap(rows, offset, next) : undefined;
        theirs.setValues(start, batch as ArrayLike<number | bigint>, 0, rows, valid);
        numbers.store(ours, start, kind, new Uint8Array(batch.buffer, batch.byteOffset, batch.byteLength), rows, valid);
        start += rows;
      }
      expect(table(ours, start)).toEqual(table(theirs, start));
    }
  });

  it('numbers more distinct values than its tables start with (ids past 255 and 65,535, the hash table grown)', () => {
    const rows = 200_000;
    const batch = Float64Array.from({ length: rows }, (_, k) => (k * 7919) % 90_001 - 30_000 + (k % 3 === 0 ? 0.5 : 0));
    const theirs = new ColumnEncoder({ name: 'x' }, 16);
    const ours = new ColumnEncoder({ name: 'x' }, 16);
    theirs.setValues(0, batch);
    new TypedNumbers().store(ours, 0, NumberKind.float64, new Uint8Array(batch.buffer), rows);
    expect(ours.size).toBeGreaterThan(65_535);
    expect(table(ours, rows)).toEqual(table(theirs, rows));
  });
});
