// crosstab-engine Parquet page decoder: the RLE/bit-packed hybrid of a dictionary-encoded
// data page (definition levels and dictionary indices) decoded into the column's ids. A
// module of its own (build/parquet.wasm), instantiated once per reading thread with a memory
// of its own (src/dataset/input/parquet-dictionary-ids.ts owns the layout); it allocates
// only when the caller asks for larger buffers, never inside a loop.
//
// A page is decoded in three calls, so that new dictionary values are numbered by the
// caller in the order rows first show them (as a column numbers values read one by one):
//   readLevels   definition levels (1 bit each) into one byte per row, 0 or 1;
//   readIndices  the indices into u32s, rows counted per index, and the indices seen for
//                the first time (known[index] == -1) listed in row order;
//   writeIds     after the caller has numbered those: each row's id (known[index]; 0 for a
//                row without a value) in 1, 2 or 4 bytes, the width of the column's ids;
//                or, for a weight column, writeNumbers: each row's number from the dictionary.
//
// Buffers the caller copies bytes into are followed by SLACK bytes it zeroes: bit-packed
// values are read 8 bytes at a time.

/** Bytes after every buffer, read over by 8-byte loads. */
const SLACK: usize = 16;

/** Why a call failed (a negative return value); the detail() is then the row or index. */
export const FAIL_RUN_PAST_END: i32 = -1;
export const FAIL_INDEX_PAST_DICTIONARY: i32 = -2;
export const FAIL_LEVEL_ABOVE_ONE: i32 = -3;
export const FAIL_VALUES_PAST_END: i32 = -4;

let failure: u32 = 0;

/** Version of the exports' contract, checked by the caller against the module it loads. */
export function parquetAbi(): i32 {
  return 2;
}

/** Memory for the caller's buffers. Never freed: the caller reuses them and asks again only to grow. */
export function allocate(bytes: usize): usize {
  return heap.alloc(bytes + SLACK);
}

/** What the last failing call failed at: the values read so far (runs), or the index or level found. */
export function detail(): u32 {
  return failure;
}

/**
 * The ULEB128 run header at `at` (the run's length times 2, plus 1 for a bit-packed run);
 * the position after it goes to `headerEnd`. Headers are at most 5 bytes (u32).
 */
let headerEnd: usize = 0;
@inline function runHeader(at: usize): u32 {
  let header: u32 = 0;
  let shift: u32 = 0;
  let byte: u32;
  do {
    byte = <u32>load<u8>(at++);
    if (shift < 32) header |= (byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80);
  headerEnd = at;
  return header;
}

/**
 * `count` definition levels (the hybrid at width 1) from `src` up to `end` into `levels`,
 * one byte (0 or 1) per row. Returns how many are 1, or a FAIL_ code: a run starting at or
 * after `end` (detail: levels read), a level above 1 (detail: the level), a bit-packed run
 * whose bytes pass `end` (detail: levels read).
 */
export function readLevels(src: usize, end: usize, count: u32, levels: usize): i32 {
  let at = src;
  let seen: u32 = 0;
  let ones: u32 = 0;
  while (seen < count) {
    if (at >= end) {
      failure = seen;
      return FAIL_RUN_PAST_END;
    }
    const header = runHeader(at);
    at = headerEnd;
    const length = header >>> 1;
    if (header & 1) {
      // Groups of 8 levels, a byte each.
      const stop = <u32>min<u64>(count, <u64>seen + (<u64>length << 3));
      const bytes = (stop - seen + 7) >>> 3;
      if (at + bytes > end) {
        failure = seen;
        return FAIL_VALUES_PAST_END;
      }
      let out = levels + seen;
      while (seen + 8 <= stop) {
        const packed = <u32>load<u8>(at++);
        ones += popcnt<u32>(packed);
        store<u64>(out, spreadBits(packed));
        out += 8;
        seen += 8;
      }
      if (seen < stop) {
        const packed = <u32>load<u8>(at);
        for (let bit: u32 = 0; seen < stop; bit++) {
          const level = (packed >>> bit) & 1;
          store<u8>(levels + seen, <u8>level);
          ones += level;
          seen++;
        }
      }
      // The run's bytes end after all its groups, read or not (a run said to pass `end` stops there).
      at = <usize>min<u64>(<u64>headerEnd + length, end);
    } else {
      const repeat = min(length, count - seen);
      if (at >= end) {
        failure = seen;
        return FAIL_VALUES_PAST_END;
      }
      const level = <u32>load<u8>(at++);
      if (level > 1) {
        failure = level;
        return FAIL_LEVEL_ABOVE_ONE;
      }
      fillBytes(levels + seen, level, repeat);
      ones += level * repeat;
      seen += repeat;
    }
  }
  return <i32>ones;
}

/** `n` bytes of `value` (0 or 1) from `at`: short runs by 8-byte stores (memory.fill is a call, costly for the runs of 8 to 30 levels nulls make). */
@inline function fillBytes(at: usize, value: u32, n: u32): void {
  if (n >= 256) {
    memory.fill(at, <u8>value, n);
    return;
  }
  const splat = <u64>value * 0x0101010101010101;
  const end = at + n;
  while (at + 8 <= end) {
    store<u64>(at, splat);
    at += 8;
  }
  while (at < end) store<u8>(at++, <u8>value);
}

/** Bit b of `packed` (8 bits) as byte b (0 or 1) of the result. */
@inline function spreadBits(packed: u32): u64 {
  // Halves, then quarters, then single bits moved apart until each sits at the bottom of its byte.
  let x = <u64>packed;
  x = (x | (x << 28)) & 0x0000000f0000000f;
  x = (x | (x << 14)) & 0x0003000300030003;
  x = (x | (x << 7)) & 0x0101010101010101;
  return x;
}

/**
 * `count` dictionary indices of `width` bits (0..32) from `src` up to `end` into `indices`
 * (u32 each), adding each row to `rows[index]` (u32 per index) and listing in `fresh` (u32
 * each, in row order) every index whose `known` (i32 per index) is -1, marking it -2 so that
 * it is listed once. Returns how many were listed, or a FAIL_ code: a run starting at or
 * after `end` or a bit-packed run whose bytes pass `end` (detail: indices read), an index not
 * below `dictionary` (detail: the index). Values past `count` in the last run are padding.
 */
export function readIndices(src: usize, end: usize, width: u32, count: u32, indices: usize, known: usize, rows: usize, dictionary: u32, fresh: usize): i32 {
  let at = src;
  let seen: u32 = 0;
  let listed: u32 = 0;
  const mask: u64 = (<u64>1 << <u64>width) - 1;
  const valueBytes = (width + 7) >>> 3;
  while (seen < count) {
    if (at >= end) {
      failure = seen;
      return FAIL_RUN_PAST_END;
    }
    const header = runHeader(at);
    at = headerEnd;
    const length = header >>> 1;
    if (header & 1) {
      const stop = <u32>min<u64>(count, <u64>seen + (<u64>length << 3));
      const taken = stop - seen;
      if (<u64>at + ((<u64>taken * width + 7) >>> 3) > <u64>end) {
        failure = seen;
        return FAIL_VALUES_PAST_END;
      }
      // Value k of the run starts at bit k * width: one unaligned 8-byte load holds it (7 + 32 bits at most).
      let bit: usize = 0;
      for (let k: u32 = 0; k < taken; k++) {
        const index = <u32>((load<u64>(at + (bit >>> 3)) >>> <u64>(bit & 7)) & mask);
        bit += width;
        if (index >= dictionary) {
          failure = index;
          return FAIL_INDEX_PAST_DICTIONARY;
        }
        const slot = rows + (<usize>index << 2);
        store<u32>(slot, load<u32>(slot) + 1);
        const knownAt = known + (<usize>index << 2);
        if (load<i32>(knownAt) == -1) {
          store<i32>(knownAt, -2);
          store<u32>(fresh + (<usize>listed << 2), index);
          listed++;
        }
        store<u32>(indices + (<usize>(seen + k) << 2), index);
      }
      seen = stop;
      at = <usize>min<u64>(<u64>at + <u64>length * width, end);
    } else {
      const repeat = min(length, count - seen);
      if (at + valueBytes > end) {
        failure = seen;
        return FAIL_VALUES_PAST_END;
      }
      let index: u32 = 0;
      for (let i: u32 = 0; i < valueBytes; i++) index |= <u32>load<u8>(at + i) << (i << 3);
      at += valueBytes;
      if (repeat == 0) continue;
      if (index >= dictionary) {
        failure = index;
        return FAIL_INDEX_PAST_DICTIONARY;
      }
      const slot = rows + (<usize>index << 2);
      store<u32>(slot, load<u32>(slot) + repeat);
      const knownAt = known + (<usize>index << 2);
      if (load<i32>(knownAt) == -1) {
        store<i32>(knownAt, -2);
        store<u32>(fresh + (<usize>listed << 2), index);
        listed++;
      }
      fillU32(indices + (<usize>seen << 2), index, repeat);
      seen += repeat;
    }
  }
  return <i32>listed;
}

/** `n` u32s of `value` from `at`, 4 at a time. */
@inline function fillU32(at: usize, value: u32, n: u32): void {
  const splat = i32x4.splat(<i32>value);
  const end = at + (<usize>n << 2);
  while (at + 16 <= end) {
    v128.store(at, splat);
    at += 16;
  }
  while (at < end) {
    store<u32>(at, value);
    at += 4;
  }
}

/**
 * Row ids of a page into `out`, `idBytes` (1, 2 or 4) each: row k's id is known[index] of
 * its index, the rows with a value taking `indices` in order. With `levels` 0 every row has
 * a value; else row k has one where levels[k] is 1 and is 0 (blank) where it is 0. Every
 * index in `indices` must be known (numbered) by now.
 */
export function writeIds(indices: usize, levels: usize, count: u32, present: u32, known: usize, out: usize, idBytes: u32): void {
  if (levels == 0) {
    if (idBytes == 1) for (let k: usize = 0; k < count; k++) store<u8>(out + k, <u8>load<i32>(known + (<usize>load<u32>(indices + (k << 2)) << 2)));
    else if (idBytes == 2) for (let k: usize = 0; k < count; k++) store<u16>(out + (k << 1), <u16>load<i32>(known + (<usize>load<u32>(indices + (k << 2)) << 2)));
    else for (let k: usize = 0; k < count; k++) store<u32>(out + (k << 2), <u32>load<i32>(known + (<usize>load<u32>(indices + (k << 2)) << 2)));
    return;
  }
  // Without a branch on the level (nulls come and go at random): the next index is read for
  // every row (index 0 past the last: always a known slot) and kept only where the level is 1.
  store<u32>(indices + (<usize>present << 2), 0);
  let next: usize = 0;
  if (idBytes == 1) {
    for (let k: usize = 0; k < count; k++) {
      const level = <u32>load<u8>(levels + k);
      const id = <u32>load<i32>(known + (<usize>load<u32>(indices + (next << 2)) << 2));
      store<u8>(out + k, <u8>(id & (0 - level)));
      next += level;
    }
  } else if (idBytes == 2) {
    for (let k: usize = 0; k < count; k++) {
      const level = <u32>load<u8>(levels + k);
      const id = <u32>load<i32>(known + (<usize>load<u32>(indices + (next << 2)) << 2));
      store<u16>(out + (k << 1), <u16>(id & (0 - level)));
      next += level;
    }
  } else {
    for (let k: usize = 0; k < count; k++) {
      const level = <u32>load<u8>(levels + k);
      const id = <u32>load<i32>(known + (<usize>load<u32>(indices + (next << 2)) << 2));
      store<u32>(out + (k << 2), id & (0 - level));
      next += level;
    }
  }
}

/**
 * A weight column's page as numbers into `out` (f64 each): row k's number is words[index] of
 * its index (`words`: f64 per dictionary index), NaN (blank, which the caller refuses) where
 * `levels` (0: every row has a value) says the row has none.
 */
export function writeNumbers(indices: usize, levels: usize, count: u32, present: u32, words: usize, out: usize): void {
  if (levels == 0) {
    for (let k: usize = 0; k < count; k++) store<f64>(out + (k << 3), load<f64>(words + (<usize>load<u32>(indices + (k << 2)) << 3)));
    return;
  }
  store<u32>(indices + (<usize>present << 2), 0);
  let next: usize = 0;
  for (let k: usize = 0; k < count; k++) {
    const level = <u32>load<u8>(levels + k);
    const number = load<f64>(words + (<usize>load<u32>(indices + (next << 2)) << 3));
    store<f64>(out + (k << 3), select<f64>(number, NaN, level != 0));
    next += level;
  }
}
