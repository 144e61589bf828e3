import type { RowIds } from '../input/row-ids.js';

/** What one variable's buffers are made from. */
export interface ColumnBuffersTask {
  /** Dictionary id per input row. */
  ids: RowIds;
  /** Dictionary id -> 1-based rank (0: blank). */
  remap: Uint32Array;
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

/** Version of the column builder's exports this code calls (columnsAbi() in assembly/columns.ts). */
export const COLUMNS_ABI: number;

/** The memory the column builders of one build share (see columnMemory). */
export interface ColumnMemory {
  memory: WebAssembly.Memory;
  /** `respondentOf[row]`: the respondent input row `row` is stored as (see WeightOrder); the weight order writes it. */
  respondentOf: Uint32Array<SharedArrayBuffer>;
  /** Address of respondentOf. */
  orderAt: number;
  /** Address of each thread's scratch area. */
  scratchAt: number[];
}

/** A shared memory for `rows` respondents and `threads` scratch areas of `scratchBytes`. */
export function columnMemory(rows: number, scratchBytes: number, threads: number): ColumnMemory;

/** Bytes of scratch area the buffers of `task` take. */
export function scratchBytes(task: Omit<ColumnBuffersTask, 'ids'> & { ids: { BYTES_PER_ELEMENT: number } }): number;

/** A buffer as the file stores it (zero-padded to 64 bytes) and the XXH64 of those bytes (the dataset writer's HashedBuffer). */
export interface StoredBuffer {
  stored: Uint8Array;
  hash: string;
}

/** The column builder (build/columns.wasm) of one thread, over a ColumnMemory. */
export class ColumnKernel {
  constructor(module: WebAssembly.Module, place: { memory: WebAssembly.Memory; orderAt: number; scratchAt: number });
  /**
   * The index column, if `dense` is given the code containers, and if `atLeast` the range
   * index, in file order, as stored and hashed: views of one ArrayBuffer of their own.
   */
  columnBuffers(task: ColumnBuffersTask): StoredBuffer[];
}
