import type { BufferKind, StoredMeta } from '../format.js';

/** A buffer of the dataset, now in kernel memory. */
export interface LoadedBuffer {
  ptr: number;
  kind: BufferKind;
  count: number;
}

/** The weights file opened with a dataset (`crosstab weight` without `--out`). */
export interface LoadedWeightsFile {
  path: string;
  /** Its own checksum (crosstab.checksum of the weights file). */
  checksum: string;
  /** The checksum of the dataset file it was made from, which is the one opened with it. */
  datasetChecksum: string;
  /** The weights it adds, in order (after the dataset's own in `meta.weights`). */
  weights: string[];
  createdAt: string;
}

export interface LoadedDataset {
  path: string;
  /** The metadata, with the weights file's weights (if any) after the dataset's own. */
  meta: StoredMeta;
  /**
   * The version of what is open: the dataset file's checksum, or with a weights file that
   * file's checksum (which covers the dataset's).
   */
  checksum: string;
  /** The weights file opened with the dataset, if it has one. */
  weightsFile?: LoadedWeightsFile;
  /** Segments of the dataset file (SEGMENTED_FORMAT_VERSION): absent for a file not in segments. */
  segments?: number;
  /** u64 words of every bitset of this dataset. */
  words: number;
  /** Every buffer; queries take them through buffer(), which checks each before its first use. */
  buffers: LoadedBuffer[];
  /** Kernel memory held by this dataset, released on close. */
  regions: Array<{ ptr: number; bytes: number }>;
  /** The buffer at `row`, checked against its XXH64 the first time it is used. */
  buffer(row: number): LoadedBuffer;
  /**
   * Reads the stored bytes of buffer `row` (padding included: `stored` of them) into the start of `into`,
   * unchecked, for a caller that checks them against `hash` itself (`hash` undefined: a buffer
   * of a file in segments, whose parts were each checked against their own hash as they were read); `damaged(row)` is the
   * error to throw when they fail it. Refused when the file was written over in place since
   * it was opened, unless `checkStamp` is false: a caller that reads many buffers and checks
   * each against its hash calls checkUnchanged() once after the last instead.
   */
  readStored(row: number, into: Uint8Array, checkStamp?: boolean): { name: string; stored: number; hash: string | undefined };
  /**
   * Refuses (invalid_input, with the error a query's first read of the buffer gives: the file,
   * the weight, the respondent and its input row) when buffer `row` is a weights buffer and
   * `stored`, its stored bytes read by the caller (readStored; 8-byte aligned), hold a weight
   * outside the range the engine takes. Other buffers pass.
   */
  refuseWeightsOutOfRange(row: number, stored: Uint8Array): void;
  /**
   * Refuses, as refuseWeightsOutOfRange, weights buffer `row` holding a weight outside the
   * range, read from its file a window at a time (not into its kernel memory, and not checked
   * against its hash: its first read checks that): for a caller that carries the buffer into
   * another file without reading it (an append in segments).
   */
  checkStoredWeights(row: number): void;
  /** Refuses (corrupt_dataset) when a file of the dataset was written over in place since it was opened. */
  checkUnchanged(): void;
  damaged(row: number): Error;
  /** Checks every buffer not checked yet; returns how many buffers and bytes the dataset has. */
  verifyAll(): { buffers: number; bytes: number };
  /** Closes the file; buffers not read yet can no longer be read. The caller releases `regions`. */
  close(): void;
}
