import type { RowIds } from '../input/row-ids.js';

/** What one variable's buffers are made from. */
export interface ColumnBuffersTask {
  /** Dictionary id per input row. */
  ids: RowIds;
  /** Dictionary id -> 1-based rank (0: blank). */
  remap: Uint32Array;
  /** respondentOf[row]: the respondent input row `row` is stored as (see WeightOrder). */
  respondentOf: Uint32Array;
  /** Distinct ranks (values) of the variable. */
  distinct: number;
  /** Respondents per rank (rank - 1). */
  counts: number[];
  /** Per rank: a dense bitset (true) or a sorted list; undefined: no code containers. */
  dense: boolean[] | undefined;
  /** Whether to add the range index: per rank, a bitset of the respondents of that rank or more (after the containers). */
  atLeast: boolean;
  /** 64-bit words of a bitset over the respondents. */
  words: number;
  rows: number;
}

/** The index column, if `dense` is given the code containers, and if `atLeast` the range index, in file order. */
export function columnBuffers(task: ColumnBuffersTask): Uint8Array[];
