// Arrow Utf8 columns are numbered straight from their offsets and bytes
// (PlainTextColumn.encodeArrow, encodeOffsets in assembly/csv.ts): ids, dictionary and counts
// must be what the length-prefixed form of the same values gives through encode(), with
// nulls, bitmap offsets, a first offset past 0, empty values, bytes that are not UTF-8, a
// column that stops past the id-like bound, and damaged offsets refused.
import { describe, expect, it } from 'vitest';
import { ColumnEncoder } from '../src/dataset/input/column-encoder.js';
import { PlainTextColumn } from '../src/dataset/input/parquet-texts.js';
import type { Validity } from '../src/dataset/input/cell-values.js';
import { seededRandom as random } from './support/large-dataset.js';

/** Values as Arrow lays them out: offsets (from `first`), bytes, validity. */
function utf8(values: Array<Uint8Array | null>, first: number, bitOffset: number): { offsets: Int32Array; bytes: Uint8Array; valid: Validity } {
  const offsets = new Int32Array(values.length + 1);
  const total = values.reduce((sum, value) => sum + (value?.length ?? 0), 0);
  const bytes = new Uint8Array(first + total + 2 * values.length + 3).fill(0x6a);
  const bits = new Uint8Array((bitOffset + values.length + 7) >> 3);
  let at = first;
  values.forEach((value, k) => {
    offsets[k] = at;
    if (value !== null) {
      bytes.set(value, at);
      at += value.length;
      bits[(bitOffset + k) >> 3]! |= 1 << ((bitOffset + k) & 7);
    } else if (k % 3 === 0) at += 2; // a null row's slot may span bytes: they are not its value
  });
  offsets[values.length] = at;
  return { offsets, bytes, valid: { bits, offset: bitOffset } };
}

/** The same values as Parquet PLAIN lays them out (a null as an empty value), what encode() takes. */
function lengthPrefixed(values: Array<Uint8Array | null>): Uint8Array {
  const out = new Uint8Array(values.reduce((sum, value) => sum + 4 + (value?.length ?? 0), 0));
  const view = new DataView(out.buffer);
  let at = 0;
  for (const value of values) {
    view.setUint32(at, value?.length ?? 0, true);
    at += 4;
    if (value !== null) out.set(value, at);
    at += value?.length ?? 0;
  }
  return out;
}

/** The ids as a short digest (length and a sum over rows), so a mismatch is reported at once, not diffed row by row. */
function idDigest(ids: ArrayLike<number>): string {
  let sum = 0;
  for (let k = 0; k < ids.length; k++) sum = (Math.imul(sum, 31) + ids[k]! * (k + 1)) | 0;
  return `${ids.length} ids, digest ${sum}`;
}

function table(encoder: ColumnEncoder, rows: number) {
  if (encoder.deferredTexts !== undefined) encoder.makeTexts();
  return { dictionary: [...encoder.dictionary], counts: [...encoder.counts()], ids: idDigest(encoder.take(rows)), partly: encoder.partly };
}

const encoder = new TextEncoder();

function batchOf(rows: number, next: () => number, distinct: number, utf8Only: boolean): Array<Uint8Array | null> {
  return Array.from({ length: rows }, () => {
    const r = next();
    if (r < 0.1) return null;
    if (r < 0.15) return new Uint8Array(0);
    if (r < 0.17 && !utf8Only) return Uint8Array.of(0xff, 0x41); // not UTF-8: reads as U+FFFD A
    if (r < 0.19 && !utf8Only) return Uint8Array.of(0xfe, 0x41); // another text that reads the same
    return encoder.encode(`${r < 0.3 ? 'é' : ''}value ${Math.floor(next() * distinct)}${r < 0.5 ? ' with a longer tail past eight bytes' : ''}`);
  });
}

describe('PlainTextColumn.encodeArrow numbers Utf8 offsets and bytes as encode() numbers them length-prefixed', () => {
  it.each([
    ['few values, several batches', 50, undefined],
    ['many values', 1_000_000, undefined],
    ['a column that stops past its bound (id-like)', 1_000_000, 1000],
  ] as const)('%s', (_name, distinct, stopAbove) => {
    const next = random(distinct + (stopAbove ?? 0));
    const theirs = new ColumnEncoder({ name: 'x' }, 16);
    const ours = new ColumnEncoder({ name: 'x' }, 16);
    const theirTexts = new PlainTextColumn(theirs, stopAbove);
    const ourTexts = new PlainTextColumn(ours, stopAbove);
    let start = 0;
    for (const [rows, first, bitOffset] of [[3000, 0, 0], [70_000, 5, 3], [1, 2, 7], [140_000, 0, 8]] as const) {
      // (A column stops only while its values are held as bytes: all of them UTF-8.)
      const values = batchOf(rows, next, distinct, stopAbove !== undefined);
      const { offsets, bytes, valid } = utf8(values, first, bitOffset);
      theirs.setIds(start, theirTexts.encode(lengthPrefixed(values), 0, rows).ids);
      ours.setIds(start, ourTexts.encodeArrow(offsets, bytes, rows, valid));
      start += rows;
    }
    expect(table(ours, start)).toEqual(table(theirs, start));
    if (stopAbove !== undefined) expect(ours.partly).toBe(true);
  });

  it('refuses offsets out of order or past the data, and an offsets buffer or bitmap too short', () => {
    const texts = () => new PlainTextColumn(new ColumnEncoder({ name: 'x' }, 16));
    const bytes = encoder.encode('abcdef');
    expect(() => texts().encodeArrow(Int32Array.of(0, 3, 2, 6), bytes, 3)).toThrow(/offsets are out of order or past its data/);
    expect(() => texts().encodeArrow(Int32Array.of(0, 3, 7), bytes, 2)).toThrow(/offsets are out of order or past its data/);
    expect(() => texts().encodeArrow(Int32Array.of(-1, 3), bytes, 1)).toThrow(/offsets are out of order or past its data/);
    expect(() => texts().encodeArrow(Int32Array.of(0, 3), bytes, 2)).toThrow(/offsets buffer is shorter/);
    expect(() => texts().encodeArrow(Int32Array.of(0, 1, 2, 3, 4, 5, 6, 6, 6, 6), bytes, 9, { bits: Uint8Array.of(0xff), offset: 0 })).toThrow(/validity bitmap is shorter/);
    // Past the bound, values are not numbered but their offsets are still checked.
    const stopping = new PlainTextColumn(new ColumnEncoder({ name: 'x' }, 16), 2);
    const many = Int32Array.from({ length: 70_002 }, (_, k) => Math.min(k, 6));
    many[70_001] = 3;
    expect(() => stopping.encodeArrow(many, bytes, 70_001)).toThrow(/offsets are out of order or past its data/);
  });
});
