import { bitsAt, type PageBytes, runHeader } from './parquet-pages.js';

/**
 * A dictionary-encoded Parquet data page (the RLE/bit-packed hybrid of indices into the
 * chunk's dictionary page) decoded straight into column ids: no array of indices between
 * decoding and encoding, one lookup per value in an array of ids by index, and a run of
 * equal indices (RLE) looked up and counted once.
 */

/** The ids of one dictionary page's values, as its column numbers them. */
export interface DictionaryIds {
  /** Id per dictionary index (-1: not looked up yet; 0: a blank value). */
  known: Int32Array;
  /** Rows per dictionary index decoded since the column last counted them. */
  rows: Uint32Array;
  /** Numbers `index`'s value (see ColumnEncoder.wordId); throws for an index past the dictionary. */
  lookUp: (index: number) => number;
}

/**
 * Reads `count` dictionary indices of `width` bits from `page.at` up to `end` into `out` as
 * ids, looking each index up the first time a row shows it (so values are numbered in the
 * order rows show them, as ColumnEncoder.setIndexed numbers them) and counting rows per
 * index in `dictionary.rows`. Values past `count` in the last bit-packed run are padding.
 */
export function readDictionaryIds(page: PageBytes, end: number, width: number, dictionary: DictionaryIds, out: Uint32Array, count: number): void {
  const { known, rows } = dictionary;
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
          const index = window & mask;
          window >>>= width;
          bits -= width;
          let id = known[index]!;
          // Not `id < 0`: an index past `known` reads undefined, which must reach lookUp's check.
          if (!(id >= 0)) id = dictionary.lookUp(index);
          out[seen++] = id;
          rows[index]!++;
        }
      } else {
        for (let k = 0; seen < stop; k++) {
          const index = bitsAt(bytes, at, k * width, width) >>> 0;
          let id = known[index]!;
          if (!(id >= 0)) id = dictionary.lookUp(index);
          out[seen++] = id;
          rows[index]!++;
        }
      }
      at = runEnd;
    } else {
      const repeat = Math.min(Math.floor(header / 2), count - seen);
      let index = 0;
      for (let i = 0; i < valueBytes; i++) index += bytes[at++]! * 2 ** (8 * i);
      if (repeat === 0) continue;
      let id = known[index]!;
      if (!(id >= 0)) id = dictionary.lookUp(index);
      out.fill(id, seen, seen + repeat);
      rows[index]! += repeat;
      seen += repeat;
    }
  }
  page.at = at;
}

/**
 * Spreads `ids[0 .. present - 1]` (a page's rows that have a value, in order) over its `rows`
 * rows in place, from the back: row k takes the next id where `defined[k]` is 1, 0 (blank) where it is 0.
 */
export function spreadIdsInPlace(ids: Uint32Array, defined: Int32Array, present: number, rows: number): void {
  // Without a branch on the level (nulls come and go at random): `& -1` keeps the id, `& 0` blanks it.
  let next = present - 1;
  let k = rows - 1;
  for (; next >= 0; k--) {
    const level = defined[k]!;
    ids[k] = ids[next]! & -level;
    next -= level;
  }
  // The rows before the first with a value.
  ids.fill(0, 0, k + 1);
}
