// crosstab-engine column builder: a single-coded variable's buffers in the dataset file (its
// index column, one container per value, its range index), made from the variable's
// dictionary ids in input order. A module of its own (build/columns.wasm) over a memory the
// build shares among its threads (the build's worker threads, src/dataset/build/compile-worker.js,
// or the main thread of a small build): the respondents' order, written once by the main
// thread and read by every thread, then a scratch area per thread. It never allocates: the
// caller (src/dataset/build/column-buffers.js) sizes and lays out the memory and passes addresses.
//
// Respondents are numbered in weight order; bit r of a bitset is bit (r & 7) of byte r >> 3
// (64-bit little-endian words, as the query kernel reads them). Every address passed is
// 64-byte aligned, and an index column's length is a multiple of 64 ranks (the bitsets'
// words), zero past the last respondent: the SIMD loops below read it 16 ranks at a time
// without a tail.

export function columnsAbi(): i32 {
  return 2;
}

/** XXH64 of a buffer as stored (padding included): the file's checksum, made where the buffer is. */
export { xxh64 } from './xxhash64';

/** First byte after this module's own data (64-byte aligned): the caller checks it leaves its reserve alone. */
export function memoryBase(): usize {
  return (__heap_base + 63) & ~(<usize>63);
}

/**
 * The index column: ranks[respondentOf[row]] = remap[ids[row]] for every input row.
 * Reading the ids in input order and writing at random is about twice as fast as gathering
 * them through the order: a random write does not stall the loop, a random read does.
 * `idBytes` and `rankBytes` are 1, 2 or 4 (the ids' and the index column's widths).
 */
export function scatterRanks(ids: usize, idBytes: i32, remap: usize, respondentOf: usize, ranks: usize, rankBytes: i32, rows: i32): void {
  // One loop per pair of widths: a width read inside the loop would cost a branch per row.
  if (idBytes == 1) {
    if (rankBytes == 1) scatter<u8, u8>(ids, remap, respondentOf, ranks, rows);
    else if (rankBytes == 2) scatter<u8, u16>(ids, remap, respondentOf, ranks, rows);
    else scatter<u8, u32>(ids, remap, respondentOf, ranks, rows);
  } else if (idBytes == 2) {
    if (rankBytes == 1) scatter<u16, u8>(ids, remap, respondentOf, ranks, rows);
    else if (rankBytes == 2) scatter<u16, u16>(ids, remap, respondentOf, ranks, rows);
    else scatter<u16, u32>(ids, remap, respondentOf, ranks, rows);
  } else {
    if (rankBytes == 1) scatter<u32, u8>(ids, remap, respondentOf, ranks, rows);
    else if (rankBytes == 2) scatter<u32, u16>(ids, remap, respondentOf, ranks, rows);
    else scatter<u32, u32>(ids, remap, respondentOf, ranks, rows);
  }
}

// @ts-ignore: decorator
@inline
function scatter<I, R>(ids: usize, remap: usize, respondentOf: usize, ranks: usize, rows: i32): void {
  for (let row: usize = 0; row < <usize>rows; row++) {
    const id = <usize>load<I>(ids + (row << alignof<I>()));
    const at = <usize>load<u32>(respondentOf + (row << 2));
    store<R>(ranks + (at << alignof<R>()), <R>load<u32>(remap + (id << 2)));
  }
}

/**
 * The code containers of an index column of 1- or 2-byte ranks (`rankBytes`) and
 * `length` ranks (a multiple of 64, zero-padded).
 *
 * `denseRanks` (u32 each, `denseCount` of them, at most 32: a dense code holds at least a
 * 32nd of the respondents) are the ranks whose container is a bitset, written at the
 * matching u32 address of `denseAt`. `listAt` is indexed by rank (u32 per rank 0..distinct):
 * the address where the next respondent of a listed rank goes, advanced as the loop writes
 * (0 for a blank rank or a dense one, which are never read there).
 *
 * One pass over the index 16 ranks at a time: per dense rank, a compare and a bitmask give
 * its 16 bits at once; the respondents of none of them (listed ranks and blanks) are found
 * from the same masks, and only the listed ones are visited one by one (with ctz), so a
 * column whose respondents are mostly in dense codes costs a few vector ops per 16.
 */
export function codeContainers(ranks: usize, rankBytes: i32, length: i32, denseRanks: usize, denseAt: usize, denseCount: i32, listAt: usize, hasLists: i32): void {
  if (rankBytes == 1) containers8(ranks, length, denseRanks, denseAt, denseCount, listAt, hasLists);
  else containers16(ranks, length, denseRanks, denseAt, denseCount, listAt, hasLists);
}

function containers8(ranks: usize, length: i32, denseRanks: usize, denseAt: usize, denseCount: i32, listAt: usize, hasLists: i32): void {
  const zero = i8x16.splat(0);
  for (let base: usize = 0; base < <usize>length; base += 16) {
    const v = v128.load(ranks + base);
    // Bit i set: rank i of these 16 is blank or dense (not listed).
    let known = i8x16.bitmask(i8x16.eq(v, zero));
    for (let d = 0; d < denseCount; d++) {
      const rank = load<u32>(denseRanks + (<usize>d << 2));
      const bits = i8x16.bitmask(i8x16.eq(v, i8x16.splat(<i8>rank)));
      store<u16>(<usize>load<u32>(denseAt + (<usize>d << 2)) + (base >> 3), <u16>bits);
      known |= bits;
    }
    if (hasLists != 0) appendListed<u8>(ranks, base, known, listAt);
  }
}

function containers16(ranks: usize, length: i32, denseRanks: usize, denseAt: usize, denseCount: i32, listAt: usize, hasLists: i32): void {
  const zero = i16x8.splat(0);
  for (let base: usize = 0; base < <usize>length; base += 16) {
    const low = v128.load(ranks + (base << 1));
    const high = v128.load(ranks + (base << 1) + 16);
    let known = i16x8.bitmask(i16x8.eq(low, zero)) | (i16x8.bitmask(i16x8.eq(high, zero)) << 8);
    for (let d = 0; d < denseCount; d++) {
      const value = i16x8.splat(<i16>load<u32>(denseRanks + (<usize>d << 2)));
      const bits = i16x8.bitmask(i16x8.eq(low, value)) | (i16x8.bitmask(i16x8.eq(high, value)) << 8);
      store<u16>(<usize>load<u32>(denseAt + (<usize>d << 2)) + (base >> 3), <u16>bits);
      known |= bits;
    }
    if (hasLists != 0) appendListed<u16>(ranks, base, known, listAt);
  }
}

/**
 * Appends each of the 16 respondents from `base` whose bit in `known` is clear (a listed
 * rank's) to its rank's list: `listAt` holds, per rank (`R` wide in `ranks`), the address
 * where its next respondent goes, advanced past the one written.
 */
// @ts-ignore: decorator
@inline
function appendListed<R>(ranks: usize, base: usize, known: i32, listAt: usize): void {
  let listed = ~known & 0xffff;
  while (listed != 0) {
    const r = base + <usize>ctz(listed);
    listed &= listed - 1;
    const slot = listAt + (<usize>load<R>(ranks + (r << alignof<R>())) << 2);
    const at = load<u32>(slot);
    store<u32>(at, <u32>r);
    store<u32>(slot, at + 4);
  }
}

/**
 * One step of a range index made from the code containers, from the top rank down: the
 * bitset at `bits` (of `bitsetBytes`) becomes the respondents of rank k or more by ORing in
 * rank k's container at `code`: a bitset (`listCount` < 0) 16 bytes at a time, or a list of
 * `listCount` respondents bit by bit. The caller starts from a zeroed bitset at the top rank
 * and copies the bitset out after each step. Cheaper than setting each respondent's bit from
 * its rank (a pass over every row writing to as many bitsets as there are values): each
 * bitset is written once, in order, and only one lives in this memory.
 */
export function rangeStep(bits: usize, bitsetBytes: usize, code: usize, listCount: i32): void {
  if (listCount < 0) {
    let i: usize = 0;
    for (; i + 16 <= bitsetBytes; i += 16) v128.store(bits + i, v128.or(v128.load(bits + i), v128.load(code + i)));
    for (; i < bitsetBytes; i++) store<u8>(bits + i, load<u8>(bits + i) | load<u8>(code + i));
    return;
  }
  for (let j = 0; j < listCount; j++) {
    const r = <usize>load<u32>(code + (<usize>j << 2));
    const byte = bits + (r >> 3);
    store<u8>(byte, load<u8>(byte) | <u8>(1 << <u8>(r & 7)));
  }
}
