// Column chunks put together byte by byte, for page sequences writers here do not make: a
// dictionary column that falls back to PLAIN pages mid-chunk and back, data pages v1 and v2
// in one chunk, 64-bit integers beyond 2^53; corrupt chunks refused. And the RLE/bit-packed
// hybrid decoder against an encoder written here, on random runs.
import fc from 'fast-check';
import type { ColumnMetaData } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { type FlatColumn, storeColumnChunk } from '../src/dataset/input/parquet-chunk.js';
import { readHybrid, readLevels } from '../src/dataset/input/parquet-pages.js';
import { PlainTextColumn } from '../src/dataset/input/parquet-texts.js';
import { type CellValue, ColumnEncoder, WeightEncoder } from '../src/dataset/input/table-encoder.js';

const PLAIN = 0;
const RLE = 3;
const RLE_DICTIONARY = 8;

/** Thrift compact protocol, the few shapes a page header needs. */
function varint(value: number): number[] {
  const out: number[] = [];
  while (value >= 0x80) {
    out.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
  return out;
}
type Field = [id: number, value: number | boolean | Field[]];
function struct(fields: Field[]): number[] {
  const out: number[] = [];
  let last = 0;
  for (const [id, value] of fields) {
    const type = typeof value === 'boolean' ? (value ? 1 : 2) : typeof value === 'number' ? 5 : 12;
    out.push(((id - last) << 4) | type);
    last = id;
    if (typeof value === 'number') out.push(...varint(value >= 0 ? value * 2 : -value * 2 - 1));
    else if (typeof value !== 'boolean') out.push(...struct(value));
  }
  out.push(0);
  return out;
}

/** The RLE/bit-packed hybrid: runs of 8 or more equal values as RLE, the rest bit-packed in groups of 8. */
function hybrid(values: number[], width: number): number[] {
  const out: number[] = [];
  let i = 0;
  while (i < values.length) {
    let run = 1;
    while (i + run < values.length && values[i + run] === values[i]) run++;
    if (run >= 8) {
      out.push(...varint(run * 2));
      for (let b = 0; b < (width + 7) >> 3; b++) out.push(Math.floor(values[i]! / 2 ** (8 * b)) & 0xff);
      i += run;
      continue;
    }
    let end = i;
    while (end < values.length && end - i < 8 * 60) {
      let next = 1;
      while (end + next < values.length && values[end + next] === values[end]) next++;
      if (next >= 8 && (end - i) % 8 === 0) break;
      end++;
    }
    const groups = Math.ceil((end - i) / 8);
    out.push(...varint(groups * 2 + 1));
    const bits: number[] = [];
    for (let k = 0; k < groups * 8; k++) for (let b = 0; b < width; b++) bits.push(Math.floor((i + k < end ? values[i + k]! : 0) / 2 ** b) % 2);
    for (let k = 0; k < bits.length; k += 8) out.push(bits.slice(k, k + 8).reduce((byte, bit, b) => byte | (bit << b), 0));
    i = end;
  }
  return out;
}

const int32 = (value: number) => [value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff, (value >>> 24) & 0xff];
const texts = (words: string[]) => words.flatMap((word) => [...int32(Buffer.byteLength(word)), ...Buffer.from(word)]);
const int64s = (values: bigint[]) => values.flatMap((value) => [...new Uint8Array(BigInt64Array.of(value).buffer)]);

function dictionaryPage(count: number, body: number[]): number[] {
  return [...struct([[1, 2], [2, body.length], [3, body.length], [7, [[1, count], [2, PLAIN]]]]), ...body];
}
/** A v1 data page: definition levels (length-prefixed) if given, then the values. */
function dataPage(encoding: number, rows: number, defined: number[] | undefined, values: number[]): number[] {
  const levels = defined === undefined ? [] : hybrid(defined, 1);
  const body = [...(defined === undefined ? [] : [...int32(levels.length), ...levels]), ...values];
  return [...struct([[1, 0], [2, body.length], [3, body.length], [5, [[1, rows], [2, encoding], [3, RLE], [4, RLE]]]]), ...body];
}
/** A v2 data page: levels outside the (uncompressed) values. */
function dataPageV2(encoding: number, defined: number[], values: number[]): number[] {
  const levels = hybrid(defined, 1);
  const nulls = defined.filter((level) => level === 0).length;
  const size = levels.length + values.length;
  const header: Field[] = [[1, defined.length], [2, nulls], [3, defined.length], [4, encoding], [5, levels.length], [6, 0], [7, false]];
  return [...struct([[1, 3], [2, size], [3, size], [8, header]]), ...levels, ...values];
}
const indices = (values: number[], width: number) => [width, ...hybrid(values, width)];

const meta = { codec: 'UNCOMPRESSED' } as ColumnMetaData;

/** What the chunk's rows must read as: set() one cell at a time. */
function encodedOneByOne(cells: CellValue[]): ColumnEncoder {
  const encoder = new ColumnEncoder({ name: 'q' }, 1);
  cells.forEach((cell, row) => encoder.set(row, cell));
  return encoder;
}

function stored(chunk: number[], column: Omit<FlatColumn, 'target'>, rows: number, firstRow = 0): ColumnEncoder {
  const target = new ColumnEncoder({ name: 'q' }, 1);
  storeColumnChunk(Uint8Array.from(chunk), meta, { ...column, target }, firstRow, rows);
  return target;
}

describe('Parquet column chunks', () => {
  it('reads a dictionary column that falls back to PLAIN pages and back, in pages v1 and v2', () => {
    const words = ['b', '', 'a'];
    const chunk = [
      ...dictionaryPage(3, texts(words)),
      ...dataPage(RLE_DICTIONARY, 5, [1, 0, 1, 1, 0], indices([1, 2, 0], 2)),
      ...dataPage(PLAIN, 4, [1, 1, 0, 1], texts(['c', 'a', 'dé'])),
      ...dataPageV2(RLE_DICTIONARY, [1, 1, 0, 1, 1, 1, 1, 1, 1, 1], indices([0, 2, 2, 2, 2, 2, 2, 2, 2], 2)),
    ];
    const cells = ['', null, 'a', 'b', null, 'c', 'a', null, 'dé', 'b', 'a', null, 'a', 'a', 'a', 'a', 'a', 'a', 'a'];
    const expected = encodedOneByOne(cells);
    const actual = stored(chunk, { type: 'BYTE_ARRAY', optional: true }, cells.length);
    expect(actual.dictionary).toEqual(expected.dictionary);
    expect(Array.from(actual.take(cells.length))).toEqual(Array.from(expected.take(cells.length)));
  });

  it('reads nulls in a dictionary column across pages v1 and v2 (none, some, all), as set() one cell at a time', () => {
    const words = [5n, -3n, 70000n, 0n, 2n ** 60n];
    fc.assert(
      fc.property(
        fc.array(fc.record({ v2: fc.boolean(), rows: fc.array(fc.option(fc.integer({ min: 0, max: words.length - 1 }), { nil: undefined, freq: 3 }), { minLength: 1, maxLength: 40 }) }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 5 }),
        (pages, firstRow) => {
          const chunk = [...dictionaryPage(words.length, int64s(words))];
          const cells: CellValue[] = [];
          for (const { v2, rows } of pages) {
            const defined = rows.map((row) => (row === undefined ? 0 : 1));
            const present = rows.filter((row): row is number => row !== undefined);
            chunk.push(...(v2 ? dataPageV2(RLE_DICTIONARY, defined, indices(present, 3)) : dataPage(RLE_DICTIONARY, rows.length, defined, indices(present, 3))));
            cells.push(...rows.map((row) => (row === undefined ? null : words[row]!)));
          }
          const expected = encodedOneByOne([...Array<CellValue>(firstRow).fill(null), ...cells]);
          const actual = stored(chunk, { type: 'INT64', optional: true }, cells.length, firstRow);
          const rows = firstRow + cells.length;
          expect(actual.dictionary).toEqual(expected.dictionary);
          expect(Array.from(actual.counts())).toEqual(Array.from(expected.counts()));
          expect(Array.from(actual.take(rows))).toEqual(Array.from(expected.take(rows)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses a blank weight in a dictionary page after other pages, naming its row', () => {
    const chunk = [...dictionaryPage(2, int64s([3n, 4n])), ...dataPage(RLE_DICTIONARY, 3, [1, 1, 1], indices([0, 1, 1], 1)), ...dataPage(RLE_DICTIONARY, 3, [1, 0, 1], indices([1, 0], 1))];
    const target = new WeightEncoder('w', 'f.parquet', 1, (row) => ({ row: row + 1 }));
    expect(() => storeColumnChunk(Uint8Array.from(chunk), meta, { type: 'INT64', optional: true, target }, 0, 6)).toThrow(/row 5: weight column "w" is blank/);
  });

  it('reads a weight column of dictionary pages as its numbers (pages v1 and v2, long runs, a second dictionary, 64-bit integers)', () => {
    const doubles = [0.5, 2, 1e6, 3.25, 0];
    const indicesOf = (count: number, size: number, seed: number) => Array.from({ length: count }, (_, k) => (k % 50 < 20 ? seed % size : (k * 7 + seed) % size));
    const first = indicesOf(300, doubles.length, 1);
    const second = indicesOf(200, doubles.length, 3);
    const integers = [17n, 4n, 2n ** 40n];
    const third = indicesOf(100, integers.length, 2);
    const chunk = [
      ...dictionaryPage(doubles.length, doubles.flatMap((w) => [...new Uint8Array(Float64Array.of(w).buffer)])),
      ...dataPage(RLE_DICTIONARY, first.length, first.map(() => 1), indices(first, 3)),
      ...dataPageV2(RLE_DICTIONARY, second.map(() => 1), indices(second, 9)),
    ];
    const target = new WeightEncoder('w', 'f.parquet', 1, (row) => ({ row: row + 1 }));
    storeColumnChunk(Uint8Array.from(chunk), { codec: 'UNCOMPRESSED' } as ColumnMetaData, { type: 'DOUBLE', optional: true, target }, 2, first.length + second.length);
    const intChunk = [...dictionaryPage(integers.length, int64s(integers)), ...dataPage(RLE_DICTIONARY, third.length, undefined, indices(third, 2))];
    storeColumnChunk(Uint8Array.from(intChunk), meta, { type: 'INT64', optional: false, target }, 2 + first.length + second.length, third.length);
    const expected = [0, 0, ...[...first, ...second].map((index) => doubles[index]!), ...third.map((index) => Number(integers[index]!))];
    expect(Array.from(target.take(expected.length))).toEqual(expected);
  });

  it('reads a text column of PLAIN pages over its bytes as set() reads its values, malformed UTF-8 as U+FFFD', () => {
    const raw = (parts: number[][]) => parts.flatMap((bytes) => [...int32(bytes.length), ...bytes]);
    const a = [0x61];
    const e = [0xc3, 0xa9];
    const pages = [
      dataPage(PLAIN, 6, [1, 1, 0, 1, 1, 1], raw([[0xff], a, [0xfe], [], e])),
      dataPageV2(PLAIN, [1, 0, 1, 1], raw([[0xef, 0xbf, 0xbd], a, [0xc3]])),
      dataPage(PLAIN, 3, [1, 1, 1], raw([e, [0x80, 0x80], [0x62]])),
    ];
    const cells = ['\uFFFD', 'a', null, '\uFFFD', '', 'é', '\uFFFD', null, 'a', '\uFFFD', 'é', '\uFFFD\uFFFD', 'b'];
    const expected = encodedOneByOne(cells);
    const target = new ColumnEncoder({ name: 'q' }, 1);
    const texts = new PlainTextColumn(target);
    storeColumnChunk(Uint8Array.from(pages.flat()), meta, { type: 'BYTE_ARRAY', optional: true, target, texts }, 0, cells.length);
    expect(target.dictionary).toEqual(expected.dictionary);
    expect(Array.from(target.counts())).toEqual(Array.from(expected.counts()));
    expect(Array.from(target.take(cells.length))).toEqual(Array.from(expected.take(cells.length)));
  });

  it('keeps 64-bit integers beyond 2^53 exact, in PLAIN and dictionary pages of a required column', () => {
    const big = 2n ** 60n + 1n;
    const chunk = [...dictionaryPage(2, int64s([-7n, big])), ...dataPage(RLE_DICTIONARY, 3, undefined, indices([1, 0, 1], 1)), ...dataPage(PLAIN, 2, undefined, int64s([big + 2n, 5n]))];
    const actual = stored(chunk, { type: 'INT64', optional: false }, 5, 3);
    expect(actual.dictionary).toEqual(['1152921504606846977', '-7', '1152921504606846979', '5']);
    expect(Array.from(actual.take(8))).toEqual([0, 0, 0, 1, 2, 1, 3, 4]);
  });

  it('decodes dictionary pages straight into ids as decoded indices and setIndexed do: any width, long runs, blank words, nulls, a second dictionary', () => {
    // Two dictionaries per chunk (a writer may start a new one mid-chunk); words repeat across them and include blanks.
    const word = fc.oneof(fc.integer({ min: -3, max: 40 }), fc.constantFrom(Number.NaN, 1.5, 2 ** 40));
    const page = (size: number) =>
      fc.record({
        v2: fc.boolean(),
        extraWidth: fc.integer({ min: 0, max: 30 }),
        // Runs of one index (long ones become RLE runs), null or not.
        runs: fc.array(fc.tuple(fc.option(fc.integer({ min: 0, max: size - 1 }), { nil: undefined, freq: 4 }), fc.oneof(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 50, max: 3000 }))), { minLength: 1, maxLength: 12 }),
      });
    const dictionaryAndPages = fc.array(word, { minLength: 1, maxLength: 40 }).chain((words) => fc.tuple(fc.constant(words), fc.array(page(words.length), { minLength: 1, maxLength: 4 })));
    fc.assert(
      fc.property(fc.array(dictionaryAndPages, { minLength: 1, maxLength: 2 }), fc.boolean(), fc.integer({ min: 0, max: 70_000 }), (dictionaries, optional, firstRow) => {
        const chunk: number[] = [];
        const expected = new ColumnEncoder({ name: 'q' }, 1);
        let rows = 0;
        for (const [words, pages] of dictionaries) {
          chunk.push(...dictionaryPage(words.length, words.flatMap((w) => [...new Uint8Array(Float64Array.of(w).buffer)])));
          const known = new Int32Array(words.length).fill(-1);
          for (const { v2, extraWidth, runs } of pages) {
            const cells = runs.flatMap(([index, repeat]) => Array<number | undefined>(repeat).fill(optional ? index : (index ?? 0)));
            const present = cells.filter((cell): cell is number => cell !== undefined);
            const defined = cells.map((cell) => (cell === undefined ? 0 : 1));
            const width = Math.min(32, Math.max(1, Math.ceil(Math.log2(words.length))) + extraWidth);
            const values = indices(present, width);
            chunk.push(...(!optional ? dataPage(RLE_DICTIONARY, cells.length, undefined, values) : v2 ? dataPageV2(RLE_DICTIONARY, defined, values) : dataPage(RLE_DICTIONARY, cells.length, defined, values)));
            // The path before dictionary ids: every index decoded, then looked up row by row.
            const decoded = new Int32Array(present.length);
            readHybrid({ bytes: Uint8Array.from(values), at: 1 }, values.length, width, decoded, present.length);
            expected.setIndexed(firstRow + rows, words, decoded, cells.length, known, optional ? Int32Array.from(defined) : undefined);
            rows += cells.length;
          }
        }
        const actual = new ColumnEncoder({ name: 'q' }, 1);
        storeColumnChunk(Uint8Array.from(chunk), meta, { type: 'DOUBLE', optional, target: actual }, firstRow, rows);
        expect(actual.dictionary).toEqual(expected.dictionary);
        expect(Array.from(actual.counts())).toEqual(Array.from(expected.counts()));
        expect(Buffer.from(actual.take(firstRow + rows).buffer).equals(Buffer.from(expected.take(firstRow + rows).buffer))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('widens a column past 255 and 65,535 values while a dictionary page is decoded, nulls included, as set() one cell at a time', () => {
    // Ids of one, two and four bytes: a first chunk of 200 values, then a dictionary of 70,000
    // whose pages number new values mid-page, and a row group that starts at any row.
    for (const optional of [false, true]) {
      const first = Array.from({ length: 200 }, (_, k) => k * 3);
      const words = Array.from({ length: 70_000 }, (_, k) => 70_000 - k);
      // Every word shown (7919 is prime to 70,000), a null row after every fifth when optional.
      const rows = Array.from({ length: 70_000 }, (_, k) => (k * 7919) % words.length).flatMap((index, k) => (optional && k % 5 === 2 ? [index, undefined] : [index]));
      const defined = rows.map((index) => (index === undefined ? 0 : 1));
      const present = rows.filter((index): index is number => index !== undefined);
      const half = 45_000;
      const presentFirst = defined.slice(0, half).filter(Boolean).length;
      const chunk = [
        ...dictionaryPage(first.length, int64s(first.map(BigInt))),
        ...dataPage(RLE_DICTIONARY, first.length, optional ? first.map(() => 1) : undefined, indices(first.map((_, k) => k), 8)),
        ...dictionaryPage(words.length, int64s(words.map(BigInt))),
        ...dataPage(RLE_DICTIONARY, half, optional ? defined.slice(0, half) : undefined, indices(present.slice(0, presentFirst), 17)),
        ...(optional ? dataPageV2(RLE_DICTIONARY, defined.slice(half), indices(present.slice(presentFirst), 17)) : dataPage(RLE_DICTIONARY, rows.length - half, undefined, indices(present.slice(half), 17))),
      ];
      const cells: CellValue[] = [...Array<CellValue>(3).fill(null), ...first, ...rows.map((index) => (index === undefined ? null : words[index]!))];
      const expected = encodedOneByOne(cells);
      const actual = stored(chunk, { type: 'INT64', optional }, cells.length - 3, 3);
      expect(actual.dictionary).toEqual(expected.dictionary);
      expect(Array.from(actual.counts())).toEqual(Array.from(expected.counts()));
      const ids = actual.take(cells.length);
      expect(ids.BYTES_PER_ELEMENT).toBe(4);
      expect(Array.from(ids)).toEqual(Array.from(expected.take(cells.length)));
    }
  });

  it('refuses dictionary pages whose runs pass the end of the page, or a definition level above 1, naming what', () => {
    const words = dictionaryPage(4, texts(['a', 'b', 'c', 'd']));
    // A bit-packed run of 8 indices at 2 bits needs 2 bytes: one is there.
    const cutIndices = [...words, ...dataPage(RLE_DICTIONARY, 8, undefined, [2, 3, 0b11100100])];
    expect(() => stored(cutIndices, { type: 'BYTE_ARRAY', optional: false }, 8)).toThrow(/bit-packed run of dictionary indices passes the end of its page after 0 of 8 values/);
    // Runs that end before the page's rows do.
    const fewIndices = [...words, ...dataPage(RLE_DICTIONARY, 20, undefined, indices([1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 2))];
    expect(() => stored(fewIndices, { type: 'BYTE_ARRAY', optional: false }, 20)).toThrow(/RLE\/bit-packed run ends after 10 of 20 values/);
    // An RLE run of 3 levels of 2.
    const body = [...int32(2), 6, 2, ...indices([0], 2)];
    const levelTwo = [...words, ...struct([[1, 0], [2, body.length], [3, body.length], [5, [[1, 3], [2, RLE_DICTIONARY], [3, RLE], [4, RLE]]]]), ...body];
    expect(() => stored(levelTwo, { type: 'BYTE_ARRAY', optional: true }, 3)).toThrow(/a definition level is 2, above the 1 of a flat column/);
  });

  it('refuses a dictionary index past the dictionary', () => {
    const chunk = [...dictionaryPage(2, texts(['x', 'y'])), ...dataPage(RLE_DICTIONARY, 2, undefined, indices([0, 3], 2))];
    expect(() => stored(chunk, { type: 'BYTE_ARRAY', optional: false }, 2)).toThrow(/dictionary index 3 is past the dictionary's 2 values/);
  });

  it('refuses dictionary indices before any dictionary page', () => {
    const chunk = dataPage(RLE_DICTIONARY, 2, undefined, indices([0, 0], 1));
    expect(() => stored(chunk, { type: 'BYTE_ARRAY', optional: false }, 2)).toThrow(/before any dictionary page/);
  });

  it('refuses a chunk whose pages hold fewer rows than its row group', () => {
    const chunk = dataPage(PLAIN, 2, undefined, texts(['x', 'y']));
    expect(() => stored(chunk, { type: 'BYTE_ARRAY', optional: false }, 3)).toThrow(/pages end after 2 of 3 rows/);
  });

  it('refuses a page cut short', () => {
    const chunk = dataPage(PLAIN, 2, undefined, texts(['x', 'y']));
    expect(() => stored(chunk.slice(0, -2), { type: 'BYTE_ARRAY', optional: false }, 2)).toThrow(/past the end/);
  });
});

describe('RLE/bit-packed hybrid', () => {
  it('decodes what the encoder here writes, at every width', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 32 }).chain((width) =>
          fc.tuple(
            fc.constant(width),
            fc.array(fc.tuple(fc.integer({ min: 0, max: width === 32 ? 2 ** 31 - 1 : 2 ** width - 1 }), fc.integer({ min: 1, max: 20 })), { minLength: 1, maxLength: 30 }),
          ),
        ),
        ([width, runs]) => {
          const values = runs.flatMap(([value, repeat]) => Array<number>(repeat).fill(value));
          const bytes = Uint8Array.from(hybrid(values, width));
          const out = new Int32Array(values.length);
          const page = { bytes, at: 0 };
          readHybrid(page, bytes.length, width, out, values.length);
          expect(Array.from(out)).toEqual(values);
          expect(page.at).toBe(bytes.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('decodes definition levels and counts the rows with a value, over runs of any length', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 1 }), fc.integer({ min: 1, max: 40 })), { minLength: 1, maxLength: 30 }), fc.integer({ min: 0, max: 7 }), (runs, cut) => {
        const levels = runs.flatMap(([value, repeat]) => Array<number>(repeat).fill(value));
        const bytes = Uint8Array.from(hybrid(levels, 1));
        // Fewer levels asked for than the runs hold: the last run's padding is dropped.
        const count = Math.max(1, levels.length - cut);
        const out = new Int32Array(count);
        const page = { bytes, at: 0 };
        const ones = readLevels(page, bytes.length, out, count);
        expect(Array.from(out)).toEqual(levels.slice(0, count));
        expect(ones).toBe(levels.slice(0, count).filter((level) => level === 1).length);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a definition level above 1', () => {
    const bytes = Uint8Array.from(hybrid(Array<number>(10).fill(2), 2));
    expect(() => readLevels({ bytes, at: 0 }, bytes.length, new Int32Array(10), 10)).toThrow(/definition level is 2/);
  });
});
