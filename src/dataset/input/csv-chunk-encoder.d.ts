import type { RowIds } from './row-ids.js';

/** One share of a CSV's columns, as the chunk encoder takes it (a worker's workerData). */
export interface ChunkEncoderShare {
  module: WebAssembly.Module;
  abi: number;
  /** A byte per column: 0 not this share's, 1 dictionary, 2 weight. */
  kinds: Uint8Array;
  /** This share's dictionary or weight number per column. */
  slots: Uint32Array;
  dictionaries: number;
  weights: number;
}

/** A chunk of whole lines to encode (`length` bytes of `chunk`), numbered `seq`. */
export interface ChunkMessage {
  seq: number;
  chunk: Uint8Array;
  length: number;
}

export interface ChunkResult {
  seq: number;
  error?: string;
  /** Every line of the chunk was encoded (else the chunk is read as text). */
  complete: boolean;
  rows: number;
  /** Per dictionary column of the share: the rows' ids, which are the column's ids. */
  ids: RowIds[];
  weights: Float64Array[];
  /** Per dictionary column of the share: its values first seen in this chunk, in id order (UTF-8, back to back). */
  fresh: Array<{ bytes: Uint8Array; lengths: Uint32Array }>;
}

/** The encoder of one share of the columns: chunk in, result out (an error as `error`, never thrown). */
export function chunkEncoder(share: ChunkEncoderShare): (message: ChunkMessage) => ChunkResult;
