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
  let cells = 0;
  let cellsOf: FineCells['cellsOf'];
  if (combinations <= DIRECT_LIMIT) {
    // Per combination, its cell (-1 until a respondent has it), numbered in order of first appearance.
    const table = new Int32Array(combinations).fill(-1);
    cellsOf = (start, into) => {
      // The combination's key per respondent, a column at a time (each loop reads one typed array), then each key replaced by its cell.
      into.fill(0);
      for (let v = 0; v < columns.length; v++) addDigits(into, columns[v]!, start, radix[v]!);
      for (let i = 0; i < into.length; i++) into[i] = table[into[i]!]!;
    };
    // Numbering the cells: the same walk, new keys given the next cell.
    const keys = new Int32Array(CELL_BLOCK);
    for (let start = 0; start < n; start += CELL_BLOCK) {
      const block = keys.subarray(0, Math.min(CELL_BLOCK, n - start));
      block.fill(0);
      for (let v = 0; v < columns.length; v++) addDigits(block, columns[v]!, start, radix[v]!);
      cells = numberCells(block, table, cells);
    }
  } else {
    // Keys past 2^31 (and a table too large to index): one key at a time, through a Map.
    const mapped = new Map<number, number>();
    const keyOf = (r: number) => {
      let key = 0;
      for (let v = 0; v < columns.length; v++) key = key * radix[v]! + columns[v]![r]!;
      return key;
    };
    for (let r = 0; r < n; r++) if (!mapped.has(keyOf(r))) mapped.set(keyOf(r), mapped.size);
    cells = mapped.size;
    cellsOf = (start, into) => {
      for (let i = 0; i < into.length; i++) into[i] = mapped.get(keyOf(start + i))!;
    };
  }
  // Per cell: its respondents and base weights (summed in respondent order), and its ranks from its first respondent.
  const baseOf = new Float64Array(cells);
  const respondentsOf = new Float64Array(cells);
  const first = new Int32Array(cells).fill(-1);
  const block = new Int32Array(CELL_BLOCK);
  for (let start = 0; start < n; start += CELL_BLOCK) {
    const into = block.subarray(0, Math.min(CELL_BLOCK, n - start));
    cellsOf(start, into);
    sumCells(into, start, base, baseOf, respondentsOf, first);
  }
  return {
    variables,
    ranks: columns.map((column) => Array.from(first, (r) => column[r]!)),
    base: Array.from(baseOf),
    respondents: Array.from(respondentsOf),
    cellsOf,
  };
}

/** keys[i] = keys[i] * radix + column[start + i]: the next variable's rank as the next digit of each key. */
function addDigits(keys: Int32Array, column: RankColumn, start: number, radix: number): void {
  for (let i = 0; i < keys.length; i++) keys[i] = keys[i]! * radix + column[start + i]!;
}

/** Gives each key not seen before the next cell (`table`: per key, its cell or -1); returns the cells numbered so far. */
function numberCells(keys: Int32Array, table: Int32Array, cells: number): number {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (table[key]! < 0) table[key] = cells++;
  }
  return cells;
}

function sumCells(cells: Int32Array, start: number, base: Float64Array, baseOf: Float64Array, respondentsOf: Float64Array, first: Int32Array): void {
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i]!;
    baseOf[cell]! += base[start + i]!;
    respondentsOf[cell]!++;
    if (first[cell]! < 0) first[cell] = start + i;
  }
}
