import type { CellValue } from './table-encoder.js';
import { Utf8Text } from './utf8-text.js';

/**
 * Decoding of the parts of a Parquet page that flat survey columns use: the RLE/bit-packed
 * hybrid (definition levels, dictionary indices) and PLAIN values of INT32, INT64, FLOAT,
 * DOUBLE and BYTE_ARRAY (UTF-8 text). Everything is decoded straight into typed arrays;
 * a JavaScript value is made only for text and for 64-bit integers beyond 2^53.
 */

/** Physical types this decoder reads. */
export type FlatType = 'INT32' | 'INT64' | 'FLOAT' | 'DOUBLE' | 'BYTE_ARRAY';

/** A Parquet page (or part of one) being read: bytes and a position. */
export interface PageBytes {
  bytes: Uint8Array;
  at: number;
}

/**
 * The header of the next run of an RLE/bit-packed hybrid (ULEB128: the run's length times 2,
 * plus 1 for a bit-packed run), read from `page.at` and moved past; refuses a run that would
 * start at or after `end` with `seen` of `count` values read.
 */
export function runHeader(page: PageBytes, end: number, seen: number, count: number): number {
  const bytes = page.bytes;
  let at = page.at;
  if (at >= end) throw new Error(`RLE/bit-packed run ends after ${seen} of ${count} values`);
  let header = 0;
  let scale = 1;
  let byte: number;
  do {
    byte = bytes[at++]!;
    header += (byte & 0x7f) * scale;
    scale *= 128;
  } while (byte & 0x80);
  page.at = at;
  return header;
}

/**
 * Reads `count` values of the RLE/bit-packed hybrid of `width` bits into `out`, from
 * `page.at` up to `end`. Bit-packed runs are a multiple of 8 values; values past `count`
 * in the last run are padding and dropped.
 */
export function readHybrid(page: PageBytes, end: number, width: number, out: Int32Array, count: number): void {
  const bytes = page.bytes;
  let at = page.at;
  let seen = 0;
  const mask = width === 32 ? -1 : (1 << width) - 1;
  const valueBytes = (width + 7) >> 3;
  while (seen < count) {
    page.at = at;
    const header = runHeader(page, end, seen, count);
    at = page.at;
    if (header % 2 === 1) {
      const values = Math.floor(header / 2) * 8;
      const stop = Math.min(count, seen + values);
      const runEnd = at + (values / 8) * width;
      if (width <= 24) {
        // A window of at most 31 bits: fewer than `width` bits left plus one more byte.
        let window = 0;
        let bits = 0;
        while (seen < stop) {
          while (bits < width) {
            window |= bytes[at++]! << bits;
            bits += 8;
          }
          out[seen++] = window & mask;
          window >>>= width;
          bits -= width;
        }
      } else {
        for (let k = 0; seen < stop; k++) out[seen++] = bitsAt(bytes, at, k * width, width);
      }
      at = runEnd;
    } else {
      const repeat = Math.floor(header / 2);
      let value = 0;
      for (let i = 0; i < valueBytes; i++) value += bytes[at++]! * 2 ** (8 * i);
      out.fill(value | 0, seen, Math.min(count, seen + repeat));
      seen += repeat;
    }
  }
  page.at = at;
}

/**
 * Definition levels of a flat OPTIONAL column (the hybrid at width 1) into `out` as 0/1, from
 * `page.at` up to `end`; returns how many are 1 (the rows that have a value), counted as the
 * runs are decoded rather than in a pass of its own. Bit-packed runs go a byte (8 levels) at a time.
 */
export function readLevels(page: PageBytes, end: number, out: Int32Array, count: number): number {
  const bytes = page.bytes;
  let at = page.at;
  let seen = 0;
  let ones = 0;
  while (seen < count) {
    page.at = at;
    const header = runHeader(page, end, seen, count);
    at = page.at;
    if (header % 2 === 1) {
      const groups = Math.floor(header / 2);
      const runEnd = at + groups;
      const stop = Math.min(count, seen + groups * 8);
      while (seen + 8 <= stop) {
        const packed = bytes[at++]!;
        for (let bit = 0; bit < 8; bit++) out[seen + bit] = (packed >> bit) & 1;
        ones += bitCount[packed]!;
        seen += 8;
      }
      if (seen < stop) {
        const packed = bytes[at]!;
        for (let bit = 0; seen < stop; bit++) ones += out[seen++] = (packed >> bit) & 1;
      }
      at = runEnd;
    } else {
      const repeat = Math.min(Math.floor(header / 2), count - seen);
      const value = bytes[at++]!;
      if (value > 1) throw new Error(`a definition level is ${value}, above the 1 of a flat column`);
      out.fill(value, seen, seen + repeat);
      ones += value * repeat;
      seen += repeat;
    }
  }
  page.at = at;
  return ones;
}

/** Ones in each byte value. */
const bitCount = Uint8Array.from({ length: 256 }, (_, byte) => {
  let ones = 0;
  for (let b = byte; b > 0; b >>= 1) ones += b & 1;
  return ones;
});

/** `width` bits starting at bit `bit` of `bytes[from..]`, least significant first (widths 25-32). */
export function bitsAt(bytes: Uint8Array, from: number, bit: number, width: number): number {
  let value = 0;
  for (let k = 0; k < width; k++) {
    const b = bit + k;
    if (bytes[from + (b >> 3)]! & (1 << (b & 7))) value += 2 ** k;
  }
  return value | 0;
}

/**
 * `count` PLAIN values of `type` from `page.at`, as numbers (NaN nowhere but where the file
 * has NaN), or as cells when a 64-bit integer is beyond 2^53 (kept exact as bigint) or text.
 */
export function readPlain(page: PageBytes, type: FlatType, count: number): Float64Array | CellValue[] {
  const { bytes, at } = page;
  if (type === 'BYTE_ARRAY') return readTexts(page, count);
  const width = type === 'INT64' || type === 'DOUBLE' ? 8 : 4;
  if (at + count * width > bytes.length) throw new Error(`a PLAIN ${type} page holds fewer than its ${count} values`);
  // A copy: the values start at any byte, typed arrays need them aligned. (Uint8Array's
  // slice: a Buffer's, as zlib returns, would be a view into its shared pool.)
  const aligned = Uint8Array.prototype.slice.call(bytes, at, at + count * width).buffer;
  page.at = at + count * width;
  if (type === 'DOUBLE') return new Float64Array(aligned);
  if (type === 'FLOAT') return Float64Array.from(new Float32Array(aligned));
  if (type === 'INT32') return Float64Array.from(new Int32Array(aligned));
  const halves = new Int32Array(aligned);
  const out = new Float64Array(count);
  for (let k = 0; k < count; k++) {
    const high = halves[2 * k + 1]!;
    if (high > 0x1fffff || high < -0x1fffff) return Array.from(new BigInt64Array(aligned), exactInteger);
    out[k] = high * 4294967296 + (halves[2 * k]! >>> 0);
  }
  return out;
}

function exactInteger(value: bigint): number | bigint {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

/** `count` length-prefixed UTF-8 strings (malformed bytes read as U+FFFD, as a TextDecoder reads them). */
function readTexts(page: PageBytes, count: number): string[] {
  const bytes = page.bytes;
  const text = new Utf8Text(bytes);
  const out: string[] = new Array(count);
  let at = page.at;
  // The previous value's bytes: a value repeated row after row (the members of a household
  // share its id) is the same string, made once (and the encoder then knows it by identity).
  let previous = -1;
  let previousLength = -1;
  for (let k = 0; k < count; k++) {
    if (at + 4 > bytes.length) throw new Error(`a PLAIN BYTE_ARRAY page holds fewer than its ${count} values`);
    const length = bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24);
    const start = at + 4;
    at = start + length;
    if (length < 0 || at > bytes.length) throw new Error(`a PLAIN BYTE_ARRAY value runs past the end of its page`);
    if (length === previousLength && sameBytes(bytes, previous, start, length)) out[k] = out[k - 1]!;
    else out[k] = text.at(start, at);
    previous = start;
    previousLength = length;
  }
  page.at = at;
  return out;
}

function sameBytes(bytes: Uint8Array, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}

/**
 * Spreads `values` (the non-null values of a page, in order) over its rows: row k takes the
 * next value where `defined[k]` is 1 and `blank` where it is 0.
 */
export function spreadNumbers(values: Float64Array, defined: Int32Array, rows: number): Float64Array {
  const out = new Float64Array(rows);
  let next = 0;
  for (let k = 0; k < rows; k++) out[k] = defined[k] === 1 ? values[next++]! : Number.NaN;
  return out;
}

/** As {@link spreadNumbers}, for cells (null where a row has no value). */
export function spreadCells(values: ArrayLike<CellValue>, defined: Int32Array, rows: number): CellValue[] {
  const out: CellValue[] = new Array(rows);
  let next = 0;
  for (let k = 0; k < rows; k++) out[k] = defined[k] === 1 ? values[next++] : null;
  return out;
}

/** As {@link spreadNumbers}, for dictionary ids (0 where a row has no value). */
export function spreadIds(ids: Uint32Array, defined: Int32Array, rows: number): Uint32Array {
  const out = new Uint32Array(rows);
  let next = 0;
  for (let k = 0; k < rows; k++) if (defined[k] === 1) out[k] = ids[next++]!;
  return out;
}

/** As {@link spreadNumbers}, for dictionary indices (-1 where a row has no value), in place from the back. */
export function spreadIndices(indices: Int32Array, defined: Int32Array, present: number, rows: number): void {
  let next = present - 1;
  for (let k = rows - 1; k >= 0; k--) indices[k] = defined[k] === 1 ? indices[next--]! : -1;
}
