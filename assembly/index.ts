// crosstab-engine kernel: bitset algebra, popcounts and weighted sums over raw memory.
//
// Memory layout (owned by src/kernel/, described there in detail):
// - A bitset over N respondents is `words` little-endian u64 words, where `words` is
//   N/64 rounded up to an even number, so every loop can step in 128-bit SIMD lanes with
//   no scalar tail. Bits at positions >= N are always zero: every producer below keeps
//   them zero, so popcounts never need a mask.
// - A weight vector is `words * 64` f64 values (zero past N), so bit j of word i always
//   has a weight at index i*64 + j.
// - An index column holds, per respondent, the 1-based rank of its value in the
//   variable's sorted dictionary (0 = blank), as u8, u16 or u32, padded with zeros to
//   `words * 64` entries.
// - A sparse code is a sorted list of u32 respondent numbers.
//
// Nothing here allocates: pointers, lengths and counts come in, numbers go out. Results
// that do not fit in one return value are stored at an `out` pointer given by the caller.

/**
 * Version of the exports' signatures and layouts. src/kernel/exports.ts holds the same
 * number and refuses a kernel.wasm built from other sources, so a stale bundle can never
 * call this kernel with the wrong arguments.
 */
export function kernelAbi(): i32 {
  return 14;
}

// ---------------------------------------------------------------------------------------
// Layout of the records the exports read and write. Exported as globals: src/kernel/
// reads them when it instantiates the kernel, so strides and limits are written here only.

/** Weight run: u32 first word, u32 end word, f64 weight, u64 mask (see weightRuns). */
export const WEIGHT_RUN_BYTES: usize = 24;
/** Most segments a word of mixed weights is split into; beyond, its set bits are walked. A
 * weight-run buffer has room for words * MAX_SEGMENTS runs. */
export const MAX_SEGMENTS: i32 = 8;
/** Accumulated cell: f64 sum of weights, f64 sum of squared weights, f64 count. */
export const CELL_BYTES: usize = 24;
/** Column entry of cellsRow: u32 pointer, u32 kind (0 = dense bitset, 1 = sparse list), u32 count. */
export const COLUMN_ENTRY_BYTES: usize = 12;
/** Axis variable of groupByMulti / groupByDesign: u32 index column, u32 bytes per rank,
 * u32 pointer to the i32 map from rank to row / column number (-1: not on the axis). */
export const AXIS_VARIABLE_BYTES: usize = 12;
/** Row entry of rowEntries / cellsTileEntries: u32 word, u32 padding, f64 weight, u64 bits. */
export const ROW_ENTRY_BYTES: usize = 24;
/** Words per chunk of cellsTile and cellsTileEntries (rowEntries' chunk offsets count them). */
export const CHUNK_WORDS: i32 = 2048;
/** Entry of the pointer arrays of cellsTile (rows, columns): a u32 pointer. */
export const POINTER_BYTES: usize = 4;
/** The `out` buffer of cellDense / cellSparse / cellsRow: up to three f64. */
export const CELL_OUT_BYTES: usize = 24;
/** Hash state of the xxh64 functions (assembly/xxhash64.ts). */
export const XXH64_STATE_BYTES: usize = 48;

// ---------------------------------------------------------------------------------------
// Bitset algebra (SIMD, 2 words per step)

export function bitsClear(dst: usize, words: i32): void {
  memory.fill(dst, 0, <usize>words << 3);
}

export function bitsCopy(dst: usize, src: usize, words: i32): void {
  memory.copy(dst, src, <usize>words << 3);
}

/** Sets the first `n` bits (everyone) and clears the rest of the `words` words. */
export function bitsUniverse(dst: usize, words: i32, n: i32): void {
  const full = n >>> 6;
  memory.fill(dst, 0xff, <usize>full << 3);
  memory.fill(dst + (<usize>full << 3), 0, <usize>(words - full) << 3);
  const rest = n & 63;
  if (rest != 0) store<u64>(dst + (<usize>full << 3), (<u64>1 << <u64>rest) - 1);
}

export function bitsAnd(dst: usize, a: usize, b: usize, words: i32): void {
  const end = <usize>words << 3;
  for (let off: usize = 0; off < end; off += 16) {
    v128.store(dst + off, v128.and(v128.load(a + off), v128.load(b + off)));
  }
}

export function bitsOr(dst: usize, a: usize, b: usize, words: i32): void {
  const end = <usize>words << 3;
  for (let off: usize = 0; off < end; off += 16) {
    v128.store(dst + off, v128.or(v128.load(a + off), v128.load(b + off)));
  }
}

/** dst = a AND NOT b. With a = the universe this is NOT b, blanks included. */
export function bitsAndNot(dst: usize, a: usize, b: usize, words: i32): void {
  const end = <usize>words << 3;
  for (let off: usize = 0; off < end; off += 16) {
    v128.store(dst + off, v128.andnot(v128.load(a + off), v128.load(b + off)));
  }
}

/** dst |= the respondents of a sparse code. */
export function bitsOrList(dst: usize, list: usize, count: i32): void {
  const end = list + (<usize>count << 2);
  for (let p = list; p < end; p += 4) {
    const r = load<u32>(p);
    const w = dst + (<usize>(r >>> 6) << 3);
    store<u64>(w, load<u64>(w) | (<u64>1 << <u64>(r & 63)));
  }
}

// ---------------------------------------------------------------------------------------
// Index columns -> bitsets. One pass over the column; 16/8/4 ranks compared per SIMD
// step and their lane masks packed into bitset words. Padding ranks are 0, so a range
// with lo >= 1 never sets a padding bit; the blank range (lo = hi = 0) masks the tail.

function maskTail(dst: usize, words: i32, n: i32): void {
  const rest = n & 63;
  const full = n >>> 6;
  if (rest != 0) {
    const w = dst + (<usize>full << 3);
    store<u64>(w, load<u64>(w) & ((<u64>1 << <u64>rest) - 1));
  }
  const firstPad = full + (rest != 0 ? 1 : 0);
  if (firstPad < words) memory.fill(dst + (<usize>firstPad << 3), 0, <usize>(words - firstPad) << 3);
}

/**
 * dst = respondents whose u8 rank is in [lo, hi]. One unsigned test per lane:
 * lo <= v <= hi exactly when (v - lo) mod 256 <= hi - lo, i.e. when
 * min(v - lo, hi - lo) == v - lo; four 16-lane masks make one word.
 */
export function bitsFromRangeU8(dst: usize, column: usize, words: i32, n: i32, lo: u32, hi: u32): void {
  const vlo = i8x16.splat(<i8>lo);
  const span = i8x16.splat(<i8>(hi - lo));
  for (let i = 0; i < words; i++) {
    const src = column + (<usize>i << 6);
    const d0 = i8x16.sub(v128.load(src), vlo);
    const d1 = i8x16.sub(v128.load(src, 16), vlo);
    const d2 = i8x16.sub(v128.load(src, 32), vlo);
    const d3 = i8x16.sub(v128.load(src, 48), vlo);
    const m0 = <u64>i8x16.bitmask(i8x16.eq(i8x16.min_u(d0, span), d0));
    const m1 = <u64>i8x16.bitmask(i8x16.eq(i8x16.min_u(d1, span), d1));
    const m2 = <u64>i8x16.bitmask(i8x16.eq(i8x16.min_u(d2, span), d2));
    const m3 = <u64>i8x16.bitmask(i8x16.eq(i8x16.min_u(d3, span), d3));
    store<u64>(dst + (<usize>i << 3), m0 | (m1 << 16) | (m2 << 32) | (m3 << 48));
  }
  maskTail(dst, words, n);
}

/**
 * dst = respondents whose rank (u16 or u32, by T) is in [lo, hi]. One 64-respondent word
 * reads 64 ranks: 8 vectors of 8 u16 lanes or 16 vectors of 4 u32 lanes. The lane width is a
 * compile-time constant, so each instance keeps only its own branch.
 */
// @ts-ignore: decorator
@inline
function bitsFromRangeWide<T>(dst: usize, column: usize, words: i32, n: i32, lo: u32, hi: u32): void {
  const lanes: i32 = 16 / sizeof<T>();
  const vectors: i32 = 64 / lanes;
  const vlo = sizeof<T>() == 2 ? i16x8.splat(<i16>lo) : i32x4.splat(lo);
  const vhi = sizeof<T>() == 2 ? i16x8.splat(<i16>hi) : i32x4.splat(hi);
  for (let i = 0; i < words; i++) {
    const src = column + <usize>i * (<usize>sizeof<T>() << 6);
    let word: u64 = 0;
    for (let k = 0; k < vectors; k++) {
      const v = v128.load(src + (<usize>k << 4));
      const bits: u32 =
        sizeof<T>() == 2
          ? i16x8.bitmask(v128.and(i16x8.ge_u(v, vlo), i16x8.le_u(v, vhi)))
          : i32x4.bitmask(v128.and(i32x4.ge_u(v, vlo), i32x4.le_u(v, vhi)));
      word |= <u64>bits << <u64>(k * lanes);
    }
    store<u64>(dst + (<usize>i << 3), word);
  }
  maskTail(dst, words, n);
}

/** dst = respondents whose u16 rank is in [lo, hi]. */
export function bitsFromRangeU16(dst: usize, column: usize, words: i32, n: i32, lo: u32, hi: u32): void {
  bitsFromRangeWide<u16>(dst, column, words, n, lo, hi);
}

/** dst = respondents whose u32 rank is in [lo, hi]. */
export function bitsFromRangeU32(dst: usize, column: usize, words: i32, n: i32, lo: u32, hi: u32): void {
  bitsFromRangeWide<u32>(dst, column, words, n, lo, hi);
}

// ---------------------------------------------------------------------------------------
// Cells. A cell is (count, sum of weights, sum of squared weights) of a AND b.
// The count is the return value; the two sums go to out[0], out[1] as f64.
// Sums accumulate in f64 in respondent order, so results do not depend on how a query
// was planned.

export function popcount(a: usize, words: i32): i32 {
  let count: i64 = 0;
  const end = <usize>words << 3;
  for (let off: usize = 0; off < end; off += 8) count += popcnt(load<u64>(a + off));
  return <i32>count;
}

export function andPopcount(a: usize, b: usize, words: i32): i32 {
  return <i32>andPopcountRange(a, b, 0, words);
}

@inline function emitRun(out: usize, k: i32, start: i32, end: i32, weight: f64, mask: u64): void {
  const entry = out + <usize>k * WEIGHT_RUN_BYTES;
  store<u32>(entry, start);
  store<u32>(entry, end, 4);
  store<f64>(entry, weight, 8);
  store<u64>(entry, mask, 16);
}

/**
 * Builds the weight runs of a weight vector (layout below) at `out`, which must have room
 * for words * MAX_SEGMENTS entries; returns the number of runs. Datasets store
 * respondents sorted by their default weight, so with integer weights (ACS: 1..2300 over
 * 2.7 M people) nearly every word lies inside one run, and the few words where the weight
 * changes split into two or three masked segments.
 */
export function weightRuns(weights: usize, words: i32, n: i32, out: usize): i32 {
  let k = 0;
  for (let i = 0; i < words; i++) {
    const base = weights + (<usize>i << 9);
    const valid = min(64, n - (i << 6));
    const first: f64 = valid > 0 ? load<f64>(base) : 0;
    let segments = 1;
    for (let j = 1; j < valid; j++) {
      if (load<f64>(base + (<usize>j << 3)) != load<f64>(base + (<usize>(j - 1) << 3))) segments++;
    }
    if (segments == 1) {
      const last = k - 1;
      const previous = out + <usize>last * WEIGHT_RUN_BYTES;
      if (k > 0 && load<u64>(previous, 16) == 0 && load<f64>(previous, 8) == first && <i32>load<u32>(previous, 4) == i) {
        store<u32>(previous, i + 1, 4);
      } else {
        emitRun(out, k++, i, i + 1, first, 0);
      }
    } else if (segments > MAX_SEGMENTS) {
      emitRun(out, k++, i, i + 1, NaN, 0);
    } else {
      let from = 0;
      for (let j = 1; j <= valid; j++) {
        if (j == valid || load<f64>(base + (<usize>j << 3)) != load<f64>(base + (<usize>from << 3))) {
          const width = j - from;
          const mask: u64 = width == 64 ? <u64>-1 : ((<u64>1 << <u64>width) - 1) << <u64>from;
          emitRun(out, k++, i, i + 1, load<f64>(base + (<usize>from << 3)), mask);
          from = j;
        }
      }
    }
  }
  return k;
}

/**
 * Weight runs, WEIGHT_RUN_BYTES each, covering every word in order: u32 first word, u32
 * end word, f64 weight, u64 mask. With mask 0, a run of whole words whose respondents share
 * one weight. With a mask, one segment of one word: the respondents under the mask share
 * the weight (respondents are stored sorted by weight, so a word where the weight changes
 * splits into a few contiguous segments). Weight NaN: a word of too many weights, whose
 * set bits are walked. Built by weightRuns above, once per weight vector (src/kernel/
 * kernel.ts calls it). ACS: 2,173 runs over 42,764 words, 1,580 of them word segments and
 * 23 walked words (`npm run bench:kernel`).
 */
@inline function runStart(runs: usize, k: i32): i32 { return <i32>load<u32>(runs + <usize>k * WEIGHT_RUN_BYTES); }
@inline function runEnd(runs: usize, k: i32): i32 { return <i32>load<u32>(runs + <usize>k * WEIGHT_RUN_BYTES, 4); }
@inline function runWeight(runs: usize, k: i32): f64 { return load<f64>(runs + <usize>k * WEIGHT_RUN_BYTES, 8); }
@inline function runMask(runs: usize, k: i32): u64 { return load<u64>(runs + <usize>k * WEIGHT_RUN_BYTES, 16); }

/**
 * Sum over words [from, to) of popcount(a AND b), four words per step into independent
 * counters so consecutive popcounts do not wait on each other.
 */
@inline function andPopcountRange(a: usize, b: usize, from: i32, to: i32): i64 {
  let c0: i64 = 0;
  let c1: i64 = 0;
  let c2: i64 = 0;
  let c3: i64 = 0;
  let i = from;
  for (; i + 3 < to; i += 4) {
    const p = <usize>i << 3;
    c0 += popcnt(load<u64>(a + p) & load<u64>(b + p));
    c1 += popcnt(load<u64>(a + p, 8) & load<u64>(b + p, 8));
    c2 += popcnt(load<u64>(a + p, 16) & load<u64>(b + p, 16));
    c3 += popcnt(load<u64>(a + p, 24) & load<u64>(b + p, 24));
  }
  for (; i < to; i++) c0 += popcnt(load<u64>(a + (<usize>i << 3)) & load<u64>(b + (<usize>i << 3)));
  return c0 + c1 + c2 + c3;
}

/**
 * Adds the cell of a AND b over the runs [k0, k1), clipped to words [from, to), to
 * acc = (sum, sum of squares, count). Uniform runs cost one AND + popcount per word;
 * words of mixed weights walk their set bits. Accumulators stay in locals: acc is
 * touched once per call, not once per run.
 */
@inline function addRuns(a: usize, b: usize, weights: usize, runs: usize, k0: i32, k1: i32, from: i32, to: i32, acc: usize): void {
  let sum: f64 = 0;
  let sumSq: f64 = 0;
  let count: i64 = 0;
  for (let k = k0; k < k1; k++) {
    const s = max(runStart(runs, k), from);
    const e = min(runEnd(runs, k), to);
    const x = runWeight(runs, k);
    const mask = runMask(runs, k);
    if (mask != 0) {
      if (s < e) {
        const c = popcnt(load<u64>(a + (<usize>s << 3)) & load<u64>(b + (<usize>s << 3)) & mask);
        count += c;
        const cx = <f64>c * x;
        sum += cx;
        sumSq += cx * x;
      }
    } else if (x == x) {
      const c = andPopcountRange(a, b, s, e);
      count += c;
      const cx = <f64>c * x;
      sum += cx;
      sumSq += cx * x;
    } else {
      for (let i = s; i < e; i++) {
        let w = load<u64>(a + (<usize>i << 3)) & load<u64>(b + (<usize>i << 3));
        const base = weights + (<usize>i << 9);
        count += popcnt(w);
        while (w != 0) {
          const y = load<f64>(base + (<usize>ctz(w) << 3));
          sum += y;
          sumSq += y * y;
          w &= w - 1;
        }
      }
    }
  }
  store<f64>(acc, load<f64>(acc) + sum);
  store<f64>(acc, load<f64>(acc, 8) + sumSq, 8);
  store<f64>(acc, load<f64>(acc, 16) + <f64>count, 16);
}

/** Weighted cell of a AND b over dense bitsets. out: f64 sum, f64 sum of squares; returns the count. */
export function cellDense(a: usize, b: usize, weights: usize, runs: usize, nRuns: i32, words: i32, out: usize): i32 {
  store<f64>(out, 0);
  store<f64>(out, 0, 8);
  store<f64>(out, 0, 16);
  addRuns(a, b, weights, runs, 0, nRuns, 0, words, out);
  return <i32>load<f64>(out, 16);
}

/**
 * Weighted cells of a AND each of `n` dense bitsets (u32 pointers at `bs`), in one walk of
 * the weight runs: a crosstab's base cell and target cells, where cellDense walks the runs
 * once per cell. Per bitset, CELL_BYTES at `acc` (f64 sum, f64 sum of squares, f64 count),
 * zeroed first. Each cell accumulates in the same order as cellDense (run by run, bit by
 * bit), so the sums are the same to the last bit.
 */
export function cellsDense(a: usize, bs: usize, n: i32, weights: usize, runs: usize, nRuns: i32, words: i32, acc: usize): void {
  memory.fill(acc, 0, <usize>n * CELL_BYTES);
  for (let k = 0; k < nRuns; k++) {
    const s = max(runStart(runs, k), 0);
    const e = min(runEnd(runs, k), words);
    if (s >= e) continue;
    const x = runWeight(runs, k);
    const mask = runMask(runs, k);
    if (mask != 0) {
      const wa = load<u64>(a + (<usize>s << 3)) & mask;
      if (wa == 0) continue;
      for (let j = 0; j < n; j++) {
        const c = popcnt(wa & load<u64>(<usize>load<u32>(bs + (<usize>j << 2)) + (<usize>s << 3)));
        const cell = acc + <usize>j * CELL_BYTES;
        const cx = <f64>c * x;
        store<f64>(cell, load<f64>(cell) + cx);
        store<f64>(cell, load<f64>(cell, 8) + cx * x, 8);
        store<f64>(cell, load<f64>(cell, 16) + <f64>c, 16);
      }
    } else if (x == x) {
      for (let j = 0; j < n; j++) {
        const c = andPopcountRange(a, <usize>load<u32>(bs + (<usize>j << 2)), s, e);
        const cell = acc + <usize>j * CELL_BYTES;
        const cx = <f64>c * x;
        store<f64>(cell, load<f64>(cell) + cx);
        store<f64>(cell, load<f64>(cell, 8) + cx * x, 8);
        store<f64>(cell, load<f64>(cell, 16) + <f64>c, 16);
      }
    } else {
      for (let i = s; i < e; i++) {
        const wa = load<u64>(a + (<usize>i << 3));
        if (wa == 0) continue;
        const base = weights + (<usize>i << 9);
        for (let j = 0; j < n; j++) {
          let w = wa & load<u64>(<usize>load<u32>(bs + (<usize>j << 2)) + (<usize>i << 3));
          if (w == 0) continue;
          const cell = acc + <usize>j * CELL_BYTES;
          let sum = load<f64>(cell);
          let sumSq = load<f64>(cell, 8);
          store<f64>(cell, load<f64>(cell, 16) + <f64>popcnt(w), 16);
          while (w != 0) {
            const y = load<f64>(base + (<usize>ctz(w) << 3));
            sum += y;
            sumSq += y * y;
            w &= w - 1;
          }
          store<f64>(cell, sum);
          store<f64>(cell, sumSq, 8);
        }
      }
    }
  }
}

/** Weighted cell of a dense bitset AND a sparse code (sorted respondent list). */
export function cellSparse(a: usize, list: usize, count: i32, weights: usize, out: usize): i32 {
  let hits: i32 = 0;
  let sum: f64 = 0;
  let sumSq: f64 = 0;
  const end = list + (<usize>count << 2);
  for (let p = list; p < end; p += 4) {
    const r = load<u32>(p);
    if ((load<u64>(a + (<usize>(r >>> 6) << 3)) >>> <u64>(r & 63)) & 1) {
      const x = load<f64>(weights + (<usize>r << 3));
      hits++;
      sum += x;
      sumSq += x * x;
    }
  }
  store<f64>(out, sum);
  store<f64>(out, sumSq, 8);
  return hits;
}

// ---------------------------------------------------------------------------------------
// Tables.

/**
 * One row of a table: the cells of `row` AND each column. Columns are described by
 * COLUMN_ENTRY_BYTES entries (u32 pointer, u32 kind 0 = dense bitset / 1 = sparse list,
 * u32 count); results go to three
 * f64 arrays indexed by column. One call per row keeps the JS/wasm boundary out of the
 * inner loop, and the row bitset stays in cache while the columns stream past it.
 */
export function cellsRow(
  row: usize, columns: usize, nColumns: i32, weights: usize, runs: usize, nRuns: i32, words: i32,
  sums: usize, sumsSq: usize, counts: usize, out: usize,
): void {
  for (let c = 0; c < nColumns; c++) {
    const entry = columns + <usize>c * COLUMN_ENTRY_BYTES;
    const ptr = <usize>load<u32>(entry);
    const count: i32 = load<u32>(entry, 4) == 1
      ? cellSparse(row, ptr, <i32>load<u32>(entry, 8), weights, out)
      : cellDense(row, ptr, weights, runs, nRuns, words, out);
    const offset = <usize>c << 3;
    store<f64>(sums + offset, load<f64>(out));
    store<f64>(sumsSq + offset, load<f64>(out, 8));
    store<f64>(counts + offset, <f64>count);
  }
}

@inline function rankAt(column: usize, width: i32, r: u32): u32 {
  if (width == 1) return <u32>load<u8>(column + <usize>r);
  if (width == 2) return <u32>load<u16>(column + (<usize>r << 1));
  return load<u32>(column + (<usize>r << 2));
}

@inline function addTriple(cell: usize, x: f64, xx: f64): void {
  store<f64>(cell, load<f64>(cell) + x);
  store<f64>(cell, load<f64>(cell, 8) + xx, 8);
  store<f64>(cell, load<f64>(cell, 16) + 1, 16);
}

/** Words per chunk in cellsTile: a chunk of 16 row bitsets (256 KiB) stays in L2. */
const CHUNK: i32 = CHUNK_WORDS;

/**
 * A tile of a table, cache-blocked: for each chunk of respondents, each dense column's
 * chunk is read once and ANDed with every row of the tile while both are in cache, so
 * memory traffic per cell falls by the tile height. `rows` and `columns` are u32 pointer
 * arrays of dense bitsets (rows already ANDed with the base); acc gets one CELL_BYTES
 * triple (sum, sum of squares, count) per cell, row-major, accumulated.
 */
export function cellsTile(
  rows: usize, nRows: i32, columns: usize, nColumns: i32,
  weights: usize, runs: usize, nRuns: i32, words: i32, acc: usize,
): void {
  let k0 = 0;
  for (let from = 0; from < words; from += CHUNK) {
    const to = min(from + CHUNK, words);
    while (k0 < nRuns && runEnd(runs, k0) <= from) k0++;
    let k1 = k0;
    while (k1 < nRuns && runStart(runs, k1) < to) k1++;
    for (let c = 0; c < nColumns; c++) {
      const column = <usize>load<u32>(columns + <usize>c * POINTER_BYTES);
      let r = 0;
      for (; r + 1 < nRows; r += 2) {
        const row0 = <usize>load<u32>(rows + <usize>r * POINTER_BYTES);
        const row1 = <usize>load<u32>(rows + <usize>(r + 1) * POINTER_BYTES);
        addRunsPair(row0, row1, column, weights, runs, k0, k1, from, to, acc + <usize>(r * nColumns + c) * CELL_BYTES, acc + <usize>((r + 1) * nColumns + c) * CELL_BYTES);
      }
      if (r < nRows) {
        const row = <usize>load<u32>(rows + <usize>r * POINTER_BYTES);
        addRuns(row, column, weights, runs, k0, k1, from, to, acc + <usize>(r * nColumns + c) * CELL_BYTES);
      }
    }
  }
}

/**
 * addRuns for two rows against one column in one walk of the runs: the per-run work (its
 * record, the branch on its kind, mispredicted as kinds alternate) is shared by two cells,
 * and each column word is loaded once for both. Each cell's counts per run, and so its
 * sums, are those addRuns gives, to the last bit.
 */
@inline function addRunsPair(a0: usize, a1: usize, b: usize, weights: usize, runs: usize, k0: i32, k1: i32, from: i32, to: i32, acc0: usize, acc1: usize): void {
  let sum0: f64 = 0;
  let sumSq0: f64 = 0;
  let count0: i64 = 0;
  let sum1: f64 = 0;
  let sumSq1: f64 = 0;
  let count1: i64 = 0;
  for (let k = k0; k < k1; k++) {
    const s = max(runStart(runs, k), from);
    const e = min(runEnd(runs, k), to);
    const x = runWeight(runs, k);
    const mask = runMask(runs, k);
    if (mask != 0) {
      if (s < e) {
        const p = <usize>s << 3;
        const bw = load<u64>(b + p) & mask;
        const c0 = popcnt(load<u64>(a0 + p) & bw);
        const c1 = popcnt(load<u64>(a1 + p) & bw);
        count0 += c0;
        count1 += c1;
        const cx0 = <f64>c0 * x;
        const cx1 = <f64>c1 * x;
        sum0 += cx0;
        sumSq0 += cx0 * x;
        sum1 += cx1;
        sumSq1 += cx1 * x;
      }
    } else if (x == x) {
      let p0: i64 = 0;
      let q0: i64 = 0;
      let p1: i64 = 0;
      let q1: i64 = 0;
      let i = s;
      for (; i + 1 < e; i += 2) {
        const p = <usize>i << 3;
        const b0 = load<u64>(b + p);
        const b1 = load<u64>(b + p, 8);
        p0 += popcnt(load<u64>(a0 + p) & b0);
        q0 += popcnt(load<u64>(a0 + p, 8) & b1);
        p1 += popcnt(load<u64>(a1 + p) & b0);
        q1 += popcnt(load<u64>(a1 + p, 8) & b1);
      }
      if (i < e) {
        const p = <usize>i << 3;
        const bw = load<u64>(b + p);
        p0 += popcnt(load<u64>(a0 + p) & bw);
        p1 += popcnt(load<u64>(a1 + p) & bw);
      }
      const c0 = p0 + q0;
      const c1 = p1 + q1;
      count0 += c0;
      count1 += c1;
      const cx0 = <f64>c0 * x;
      const cx1 = <f64>c1 * x;
      sum0 += cx0;
      sumSq0 += cx0 * x;
      sum1 += cx1;
      sumSq1 += cx1 * x;
    } else {
      for (let i = s; i < e; i++) {
        const bw = load<u64>(b + (<usize>i << 3));
        const base = weights + (<usize>i << 9);
        let w = load<u64>(a0 + (<usize>i << 3)) & bw;
        count0 += popcnt(w);
        while (w != 0) {
          const y = load<f64>(base + (<usize>ctz(w) << 3));
          sum0 += y;
          sumSq0 += y * y;
          w &= w - 1;
        }
        w = load<u64>(a1 + (<usize>i << 3)) & bw;
        count1 += popcnt(w);
        while (w != 0) {
          const y = load<f64>(base + (<usize>ctz(w) << 3));
          sum1 += y;
          sumSq1 += y * y;
          w &= w - 1;
        }
      }
    }
  }
  store<f64>(acc0, load<f64>(acc0) + sum0);
  store<f64>(acc0, load<f64>(acc0, 8) + sumSq0, 8);
  store<f64>(acc0, load<f64>(acc0, 16) + <f64>count0, 16);
  store<f64>(acc1, load<f64>(acc1) + sum1);
  store<f64>(acc1, load<f64>(acc1, 8) + sumSq1, 8);
  store<f64>(acc1, load<f64>(acc1, 16) + <f64>count1, 16);
}

@inline function emitEntry(out: usize, k: i32, word: i32, weight: f64, bits: u64): void {
  const entry = out + <usize>k * ROW_ENTRY_BYTES;
  store<u32>(entry, word);
  store<f64>(entry, weight, 8);
  store<u64>(entry, bits, 16);
}

/**
 * A sparse row (base AND row) as entries for cellsTileEntries, so that its cells cost a
 * step per word holding any of its respondents instead of one per word of the bitset: most
 * rows of a table of many codes hold under 1% of the respondents, and a third of their
 * words or fewer. ROW_ENTRY_BYTES each, in word order: per word of a run of one weight
 * that holds any of the row's bits, (word, weight, the row's bits); per segment of a word
 * of mixed weights, the bits under the segment's mask; per set bit of a walked word, that
 * bit and its own weight. Writes at most `capacity` entries to `out`; returns their
 * number, or -1 when the row needs more (the caller takes the dense kernel then).
 * `chunks` gets nChunks + 1 u32 entry offsets, nChunks = words / CHUNK_WORDS rounded up:
 * the entries of chunk c are [chunks[c], chunks[c + 1]).
 */
export function rowEntries(row: usize, weights: usize, runs: usize, nRuns: i32, words: i32, out: usize, capacity: i32, chunks: usize): i32 {
  let n = 0;
  for (let k = 0; k < nRuns; k++) {
    const s = runStart(runs, k);
    const e = min(runEnd(runs, k), words);
    const x = runWeight(runs, k);
    const mask = runMask(runs, k);
    if (mask != 0) {
      if (s >= e) continue;
      const bits = load<u64>(row + (<usize>s << 3)) & mask;
      if (bits == 0) continue;
      if (n == capacity) return -1;
      emitEntry(out, n++, s, x, bits);
    } else if (x == x) {
      for (let i = s; i < e; i++) {
        const bits = load<u64>(row + (<usize>i << 3));
        if (bits == 0) continue;
        if (n == capacity) return -1;
        emitEntry(out, n++, i, x, bits);
      }
    } else {
      for (let i = s; i < e; i++) {
        let bits = load<u64>(row + (<usize>i << 3));
        const base = weights + (<usize>i << 9);
        while (bits != 0) {
          if (n == capacity) return -1;
          const bit = bits & (~bits + 1);
          emitEntry(out, n++, i, load<f64>(base + (<usize>ctz(bits) << 3)), bit);
          bits &= bits - 1;
        }
      }
    }
  }
  const nChunks = (words + CHUNK_WORDS - 1) / CHUNK_WORDS;
  let chunk = 0;
  store<u32>(chunks, 0);
  for (let j = 0; j < n; j++) {
    const word = <i32>load<u32>(out + <usize>j * ROW_ENTRY_BYTES);
    while ((chunk + 1) * CHUNK_WORDS <= word) store<u32>(chunks + (<usize>(++chunk) << 2), j);
  }
  while (chunk < nChunks) store<u32>(chunks + (<usize>(++chunk) << 2), n);
  return n;
}

/**
 * cellsTile for rows given as entries (rowEntries): `rows` and `chunks` are u32 pointer
 * arrays, per row its entries and its chunk offsets; `columns` a u32 pointer array of
 * dense bitsets. acc gets one CELL_BYTES triple per cell, row-major, accumulated. Per chunk
 * of CHUNK_WORDS words, each column's chunk is read while it is in cache by every row of
 * the tile; a cell adds, per entry, popcount(bits AND the column's word) times the entry's
 * weight, even and odd entries apart, and each chunk's sums to acc: so a cell's sums depend
 * only on the row, the column and the weights, not on the tile or task that computed it.
 */
export function cellsTileEntries(
  rows: usize, chunks: usize, nRows: i32, columns: usize, nColumns: i32, words: i32, acc: usize,
): void {
  const nChunks = (words + CHUNK_WORDS - 1) / CHUNK_WORDS;
  for (let chunk = 0; chunk < nChunks; chunk++) {
    for (let c = 0; c < nColumns; c++) {
      const column = <usize>load<u32>(columns + <usize>c * POINTER_BYTES);
      for (let r = 0; r < nRows; r++) {
        const offsets = <usize>load<u32>(chunks + <usize>r * POINTER_BYTES) + (<usize>chunk << 2);
        const from = load<u32>(offsets);
        const to = load<u32>(offsets, 4);
        if (from == to) continue;
        const entries = <usize>load<u32>(rows + <usize>r * POINTER_BYTES);
        // Two entries per step into two sets of sums (even and odd entries), added at the
        // end: one chain of f64 adds would wait on the add latency every entry.
        let sum0: f64 = 0;
        let sumSq0: f64 = 0;
        let sum1: f64 = 0;
        let sumSq1: f64 = 0;
        let count: i64 = 0;
        const end = entries + <usize>to * ROW_ENTRY_BYTES;
        let entry = entries + <usize>from * ROW_ENTRY_BYTES;
        for (; entry + ROW_ENTRY_BYTES < end; entry += 2 * ROW_ENTRY_BYTES) {
          const hits0 = popcnt(load<u64>(entry, 16) & load<u64>(column + (<usize>load<u32>(entry) << 3)));
          const hits1 = popcnt(load<u64>(entry, 16 + ROW_ENTRY_BYTES) & load<u64>(column + (<usize>load<u32>(entry, ROW_ENTRY_BYTES) << 3)));
          const x0 = load<f64>(entry, 8);
          const x1 = load<f64>(entry, 8 + ROW_ENTRY_BYTES);
          const cx0 = <f64>hits0 * x0;
          const cx1 = <f64>hits1 * x1;
          count += hits0 + hits1;
          sum0 += cx0;
          sumSq0 += cx0 * x0;
          sum1 += cx1;
          sumSq1 += cx1 * x1;
        }
        if (entry < end) {
          const hits = popcnt(load<u64>(entry, 16) & load<u64>(column + (<usize>load<u32>(entry) << 3)));
          const x = load<f64>(entry, 8);
          const cx = <f64>hits * x;
          count += hits;
          sum0 += cx;
          sumSq0 += cx * x;
        }
        const cell = acc + <usize>(r * nColumns + c) * CELL_BYTES;
        store<f64>(cell, load<f64>(cell) + (sum0 + sum1));
        store<f64>(cell, load<f64>(cell, 8) + (sumSq0 + sumSq1), 8);
        store<f64>(cell, load<f64>(cell, 16) + <f64>count, 16);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Group-by plans: one pass over the respondents of the base, used by the planner when both
// axes are single values of single-coded variables (src/query/plans/). The measurement-only
// alternatives to the cell kernels live in assembly/bench.ts, outside the shipped module.

/**
 * Group-by over the respondents of `base` (all its words) into a grid of (nRows + 1) x
 * (nColumns + 1) CELL_BYTES cells, row-major, where the extra row and column collect
 * respondents whose row / column value is not on the axis (blank included), so margins are
 * sums over the grid. The axes come as u32 byte offsets per rank of the index column:
 * `offsetsA[rank]` is the offset of the rank's grid row (row x (nColumns + 1) x
 * CELL_BYTES; the extra row's for ranks off the axis), `offsetsB[rank]` that of its column
 * within a row, so a respondent's cell is two loads and an add. Only the grid rows whose
 * offsets lie in [fromOffset, toOffset) are added (0 and 0xFFFFFFFF: every row). The
 * first `clearBytes` of the grid are zeroed first (a task with a grid of its own). Returns
 * the number of respondents added.
 *
 * Tasks that run at once split a table by grid rows, not by respondents: each cell is
 * written by one task only, in respondent order, so a table cut into any number of tasks
 * has the same sums, to the last bit, as one task, and there are no partial grids to zero
 * and add. Each such task walks the whole base (about 1.3 ns per respondent of a rank read
 * and a map lookup) and adds the respondents of its rows straight into their cells; the
 * respondents of other tasks' rows go to `scratch`, a cell of the task's own that is never
 * read, rather than being skipped by a branch: with rows split by respondent count that
 * branch is unpredictable, and on ACS (S3) a task over half the rows cost as much as one
 * over all of them, against 30% less with the scratch cell. Tasks that run one after the
 * other into one grid (inline slices) take consecutive word ranges of the base instead,
 * every row each: the caller passes the base, index columns and weights from the range's
 * first respondent on, and the cells are again added in respondent order.
 *
 * Measured on an S3-sized table (bench/results/2026-11-26-kernel.md): this direct pass against
 * partitioning by row first (a counting pass, (column, weight) written to per-row buckets,
 * each bucket added into its L1-resident row: 1.8x slower), against per-block buckets
 * (3x slower) and against a branch-free pass that sends other tasks' respondents to a
 * scratch cell (1.6x slower): their extra passes or writes cost more than the cache
 * misses into the grid they save. Offsets per rank instead of positions (no multiply, no
 * test for "off the axis"), loops specialized by index width and the (x, x²) pair added
 * in one SIMD add took a synthetic S3-sized pass from 5.9 to 4.0 ms (2026-11-26-s3-pass.md).
 */
export function groupBy(
  base: usize, words: i32,
  a: usize, aWidth: i32, offsetsA: usize,
  b: usize, bWidth: i32, offsetsB: usize,
  fromOffset: u32, toOffset: u32, weights: usize, grid: usize, scratch: usize, clearBytes: u32,
): i32 {
  // A task with a grid of its own zeroes it here, on its own thread.
  if (clearBytes > 0) memory.fill(grid, 0, clearBytes);
  // One loop per pair of index widths (the widths are constants in each), and per kind of
  // task: every row (fromOffset 0, toOffset 0xFFFFFFFF: no row test at all; a select there
  // cost 15-20% more) or a row range.
  const every = fromOffset == 0 && toOffset == 0xffffffff;
  if (aWidth == 2 && bWidth == 2) return every ? passEvery<u16, u16>(base, words, a, offsetsA, b, offsetsB, weights, grid) : passRange<u16, u16>(base, words, a, offsetsA, b, offsetsB, fromOffset, toOffset, weights, grid, scratch);
  if (aWidth == 1 && bWidth == 1) return every ? passEvery<u8, u8>(base, words, a, offsetsA, b, offsetsB, weights, grid) : passRange<u8, u8>(base, words, a, offsetsA, b, offsetsB, fromOffset, toOffset, weights, grid, scratch);
  if (aWidth == 2 && bWidth == 1) return every ? passEvery<u16, u8>(base, words, a, offsetsA, b, offsetsB, weights, grid) : passRange<u16, u8>(base, words, a, offsetsA, b, offsetsB, fromOffset, toOffset, weights, grid, scratch);
  if (aWidth == 1 && bWidth == 2) return every ? passEvery<u8, u16>(base, words, a, offsetsA, b, offsetsB, weights, grid) : passRange<u8, u16>(base, words, a, offsetsA, b, offsetsB, fromOffset, toOffset, weights, grid, scratch);
  // A u32 index on either axis (over 65,535 values): one loop for every width.
  return every ? passEvery<u32, u32>(base, words, a, offsetsA, b, offsetsB, weights, grid, aWidth, bWidth) : passRange<u32, u32>(base, words, a, offsetsA, b, offsetsB, fromOffset, toOffset, weights, grid, scratch, aWidth, bWidth);
}

/** Rank of respondent r in an index column of T (u8 / u16), or of `width` bytes when T is u32. */
@inline function rankOf<T>(column: usize, r: usize, width: i32): usize {
  if (sizeof<T>() == 4) return <usize>rankAt(column, width, <u32>r);
  return <usize>load<T>(column + (r << alignof<T>()));
}

/** Adds weight x to the grid cell at `cell`: (x, x²) in one SIMD add, the count after. */
@inline function addToCell(cell: usize, x: f64): void {
  v128.store(cell, f64x2.add(v128.load(cell), f64x2(x, x * x)));
  store<f64>(cell, load<f64>(cell, 16) + 1, 16);
}

/** groupBy over every grid row: each respondent of the base into its cell. */
@inline function passEvery<A, B>(base: usize, words: i32, a: usize, offsetsA: usize, b: usize, offsetsB: usize, weights: usize, grid: usize, aWidth: i32 = 0, bWidth: i32 = 0): i32 {
  let placed = 0;
  for (let i = 0; i < words; i++) {
    let w = load<u64>(base + (<usize>i << 3));
    const first = <usize>i << 6;
    while (w != 0) {
      const r = first | <usize>ctz(w);
      w &= w - 1;
      const cell = grid + <usize>load<u32>(offsetsA + (rankOf<A>(a, r, aWidth) << 2)) + <usize>load<u32>(offsetsB + (rankOf<B>(b, r, bWidth) << 2));
      addToCell(cell, load<f64>(weights + (r << 3)));
      placed++;
    }
  }
  return placed;
}

/**
 * groupBy over the grid rows whose byte offsets are in [fromOffset, toOffset): the other
 * respondents go to the task's `scratch` cell, not skipped by a branch.
 */
@inline function passRange<A, B>(base: usize, words: i32, a: usize, offsetsA: usize, b: usize, offsetsB: usize, fromOffset: u32, toOffset: u32, weights: usize, grid: usize, scratch: usize, aWidth: i32 = 0, bWidth: i32 = 0): i32 {
  const span = toOffset - fromOffset;
  let placed = 0;
  for (let i = 0; i < words; i++) {
    let w = load<u64>(base + (<usize>i << 3));
    const first = <usize>i << 6;
    while (w != 0) {
      const r = first | <usize>ctz(w);
      w &= w - 1;
      const rowOffset = load<u32>(offsetsA + (rankOf<A>(a, r, aWidth) << 2));
      const mine = rowOffset - fromOffset < span;
      const cell = grid + <usize>rowOffset + <usize>load<u32>(offsetsB + (rankOf<B>(b, r, bWidth) << 2));
      addToCell(select<usize>(cell, scratch, mine), load<f64>(weights + (r << 3)));
      placed += <i32>mine;
    }
  }
  return placed;
}

/**
 * Splits a group-by grid of (nRows + 1) x (nColumns + 1) triples into the table's cells
 * (nRows x nColumns f64 each of sums, sums of squares, counts) and its margins (`margins`:
 * nRows row triples, then nColumns column triples), each margin the sum of its grid row or
 * column, extra row and column included, added in order of column / row. With nGrids > 1
 * the grids lie one after the other and each cell is the sum of its triples in grid order
 * (tasks that split the base's respondents, each into a grid of its own: the caller does
 * this only where the sums are exact in any order, see groupBy).
 */
export function groupByCells(grid: usize, nGrids: i32, nRows: i32, nColumns: i32, sums: usize, sumsSq: usize, counts: usize, margins: usize): void {
  const width = nColumns + 1;
  const gridBytes = <usize>((nRows + 1) * width) * CELL_BYTES;
  const columnMargins = margins + <usize>nRows * CELL_BYTES;
  memory.fill(margins, 0, <usize>(nRows + nColumns) * CELL_BYTES);
  for (let r = 0; r <= nRows; r++) {
    const line = grid + <usize>(r * width) * CELL_BYTES;
    let sum: f64 = 0;
    let sumSq: f64 = 0;
    let count: f64 = 0;
    for (let c = 0; c <= nColumns; c++) {
      const cell = line + <usize>c * CELL_BYTES;
      let x = load<f64>(cell);
      let xx = load<f64>(cell, 8);
      let n = load<f64>(cell, 16);
      for (let g = 1; g < nGrids; g++) {
        const other = cell + <usize>g * gridBytes;
        x += load<f64>(other);
        xx += load<f64>(other, 8);
        n += load<f64>(other, 16);
      }
      sum += x;
      sumSq += xx;
      count += n;
      if (c < nColumns) {
        const column = columnMargins + <usize>c * CELL_BYTES;
        store<f64>(column, load<f64>(column) + x);
        store<f64>(column, load<f64>(column, 8) + xx, 8);
        store<f64>(column, load<f64>(column, 16) + n, 16);
        if (r < nRows) {
          const at = <usize>(r * nColumns + c) << 3;
          store<f64>(sums + at, x);
          store<f64>(sumsSq + at, xx);
          store<f64>(counts + at, n);
        }
      }
    }
    if (r < nRows) {
      const row = margins + <usize>r * CELL_BYTES;
      store<f64>(row, sum);
      store<f64>(row, sumSq, 8);
      store<f64>(row, count, 16);
    }
  }
}

/**
 * Group-by with several single-coded variables per axis (a square of every value of
 * several variables, S4-style): each respondent of the base adds its weight to the cell of
 * every (row value, column value) pair it has: at most rowVars x colVars cells, not one
 * pass per cell. `rowVars` / `colVars` hold AXIS_VARIABLE_BYTES entries (u32 index column,
 * u32 bytes per rank, u32 map from rank to row / column number or -1). acc: nRows x
 * nColumns cell triples, then nRows row margins, then nColumns column margins. `scratch`
 * has room for rowVars + colVars i32.
 */
export function groupByMulti(
  base: usize, fromWord: i32, toWord: i32,
  rowVars: usize, nRowVars: i32, colVars: usize, nColVars: i32,
  nRows: i32, nColumns: i32, weights: usize, acc: usize, scratch: usize,
): void {
  groupByPass(base, fromWord, toWord, rowVars, nRowVars, colVars, nColVars, nRows, nColumns, weights, acc, scratch, 0, 0, false);
}

// ---------------------------------------------------------------------------------------
// Complex designs: per-PSU weighted sums, for Taylor-linearization variances.

/**
 * groupByMulti plus, in the same pass, the weighted sum of every slot per PSU:
 * `clusters` holds each respondent's PSU number (u32, 0..nClusters-1) and `clusterAcc`
 * nClusters rows of `slots` f64, slots = cells, then row margins, then column margins,
 * then the base total. PSU-major rows keep one respondent's writes inside one row (a few
 * cache lines: respondents are not sorted by PSU, so the row changes from one respondent
 * to the next, but each row is small). The triples (acc) are as in groupByMulti.
 */
export function groupByDesign(
  base: usize, fromWord: i32, toWord: i32,
  rowVars: usize, nRowVars: i32, colVars: usize, nColVars: i32,
  nRows: i32, nColumns: i32, weights: usize, acc: usize, scratch: usize,
  clusters: usize, clusterAcc: usize,
): void {
  groupByPass(base, fromWord, toWord, rowVars, nRowVars, colVars, nColVars, nRows, nColumns, weights, acc, scratch, clusters, clusterAcc, true);
}

/** Row / column number of respondent r on axis variable v (-1: its value is not on the axis). */
@inline function axisPosition(vars: usize, v: i32, r: u32): i32 {
  const entry = vars + <usize>v * AXIS_VARIABLE_BYTES;
  return load<i32>(<usize>load<u32>(entry, 8) + (<usize>rankAt(<usize>load<u32>(entry), <i32>load<u32>(entry, 4), r) << 2));
}

/**
 * The one loop of groupByMulti and groupByDesign. Inlined into both with `design` a
 * constant, so the optimizer drops the per-PSU sums from groupByMulti's copy: one source,
 * no branch in the plain pass.
 */
@inline function groupByPass(
  base: usize, fromWord: i32, toWord: i32,
  rowVars: usize, nRowVars: i32, colVars: usize, nColVars: i32,
  nRows: i32, nColumns: i32, weights: usize, acc: usize, scratch: usize,
  clusters: usize, clusterAcc: usize, design: bool,
): void {
  const cells = nRows * nColumns;
  const slots = <usize>(cells + nRows + nColumns + 1);
  const rowMargins = acc + <usize>cells * CELL_BYTES;
  const columnMargins = rowMargins + <usize>nRows * CELL_BYTES;
  const hitColumns = scratch + (<usize>nRowVars << 2);
  for (let i = fromWord; i < toWord; i++) {
    let w = load<u64>(base + (<usize>i << 3));
    while (w != 0) {
      const r = (<u32>i << 6) | <u32>ctz(w);
      w &= w - 1;
      const x = load<f64>(weights + (<usize>r << 3));
      const xx = x * x;
      let psu: usize = 0;
      if (design) {
        psu = clusterAcc + <usize>load<u32>(clusters + (<usize>r << 2)) * slots * 8;
        addSum(psu + ((slots - 1) << 3), x);
      }
      let nr = 0;
      for (let v = 0; v < nRowVars; v++) {
        const row = axisPosition(rowVars, v, r);
        if (row < 0) continue;
        store<i32>(scratch + (<usize>nr << 2), row);
        nr++;
        addTriple(rowMargins + <usize>row * CELL_BYTES, x, xx);
        if (design) addSum(psu + (<usize>(cells + row) << 3), x);
      }
      let nc = 0;
      for (let v = 0; v < nColVars; v++) {
        const col = axisPosition(colVars, v, r);
        if (col < 0) continue;
        store<i32>(hitColumns + (<usize>nc << 2), col);
        nc++;
        addTriple(columnMargins + <usize>col * CELL_BYTES, x, xx);
        if (design) addSum(psu + (<usize>(cells + nRows + col) << 3), x);
      }
      for (let a = 0; a < nr; a++) {
        const row = load<i32>(scratch + (<usize>a << 2)) * nColumns;
        const rowCells = acc + <usize>row * CELL_BYTES;
        for (let b = 0; b < nc; b++) {
          const col = load<i32>(hitColumns + (<usize>b << 2));
          addTriple(rowCells + <usize>col * CELL_BYTES, x, xx);
          if (design) addSum(psu + (<usize>(row + col) << 3), x);
        }
      }
    }
  }
}

/**
 * Per-PSU weighted sums of a AND b (dense bitsets): out[psu] += w for every respondent in
 * both. The fallback of tables whose entries are arbitrary expressions (one pass per cell).
 */
export function clusterSumsAnd(a: usize, b: usize, words: i32, weights: usize, clusters: usize, out: usize): void {
  for (let i = 0; i < words; i++) {
    let w = load<u64>(a + (<usize>i << 3)) & load<u64>(b + (<usize>i << 3));
    while (w != 0) {
      const r = (<u32>i << 6) | <u32>ctz(w);
      w &= w - 1;
      addSum(out + (<usize>load<u32>(clusters + (<usize>r << 2)) << 3), load<f64>(weights + (<usize>r << 3)));
    }
  }
}

@inline function addSum(at: usize, x: f64): void {
  store<f64>(at, load<f64>(at) + x);
}

// ---------------------------------------------------------------------------------------
// Checksums of dataset buffers

export { xxh64Init, xxh64Update, xxh64Digest, xxh64 } from './xxhash64';

// ---------------------------------------------------------------------------------------
// Weighting: fine cells and the sums of a weighting and its report

export { WEIGHT_VARIABLE_BYTES, CELL_SUMS_BYTES, RANK_SUMS_BYTES, SPREAD_BYTES, weightCellsOf, weightScale, weightBlockSums } from './weighting';
