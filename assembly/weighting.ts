// Weighting's walks over respondents (src/facade/weight-cells.ts): each respondent's fine
// cell (its combination of the target variables' values), then per cell, per value and over
// everyone the sums a weighting and its report need. The caller walks the respondents in
// blocks (a block's cells are an i32 array it reuses, 256 KiB for 64Ki respondents, and the
// block's weights, 512 KiB, stay in cache across the functions called on it), so no array of
// millions of cells is ever made, and V8 swaps in its optimised code between calls.
//
// Every sum is f64 and added in respondent order, as a walk in JavaScript adds it: the same
// bits to the last one. Comparisons are written as `x < min` (not f64.min), as JavaScript's
// are, so a NaN or a -0 ends in the same place.

/**
 * Target variable of weightCellsOf and weightBlockSums: u32 index column (its first
 * respondent's rank), u32 bytes per rank (1, 2 or 4), u32 radix (its values + 1: ranks
 * 0..values), u32 its value sums (RANK_SUMS_BYTES per rank).
 */
export const WEIGHT_VARIABLE_BYTES: usize = 16;
/** Sums of one fine cell (weightBlockSums): f64 sum of weights, f64 respondents, f64 first respondent. */
export const CELL_SUMS_BYTES: usize = 24;
/** Sums of one value (weightBlockSums): f64 respondents, f64 sum of weights, f64 min, f64 max. */
export const RANK_SUMS_BYTES: usize = 32;
/** Spread of weights (weightBlockSums): f64 respondents, sum, sum of squares, min, max. */
export const SPREAD_BYTES: usize = 40;

/**
 * The fine cell of each of the `count` respondents from `from` on, into `cells` (i32): the key
 * of its ranks (the first variable's rank the most significant digit) looked up in `table`
 * (i32 per key: its cell + 1, 0 for a key no respondent had yet), a key met for the first time
 * numbered `next`, `next + 1`, ... in order of appearance. Returns the cells numbered so far.
 * The keys are built a variable at a time over the block (each loop reads one column), then
 * looked up: the caller keeps the table below 2^31 keys.
 */
export function weightCellsOf(vars: usize, nVars: i32, from: u32, count: i32, table: usize, cells: usize, next: i32): i32 {
  memory.fill(cells, 0, <usize>count << 2);
  for (let v = 0; v < nVars; v++) {
    const entry = vars + <usize>v * WEIGHT_VARIABLE_BYTES;
    const column = <usize>load<u32>(entry);
    const width = load<u32>(entry, 4);
    const radix = load<i32>(entry, 8);
    if (width == 1) addDigits<u8>(cells, count, column, from, radix);
    else if (width == 2) addDigits<u16>(cells, count, column, from, radix);
    else addDigits<u32>(cells, count, column, from, radix);
  }
  const end = cells + (<usize>count << 2);
  for (let p = cells; p < end; p += 4) {
    const slot = table + (<usize>load<i32>(p) << 2);
    let cell = load<i32>(slot) - 1;
    if (cell < 0) {
      cell = next++;
      store<i32>(slot, cell + 1);
    }
    store<i32>(p, cell);
  }
  return next;
}

/** keys[i] = keys[i] * radix + rank of respondent from + i: the next variable's digit. */
@inline function addDigits<T>(keys: usize, count: i32, column: usize, from: u32, radix: i32): void {
  const ranks = column + (<usize>from << alignof<T>());
  for (let i = 0; i < count; i++) {
    const at = keys + (<usize>i << 2);
    store<i32>(at, load<i32>(at) * radix + <i32>load<T>(ranks + (<usize>i << alignof<T>())));
  }
}

/** Each of the `count` weights from `from` on times its cell's factor (`factors`: f64 per cell), in place. */
export function weightScale(cells: usize, count: i32, from: u32, weights: usize, factors: usize): void {
  const first = weights + (<usize>from << 3);
  for (let i = 0; i < count; i++) {
    const at = first + (<usize>i << 3);
    store<f64>(at, load<f64>(at) * load<f64>(factors + (<usize>load<i32>(cells + (<usize>i << 2)) << 3)));
  }
}

/**
 * The sums of the `count` respondents from `from` on (cells in `cells`, weights at `weights`,
 * the whole vector), in one walk: per cell (`sums`, CELL_SUMS_BYTES each, zeroed by the
 * caller) the weights' sum, the respondents and the first of them; per target variable
 * (`vars`) and value, the respondents and the weights' sum, min and max; over everyone, the
 * spread (`spread`). The caller starts every min at +Infinity and max at -Infinity. One walk,
 * not one per accumulator: each accumulator is a chain of load-add-store on one address
 * (consecutive respondents mostly share a value), and walked together the chains overlap
 * (on the whole ACS, a walk per accumulator cost `crosstab weight` about 50 ms more user CPU).
 */
export function weightBlockSums(vars: usize, nVars: i32, cells: usize, count: i32, from: u32, weights: usize, sums: usize, spread: usize): void {
  const first = weights + (<usize>from << 3);
  let total = load<f64>(spread, 8);
  let squares = load<f64>(spread, 16);
  let min = load<f64>(spread, 24);
  let max = load<f64>(spread, 32);
  const end = vars + <usize>nVars * WEIGHT_VARIABLE_BYTES;
  for (let i = 0; i < count; i++) {
    const weight = load<f64>(first + (<usize>i << 3));
    const cell = sums + <usize>load<i32>(cells + (<usize>i << 2)) * CELL_SUMS_BYTES;
    const respondents = load<f64>(cell, 8);
    if (respondents == 0) store<f64>(cell, <f64>(from + <u32>i), 16);
    store<f64>(cell, load<f64>(cell) + weight);
    store<f64>(cell, respondents + 1, 8);
    const r = from + <u32>i;
    for (let entry = vars; entry < end; entry += WEIGHT_VARIABLE_BYTES) {
      const rank = rankOf(<usize>load<u32>(entry), load<u32>(entry, 4), r);
      const at = <usize>load<u32>(entry, 12) + <usize>rank * RANK_SUMS_BYTES;
      store<f64>(at, load<f64>(at) + 1);
      store<f64>(at, load<f64>(at, 8) + weight, 8);
      if (weight < load<f64>(at, 16)) store<f64>(at, weight, 16);
      if (weight > load<f64>(at, 24)) store<f64>(at, weight, 24);
    }
    total += weight;
    squares += weight * weight;
    if (weight < min) min = weight;
    if (weight > max) max = weight;
  }
  store<f64>(spread, load<f64>(spread) + <f64>count);
  store<f64>(spread, total, 8);
  store<f64>(spread, squares, 16);
  store<f64>(spread, min, 24);
  store<f64>(spread, max, 32);
}

@inline function rankOf(column: usize, width: u32, r: u32): u32 {
  if (width == 1) return <u32>load<u8>(column + <usize>r);
  if (width == 2) return <u32>load<u16>(column + (<usize>r << 1));
  return load<u32>(column + (<usize>r << 2));
}
