// Bench-only kernel (build/kernel-bench.wasm, `npm run build:wasm:bench`): the shipped
// kernel plus alternatives to its weighted cell that bench/kernel-variants.js measures
// against the weight runs the engine uses. Nothing in src/ loads this module.

export * from './index';

/**
 * Bit-sliced weighted cell: integer weights stored as `nPlanes` bitsets, plane k holding
 * bit k of every respondent's weight; sum = sum over k of 2^k popcount(a AND b AND plane_k).
 * Exact for integer weights; reads nPlanes + 2 bitsets per cell. Returns the count; the
 * weighted sum goes to out[0].
 */
export function cellBitSliced(a: usize, b: usize, planes: usize, nPlanes: i32, words: i32, out: usize): i32 {
  let count: i64 = 0;
  let sum: f64 = 0;
  const planeBytes = <usize>words << 3;
  for (let k = 0; k < nPlanes; k++) {
    const plane = planes + <usize>k * planeBytes;
    let c: i64 = 0;
    for (let i = 0; i < words; i++) {
      const p = <usize>i << 3;
      c += popcnt(load<u64>(a + p) & load<u64>(b + p) & load<u64>(plane + p));
    }
    sum += <f64>c * <f64>(<i64>1 << <i64>k);
  }
  for (let i = 0; i < words; i++) {
    const p = <usize>i << 3;
    count += popcnt(load<u64>(a + p) & load<u64>(b + p));
  }
  store<f64>(out, sum);
  return <i32>count;
}

/** Weighted cell by walking every set bit (no runs): the baseline the runs replace. */
export function cellWalk(a: usize, b: usize, weights: usize, words: i32, out: usize): i32 {
  let count: i64 = 0;
  let sum: f64 = 0;
  let sumSq: f64 = 0;
  for (let i = 0; i < words; i++) {
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
  store<f64>(out, sum);
  store<f64>(out, sumSq, 8);
  return <i32>count;
}

/**
 * Reads `bytes` (a multiple of 64) from `ptr` as u64 lanes and returns their wrapping sum:
 * the kernel's own memory-read bandwidth, the bound of any pass that streams a buffer once.
 * Four SIMD accumulators so consecutive loads do not wait on one add.
 */
export function readSum(ptr: usize, bytes: usize): u64 {
  let s0 = i64x2.splat(0);
  let s1 = i64x2.splat(0);
  let s2 = i64x2.splat(0);
  let s3 = i64x2.splat(0);
  const end = ptr + bytes;
  for (let p = ptr; p < end; p += 64) {
    s0 = i64x2.add(s0, v128.load(p));
    s1 = i64x2.add(s1, v128.load(p, 16));
    s2 = i64x2.add(s2, v128.load(p, 32));
    s3 = i64x2.add(s3, v128.load(p, 48));
  }
  const s = i64x2.add(i64x2.add(s0, s1), i64x2.add(s2, s3));
  return <u64>i64x2.extract_lane(s, 0) + <u64>i64x2.extract_lane(s, 1);
}

/**
 * The group-by pass as the kernel had it before per-rank grid offsets: i32 positions per
 * rank (-1 off the axis, sent to the extra row / column by a select), the cell found by a
 * multiply, the index width tested per respondent, three scalar adds. Every grid row, one
 * task; grid of (nRows + 1) x (nColumns + 1) CELL_BYTES cells. bench/group-by-variants.js
 * times it against the shipped groupBy.
 */
export function groupByPositions(
  base: usize, words: i32,
  a: usize, aWidth: i32, mapA: usize,
  b: usize, bWidth: i32, mapB: usize,
  nRows: i32, nColumns: i32, weights: usize, grid: usize,
): i32 {
  const width = nColumns + 1;
  let placed = 0;
  for (let i = 0; i < words; i++) {
    let w = load<u64>(base + (<usize>i << 3));
    while (w != 0) {
      const r = (<u32>i << 6) | <u32>ctz(w);
      w &= w - 1;
      const mappedRow = load<i32>(mapA + (<usize>benchRankAt(a, aWidth, r) << 2));
      const row = select<i32>(nRows, mappedRow, mappedRow < 0);
      const mappedColumn = load<i32>(mapB + (<usize>benchRankAt(b, bWidth, r) << 2));
      const col = select<i32>(nColumns, mappedColumn, mappedColumn < 0);
      const x = load<f64>(weights + (<usize>r << 3));
      const cell = grid + <usize>(row * width + col) * CELL_BYTES;
      store<f64>(cell, load<f64>(cell) + x);
      store<f64>(cell, load<f64>(cell, 8) + x * x, 8);
      store<f64>(cell, load<f64>(cell, 16) + 1, 16);
      placed++;
    }
  }
  return placed;
}

@inline function benchRankAt(column: usize, width: i32, r: u32): u32 {
  if (width == 1) return <u32>load<u8>(column + <usize>r);
  if (width == 2) return <u32>load<u16>(column + (<usize>r << 1));
  return load<u32>(column + (<usize>r << 2));
}
