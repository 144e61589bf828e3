import type { RowIds } from '../input/row-ids.js';

/** What one variable's buffers are made from. */
export interface ColumnBuffersTask {
  /** Dictionary id per input row. */
  ids: RowIds;
  /** Dictionary id -> 1-based rank (0: blank). */
  remap: Uint32Array;
  /** order[r]: the input row stored as respondent r. */
  order: Uint32Array;
  /** Distinct ranks (values) of the variable. */
  distinct: number;
  /** Respondents per rank (rank - 1). */
  counts: number[];
  /** Per rank: a dense bitset (true) or a sorted list; undefined: no code containers. */
  dense: boolean[] | undefined;
  /** 64-bit words of a bitset over the respondents. */
  words: number;
  rows: number;
}

/** The index column and, if `dense` is given, the code containers, in file order. */
export function columnBuffers(task: ColumnBuffersTask): Uint8Array[];
