import { CrosstabError, ErrorCode } from '../errors.js';
import type { RankColumn } from '../dataset/file/respondent-columns.js';
import type { StoredVariable } from '../dataset/format.js';

/**
 * Respondents grouped by their values of every variable the targets use (the group
 * variable first): a "fine cell" per distinct combination, holding its respondents and the
 * sum of their base weights (f64, summed in respondent order). A respondent's new weight is
 * its base weight times its fine cell's factor, so everything between reading the data and
 * writing the weight works on cells, not respondents.
 */
export interface FineCells {
  variables: StoredVariable[];
  /** Per variable, the value rank of each cell. */
  ranks: number[][];
  base: number[];
  respondents: number[];
  /**
   * Fills `into` with the cells of respondents `start` to `start + into.length - 1`,
   * recomputed from their values. No array per respondent: weighting holds only the base and
   * new weights and the target variables' columns per respondent, and a fresh array of
   * millions of entries costs a page fault per 4 KiB on first touch. Walk the respondents in
   * blocks of {@link CELL_BLOCK} into one reused array.
   */
  cellsOf(start: number, into: Int32Array): void;
}

/** Respondents per block of cellsOf(): a 256 KiB array, reused, stays in cache. */
export const CELL_BLOCK = 1 << 16;

/** Largest table of combinations indexed directly; beyond it a Map is used. */
const DIRECT_LIMIT = 1 << 22;

export function fineCells(variables: StoredVariable[], columns: RankColumn[], base: Float64Array): FineCells {
  const n = base.length;
  const radix = variables.map((variable) => variable.values.length + 1);
  const combinations = radix.reduce((product, r) => product * r, 1);
  if (combinations > Number.MAX_SAFE_INTEGER) {
    throw new CrosstabError(ErrorCode.invalidInput, `the target variables ${variables.map((v) => v.name).join(', ')} have too many combinations of values to weight`, {
      hint: 'Weight on fewer variables, or on variables with fewer values (band a numeric variable first).',
    });
  }
  let cellsOf: FineCells['cellsOf'];
  let cellCount: () => number;
  if (combinations <= DIRECT_LIMIT) {
    // Per combination, its cell (-1 until a respondent has it).
    const table = new Int32Array(combinations).fill(-1);
    let cells = 0;
    cellsOf = (start, into) => {
      // The combination's key per respondent, a column at a time (each loop reads one typed
      // array), then each key replaced by its cell (a new one for a key not met before).
      into.fill(0);
      for (let v = 0; v < columns.length; v++) addDigits(into, columns[v]!, start, radix[v]!);
      cells = keysToCells(into, table, cells);
    };
    cellCount = () => cells;
  } else {
    // Keys past 2^31 (and a table too large to index): one key at a time, through a Map.
    const mapped = new Map<number, number>();
    const keyOf = (r: number) => {
      let key = 0;
      for (let v = 0; v < columns.length; v++) key = key * radix[v]! + columns[v]![r]!;
      return key;
    };
    cellsOf = (start, into) => {
      for (let i = 0; i < into.length; i++) {
        const key = keyOf(start + i);
        let cell = mapped.get(key);
        if (cell === undefined) mapped.set(key, (cell = mapped.size));
        into[i] = cell;
      }
    };
    cellCount = () => mapped.size;
  }
  // The cells numbered in order of first appearance, as the walk meets them; per cell its
  // respondents and base weights (summed in respondent order), and its ranks from its first respondent.
  let baseOf = new Float64Array(64);
  let respondentsOf = new Float64Array(64);
  let first = new Int32Array(64).fill(-1);
  const block = new Int32Array(CELL_BLOCK);
  for (let start = 0; start < n; start += CELL_BLOCK) {
    const into = block.subarray(0, Math.min(CELL_BLOCK, n - start));
    cellsOf(start, into);
    if (cellCount() > baseOf.length) {
      const grown = Math.max(cellCount(), 2 * baseOf.length);
      baseOf = grownTo(baseOf, grown);
      respondentsOf = grownTo(respondentsOf, grown);
      first = grownTo(first, grown);
    }
    sumCells(into, start, base, baseOf, respondentsOf, first);
  }
  const cells = cellCount();
  return {
    variables,
    ranks: columns.map((column) => Array.from(first.subarray(0, cells), (r) => column[r]!)),
    base: Array.from(baseOf.subarray(0, cells)),
    respondents: Array.from(respondentsOf.subarray(0, cells)),
    cellsOf,
  };
}

/** keys[i] = keys[i] * radix + column[start + i]: the next variable's rank as the next digit of each key. */
function addDigits(keys: Int32Array, column: RankColumn, start: number, radix: number): void {
  for (let i = 0; i < keys.length; i++) keys[i] = keys[i]! * radix + column[start + i]!;
}

/** Replaces each key by its cell (`table`: per key, its cell or -1), a key not seen before getting the next; returns the cells numbered so far. */
function keysToCells(keys: Int32Array, table: Int32Array, cells: number): number {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    let cell = table[key]!;
    if (cell < 0) table[key] = cell = cells++;
    keys[i] = cell;
  }
  return cells;
}

function grownTo<T extends Float64Array | Int32Array>(array: T, length: number): T {
  const grown = new (array.constructor as new (length: number) => T)(length);
  grown.set(array);
  if (grown instanceof Int32Array) grown.fill(-1, array.length);
  return grown;
}

function sumCells(cells: Int32Array, start: number, base: Float64Array, baseOf: Float64Array, respondentsOf: Float64Array, first: Int32Array): void {
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i]!;
    baseOf[cell]! += base[start + i]!;
    respondentsOf[cell]!++;
    if (first[cell]! < 0) first[cell] = start + i;
  }
}

/**
 * Each respondent's base weight (in `weights`) times its fine cell's factor, in place; returns
 * the new weights summed per fine cell (in respondent order).
 */
export function scaleByCell(fine: FineCells, weights: Float64Array, factor: Float64Array): Float64Array {
  const totals = new Float64Array(fine.base.length);
  const block = new Int32Array(CELL_BLOCK);
  for (let start = 0; start < weights.length; start += CELL_BLOCK) {
    const cells = block.subarray(0, Math.min(CELL_BLOCK, weights.length - start));
    fine.cellsOf(start, cells);
    for (let i = 0; i < cells.length; i++) {
      const cell = cells[i]!;
      const weight = weights[start + i]! * factor[cell]!;
      weights[start + i] = weight;
      totals[cell]! += weight;
    }
  }
  return totals;
}

/** The weights summed per fine cell (in respondent order). */
export function cellTotals(fine: FineCells, weights: Float64Array): Float64Array {
  const totals = new Float64Array(fine.base.length);
  const block = new Int32Array(CELL_BLOCK);
  for (let start = 0; start < weights.length; start += CELL_BLOCK) {
    const cells = block.subarray(0, Math.min(CELL_BLOCK, weights.length - start));
    fine.cellsOf(start, cells);
    for (let i = 0; i < cells.length; i++) totals[cells[i]!]! += weights[start + i]!;
  }
  return totals;
}
