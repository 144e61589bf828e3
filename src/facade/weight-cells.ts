import { CrosstabError, ErrorCode } from '../errors.js';
import type { RankColumn } from '../dataset/file/respondent-columns.js';
import type { StoredVariable } from '../dataset/format.js';

/**
 * Respondents grouped by their values of every variable the targets use (the group
 * variable first): a "fine cell" per distinct combination, holding its respondents and the
 * sum of their base weights (f64). A respondent's new weight is its base weight times its
 * fine cell's factor, so everything between reading the data and writing the weight works
 * on cells, not respondents.
 */
export interface FineCells {
  variables: StoredVariable[];
  /** Per variable, the value rank of each cell. */
  ranks: number[][];
  base: number[];
  respondents: number[];
  /**
   * Respondent r's cell, recomputed from its values (no array per respondent: weighting holds
   * only the base and new weights and the target variables' columns per respondent).
   */
  cellOf(r: number): number;
}

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
  const direct = combinations <= DIRECT_LIMIT ? new Int32Array(combinations).fill(-1) : undefined;
  const mapped = direct === undefined ? new Map<number, number>() : undefined;
  const keyOf = (r: number) => {
    let key = 0;
    for (let v = 0; v < columns.length; v++) key = key * radix[v]! + columns[v]![r]!;
    return key;
  };
  const cellOf = direct !== undefined ? (r: number) => direct[keyOf(r)]! : (r: number) => mapped!.get(keyOf(r))!;
  const cells: FineCells = { variables, ranks: variables.map(() => []), base: [], respondents: [], cellOf };
  for (let r = 0; r < n; r++) {
    const key = keyOf(r);
    let cell = direct !== undefined ? direct[key]! : (mapped!.get(key) ?? -1);
    if (cell < 0) {
      cell = cells.base.length;
      if (direct !== undefined) direct[key] = cell;
      else mapped!.set(key, cell);
      for (let v = 0; v < columns.length; v++) cells.ranks[v]!.push(columns[v]![r]!);
      cells.base.push(0);
      cells.respondents.push(0);
    }
    cells.base[cell]! += base[r]!;
    cells.respondents[cell]!++;
  }
  return cells;
}
