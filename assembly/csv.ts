// crosstab-engine CSV encoder: tokenizes CSV bytes, dictionary-encodes columns and parses
// weights, so that the build never makes a JavaScript string per field. A module
// of its own (build/csv.wasm): it runs in the build's worker threads, each with a memory of
// its own, and allocates (its dictionaries grow with the data), which the query kernel
// never does.
//
// The caller (src/dataset/input/csv-worker.js) copies a chunk of whole lines (each ending with
// '\n') into `src`, zero-padded to a multiple of 64 bytes, and calls encodeChunk. A line the
// fast path cannot take (a quote or '\r', i.e. quoted fields, CRLF or CR endings; or a field
// count other than the header's) stops it at that line's first byte, and the JavaScript
// reader reads from there (src/dataset/input/csv-chunks.ts), so both give the same table or the
// same error. Weights this code cannot convert exactly (see parseWeight) are listed for the
// caller, which converts them as the JavaScript reader does (or finds them invalid).
//
// Per dictionary column, a header of DICT_BYTES at dicts + d * DICT_BYTES:
//   0 u32 table: open-addressing slots (u32 id, 0 = empty), a power of two of them
//   4 u32 mask: slots - 1
//   8 u32 count: ids handed out; ids are 1-based, in first-seen order
//  12 u32 entries: per id (id - 1) 12 bytes: u32 key offset in the arena, u32 length, u32 hash
//  16 u32 entries capacity (ids)
//  20 u32 arena: the keys' bytes, back to back
//  24 u32 arena used
//  28 u32 arena capacity
//  32 u32 last id (the previous row's value: survey files repeat values row after row)
// Column ids are written column-major: ids + (slot * rowCap + row) * 4, weights likewise.

export function csvAbi(): i32 {
  return 2;
}

/** Bytes of one dictionary's header (see above). */
export const DICT_BYTES: usize = 40;
/** Bytes of the status record encodeChunk writes: u32 consumed bytes, u32 stop reason, u32 rows, u32 listed weights. */
export const STATUS_BYTES: usize = 16;
/** Bytes of a listed weight: u32 row, u32 weight slot, u32 line start, u32 field start, u32 field end (offsets in src). */
export const LISTED_WEIGHT_BYTES: usize = 20;
/** Kinds of column (the `kinds` byte per column). */
export const KIND_SKIP: u8 = 0;
export const KIND_DICTIONARY: u8 = 1;
export const KIND_WEIGHT: u8 = 2;
/** Why encodeChunk stopped. */
export const STOP_END: u32 = 0;
export const STOP_SPECIAL: u32 = 1;
export const STOP_FIELD_COUNT: u32 = 2;
export const STOP_ROWS: u32 = 3;

const ENTRY_BYTES: usize = 12;
/** Slack after every buffer that is read 8 bytes at a time (keys, fields). */
const SLACK: usize = 16;

const COMMA: u8 = 0x2c;
const LF: u8 = 0x0a;
const CR: u8 = 0x0d;
const QUOTE: u8 = 0x22;

const P1: u64 = 0x9e3779b185ebca87;
const P2: u64 = 0xc2b2ae3d27d4eb4f;
const P3: u64 = 0x165667b19e3779f9;

/** Exact powers of ten 10^0 .. 10^22 (every one is a double exactly). */
const POW10 = memory.data<f64>([1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]);

/** Memory for the caller's buffers (chunk, outputs). Never freed: the caller reuses them. */
export function allocate(bytes: usize): usize {
  return heap.alloc(bytes + SLACK);
}

/** `n` empty dictionaries; returns the address of the first header. */
export function newDictionaries(n: i32): usize {
  const dicts = heap.alloc(<usize>max(n, 1) * DICT_BYTES);
  for (let d = 0; d < n; d++) {
    const dict = dicts + <usize>d * DICT_BYTES;
    const slots: usize = 1024;
    const table = heap.alloc(slots << 2);
    memory.fill(table, 0, slots << 2);
    store<u32>(dict, <u32>table, 0);
    store<u32>(dict, <u32>(slots - 1), 4);
    store<u32>(dict, 0, 8);
    const entries: u32 = 256;
    store<u32>(dict, <u32>heap.alloc(<usize>entries * ENTRY_BYTES), 12);
    store<u32>(dict, entries, 16);
    const arena: u32 = 4096;
    store<u32>(dict, <u32>heap.alloc(<usize>arena + SLACK), 20);
    store<u32>(dict, 0, 24);
    store<u32>(dict, arena, 28);
    store<u32>(dict, 0, 32);
  }
  return dicts;
}

// @ts-ignore: decorator
@inline function hashBytes(p: usize, len: usize): u32 {
  let h: u64 = <u64>len * P1;
  let i: usize = 0;
  for (; i + 8 <= len; i += 8) h = rotl<u64>((h ^ load<u64>(p + i)) * P2, 29);
  if (i < len) h = (h ^ (load<u64>(p + i) & ((<u64>1 << (<u64>(len - i) << 3)) - 1))) * P2;
  h ^= h >> 32;
  h *= P3;
  h ^= h >> 29;
  return <u32>h;
}

/** Whether the `len` bytes at a and b are equal (both may be read up to 8 bytes past their end). */
// @ts-ignore: decorator
@inline function sameBytes(a: usize, b: usize, len: usize): bool {
  let i: usize = 0;
  for (; i + 8 <= len; i += 8) if (load<u64>(a + i) != load<u64>(b + i)) return false;
  if (i == len) return true;
  const mask = (<u64>1 << (<u64>(len - i) << 3)) - 1;
  return ((load<u64>(a + i) ^ load<u64>(b + i)) & mask) == 0;
}

/** The id of the value at p (len > 0 bytes) in `dict`, adding it if new. */
function lookup(dict: usize, p: usize, len: usize): u32 {
  const entries = <usize>load<u32>(dict, 12);
  const arena = <usize>load<u32>(dict, 20);
  // The previous row's value: no hashing.
  const last = load<u32>(dict, 32);
  if (last != 0) {
    const entry = entries + <usize>(last - 1) * ENTRY_BYTES;
    if (<usize>load<u32>(entry, 4) == len && sameBytes(arena + <usize>load<u32>(entry), p, len)) return last;
  }
  const hash = hashBytes(p, len);
  const table = <usize>load<u32>(dict, 0);
  const mask = load<u32>(dict, 4);
  let slot = hash & mask;
  while (true) {
    const id = load<u32>(table + (<usize>slot << 2));
    if (id == 0) break;
    const entry = entries + <usize>(id - 1) * ENTRY_BYTES;
    if (load<u32>(entry, 8) == hash && <usize>load<u32>(entry, 4) == len && sameBytes(arena + <usize>load<u32>(entry), p, len)) {
      store<u32>(dict, id, 32);
      return id;
    }
    slot = (slot + 1) & mask;
  }
  const id = insert(dict, p, len, hash, slot);
  store<u32>(dict, id, 32);
  return id;
}

/** Adds a new value whose hash slot is free at `slot`; grows the table, entries and arena as needed. */
function insert(dict: usize, p: usize, len: usize, hash: u32, slot: u32): u32 {
  const id = load<u32>(dict, 8) + 1;
  // Entries.
  let entries = <usize>load<u32>(dict, 12);
  const capacity = load<u32>(dict, 16);
  if (id > capacity) {
    const grown = capacity << 1;
    const moved = heap.alloc(<usize>grown * ENTRY_BYTES);
    memory.copy(moved, entries, <usize>capacity * ENTRY_BYTES);
    entries = moved;
    store<u32>(dict, <u32>moved, 12);
    store<u32>(dict, grown, 16);
  }
  // Arena.
  let arena = <usize>load<u32>(dict, 20);
  const used = load<u32>(dict, 24);
  const room = load<u32>(dict, 28);
  if (<usize>used + len > <usize>room) {
    let grown = room << 1;
    while (<usize>grown < <usize>used + len) grown <<= 1;
    const moved = heap.alloc(<usize>grown + SLACK);
    memory.copy(moved, arena, <usize>used);
    arena = moved;
    store<u32>(dict, <u32>moved, 20);
    store<u32>(dict, grown, 28);
  }
  memory.copy(arena + <usize>used, p, len);
  const entry = entries + <usize>(id - 1) * ENTRY_BYTES;
  store<u32>(entry, used);
  store<u32>(entry, <u32>len, 4);
  store<u32>(entry, hash, 8);
  store<u32>(dict, used + <u32>len, 24);
  store<u32>(dict, id, 8);
  store<u32>(<usize>load<u32>(dict, 0) + (<usize>slot << 2), id);
  // Keep the table at most half full.
  const mask = load<u32>(dict, 4);
  if (id << 1 > mask + 1) rehash(dict, (mask + 1) << 1);
  return id;
}

function rehash(dict: usize, slots: u32): void {
  const table = heap.alloc(<usize>slots << 2);
  memory.fill(table, 0, <usize>slots << 2);
  const mask = slots - 1;
  const entries = <usize>load<u32>(dict, 12);
  const count = load<u32>(dict, 8);
  for (let id: u32 = 1; id <= count; id++) {
    let slot = load<u32>(entries + <usize>(id - 1) * ENTRY_BYTES, 8) & mask;
    while (load<u32>(table + (<usize>slot << 2)) != 0) slot = (slot + 1) & mask;
    store<u32>(table + (<usize>slot << 2), id);
  }
  store<u32>(dict, <u32>table, 0);
  store<u32>(dict, mask, 4);
}

/**
 * Ids of `count` length-prefixed values (Parquet's PLAIN BYTE_ARRAY: a u32 length, then the
 * bytes) from `src` up to `end` into `ids` (u32 each; 0 for an empty value, which is blank),
 * numbering new values in `dict` as encodeChunk numbers fields. `src` must have SLACK bytes
 * after `end` (allocate() gives them): keys are compared 8 bytes at a time. Returns the
 * bytes read, or -1 when a value runs past `end`.
 */
export function encodeLengthPrefixed(dict: usize, src: usize, end: usize, count: u32, ids: usize): i32 {
  let p = src;
  for (let k: u32 = 0; k < count; k++) {
    if (p + 4 > end) return -1;
    const len = <usize>load<u32>(p);
    p += 4;
    if (len > end - p) return -1;
    store<u32>(ids + (<usize>k << 2), len == 0 ? 0 : lookup(dict, p, len));
    p += len;
  }
  return <i32>(p - src);
}

/**
 * Ids of `count` Arrow Utf8 values, value k being the bytes `bytes + offsets[k] ..
 * bytes + offsets[k + 1]` (`offsets`: i32 each), into `ids` (u32 each; 0 for an empty value
 * or a null row, bit `validityOffset + k` of `validity` clear; `validity` 0: none), numbering
 * new values in `dict` as encodeLengthPrefixed does. `bytes` must have SLACK bytes after
 * `bytesLength` (allocate() gives them). Returns 0, or -1 when an offset is negative, out of
 * order or past `bytesLength` (then nothing is numbered).
 */
export function encodeOffsets(dict: usize, offsets: usize, bytes: usize, bytesLength: u32, count: u32, validity: usize, validityOffset: u32, ids: usize): i32 {
  let previous = load<i32>(offsets);
  if (previous < 0) return -1;
  for (let k: u32 = 1; k <= count; k++) {
    const next = load<i32>(offsets + (<usize>k << 2));
    if (next < previous || <u32>next > bytesLength) return -1;
    previous = next;
  }
  for (let k: u32 = 0; k < count; k++) {
    const start = load<i32>(offsets + (<usize>k << 2));
    const len = <usize>(load<i32>(offsets + (<usize>(k + 1) << 2)) - start);
    let id: u32 = 0;
    const bit = validityOffset + k;
    if (len > 0 && (validity == 0 || ((load<u8>(validity + <usize>(bit >> 3)) >> (bit & 7)) & 1) != 0)) id = lookup(dict, bytes + <usize>start, len);
    store<u32>(ids + (<usize>k << 2), id);
  }
  return 0;
}

/** Ids handed out by `dict`. */
export function dictionaryCount(dict: usize): u32 {
  return load<u32>(dict, 8);
}

/** Address of the bytes of value `id` of `dict` (its length: dictionaryValueLength). */
export function dictionaryValue(dict: usize, id: u32): usize {
  return <usize>load<u32>(dict, 20) + <usize>load<u32>(<usize>load<u32>(dict, 12) + <usize>(id - 1) * ENTRY_BYTES);
}

export function dictionaryValueLength(dict: usize, id: u32): u32 {
  return load<u32>(<usize>load<u32>(dict, 12) + <usize>(id - 1) * ENTRY_BYTES, 4);
}

/**
 * Where the bytes of values `from` .. (the last id) start: a dictionary's values lie back to
 * back in id order, so the values new in a chunk are one run of bytes, from here to
 * dictionaryBytesEnd. Their lengths go to `lengths` (u32 each).
 */
export function dictionaryNewValues(dict: usize, from: u32, lengths: usize): usize {
  const count = load<u32>(dict, 8);
  const entries = <usize>load<u32>(dict, 12);
  for (let id = from; id <= count; id++) store<u32>(lengths + (<usize>(id - from) << 2), load<u32>(entries + <usize>(id - 1) * ENTRY_BYTES, 4));
  return from > count ? dictionaryBytesEnd(dict) : dictionaryValue(dict, from);
}

/** The end of a dictionary's value bytes. */
export function dictionaryBytesEnd(dict: usize): usize {
  return <usize>load<u32>(dict, 20) + <usize>load<u32>(dict, 24);
}

/** Set by parseWeight when the field is not a weight it converts exactly. */
let weightFailed = false;

/**
 * The number a weight field is, exactly as JavaScript's Number() reads the text, for text
 * the JavaScript reader accepts (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/, >= 0). Exact by
 * Clinger's fast path: a decimal significand w <= 2^53 and a power of ten 10^e with
 * |e| <= 22 are both doubles exactly, so one IEEE multiplication or division rounds the
 * true value correctly. Anything else (more digits, larger exponents, negative numbers,
 * blanks, other text) sets weightFailed: encodeChunk lists the field for its caller.
 */
function parseWeight(p: usize, end: usize): f64 {
  let i = p;
  let negative = false;
  let c = i < end ? load<u8>(i) : 0;
  if (c == 0x2b || c == 0x2d) {
    negative = c == 0x2d;
    i++;
  }
  let significand: u64 = 0;
  let digits = 0;
  let exponent: i32 = 0;
  let sawDigit = false;
  let afterPoint = false;
  // Digits, with at most one '.' among them (`5.`, `.5` and `5.5`; `.` alone has no digit).
  while (i < end) {
    const c = load<u8>(i);
    if (c == 0x2e && !afterPoint) {
      afterPoint = true;
      i++;
      continue;
    }
    const d = <u32>c - 0x30;
    if (d > 9) break;
    sawDigit = true;
    if (afterPoint) exponent--;
    if (significand != 0 || d != 0) {
      if (++digits > 17) {
        weightFailed = true;
        return 0;
      }
      significand = significand * 10 + d;
    }
    i++;
  }
  if (!sawDigit) {
    weightFailed = true;
    return 0;
  }
  if (i < end && (load<u8>(i) | 0x20) == 0x65) {
    i++;
    let negativeExponent = false;
    c = i < end ? load<u8>(i) : 0;
    if (c == 0x2b || c == 0x2d) {
      negativeExponent = c == 0x2d;
      i++;
    }
    let e: i32 = 0;
    let eDigits = 0;
    while (i < end) {
      const d = <u32>load<u8>(i) - 0x30;
      if (d > 9) break;
      if (e < 100000) e = e * 10 + <i32>d;
      eDigits++;
      i++;
    }
    if (eDigits == 0) {
      weightFailed = true;
      return 0;
    }
    exponent += negativeExponent ? -e : e;
  }
  if (i != end) {
    weightFailed = true;
    return 0;
  }
  if (significand == 0) return negative ? -0.0 : 0.0;
  if (negative || significand > (<u64>1 << 53)) {
    weightFailed = true;
    return 0;
  }
  const value = <f64>significand;
  if (exponent == 0) return value;
  if (exponent > 0 && exponent <= 22) return value * load<f64>(POW10 + (<usize>exponent << 3));
  if (exponent < 0 && exponent >= -22) return value / load<f64>(POW10 + (<usize>-exponent << 3));
  weightFailed = true;
  return 0;
}

/**
 * Encodes the lines of `src` (`len` bytes of whole lines, zero-padded to a multiple of 64)
 * until the end, a line it cannot take, or `rowCap` rows. `kinds` has a byte per column,
 * `slots` a u32 per column (its dictionary or weight number). Weights parseWeight cannot
 * convert go to `listed` (room for rowCap per weight slot) with NaN in their place. Writes
 * the status record (consumed bytes: where the first line not taken starts; stop reason;
 * rows; listed weights) at `status` and returns the rows encoded.
 *
 * Delimiters are found 64 bytes at a time: four SIMD compares per class give a bit mask of
 * the commas and line feeds, and one of the quotes and carriage returns, so the loop visits
 * fields, not bytes.
 */
export function encodeChunk(
  src: usize,
  len: u32,
  columns: i32,
  kinds: usize,
  slots: usize,
  dicts: usize,
  ids: usize,
  weights: usize,
  rowCap: u32,
  listed: usize,
  status: usize,
): u32 {
  let listedCount: u32 = 0;
  const comma = i8x16.splat(COMMA);
  const lf = i8x16.splat(LF);
  const quote = i8x16.splat(QUOTE);
  const cr = i8x16.splat(CR);
  const rowStride = <usize>rowCap;
  let row: u32 = 0;
  let column: i32 = 0;
  let lineStart: usize = 0;
  let fieldStart: usize = 0;
  let reason = STOP_END;
  // The first quote or '\r' seen so far (u32 max: none yet).
  let special: usize = <usize>u32.MAX_VALUE;
  const blocks = (<usize>len + 63) >> 6;
  for (let block: usize = 0; block < blocks && reason == STOP_END; block++) {
    const base = src + (block << 6);
    let delimiters: u64 = 0;
    let specials: u64 = 0;
    for (let k: usize = 0; k < 4; k++) {
      const v = v128.load(base + (k << 4));
      delimiters |= <u64>i8x16.bitmask(v128.or(i8x16.eq(v, comma), i8x16.eq(v, lf))) << (<u64>k << 4);
      specials |= <u64>i8x16.bitmask(v128.or(i8x16.eq(v, quote), i8x16.eq(v, cr))) << (<u64>k << 4);
    }
    if (specials != 0 && special == <usize>u32.MAX_VALUE) special = (block << 6) + <usize>ctz(specials);
    while (delimiters != 0) {
      const at = (block << 6) + <usize>ctz(delimiters);
      delimiters &= delimiters - 1;
      if (special < at) {
        reason = STOP_SPECIAL;
        break;
      }
      const isLf = load<u8>(src + at) == LF;
      if (column >= columns || (isLf && column != columns - 1)) {
        reason = STOP_FIELD_COUNT;
        break;
      }
      const kind = load<u8>(kinds + <usize>column);
      if (kind == KIND_DICTIONARY) {
        const slot = <usize>load<u32>(slots + (<usize>column << 2));
        const fieldLength = at - fieldStart;
        const id = fieldLength == 0 ? 0 : lookup(dicts + slot * DICT_BYTES, src + fieldStart, fieldLength);
        store<u32>(ids + ((slot * rowStride + <usize>row) << 2), id);
      } else if (kind == KIND_WEIGHT) {
        const slot = <usize>load<u32>(slots + (<usize>column << 2));
        let value = parseWeight(src + fieldStart, src + at);
        if (weightFailed) {
          weightFailed = false;
          value = NaN;
          const entry = listed + <usize>listedCount * LISTED_WEIGHT_BYTES;
          store<u32>(entry, row, 0);
          store<u32>(entry, <u32>slot, 4);
          store<u32>(entry, <u32>lineStart, 8);
          store<u32>(entry, <u32>fieldStart, 12);
          store<u32>(entry, <u32>at, 16);
          listedCount++;
        }
        store<f64>(weights + ((slot * rowStride + <usize>row) << 3), value);
      }
      fieldStart = at + 1;
      if (isLf) {
        row++;
        column = 0;
        lineStart = fieldStart;
        if (row == rowCap) {
          if (lineStart < <usize>len) reason = STOP_ROWS;
          break;
        }
      } else column++;
    }
  }
  store<u32>(status, <u32>lineStart, 0);
  store<u32>(status, reason, 4);
  store<u32>(status, row, 8);
  store<u32>(status, listedCount, 12);
  return row;
}

// Typed number columns (Arrow Int and Float buffers), numbered in this module's memory too.
export { newNumberColumn, numberCount, numberKeys, numberRows, encodeNumbers } from './typed-numbers';
