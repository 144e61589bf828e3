import type { BufferKind, StoredMeta } from '../format.js';

/** A buffer of the dataset, now in kernel memory. */
export interface LoadedBuffer {
  ptr: number;
  kind: BufferKind;
  count: number;
}

export interface LoadedDataset {
  path: string;
  meta: StoredMeta;
  checksum: string;
  /** u64 words of every bitset of this dataset. */
  words: number;
  /** Every buffer; queries take them through buffer(), which checks each before its first use. */
  buffers: LoadedBuffer[];
  /** Kernel memory held by this dataset, released on close. */
  regions: Array<{ ptr: number; bytes: number }>;
  /** The buffer at `row`, checked against its XXH64 the first time it is used. */
  buffer(row: number): LoadedBuffer;
  /** Checks every buffer not checked yet; returns how many buffers and bytes the dataset has. */
  verifyAll(): { buffers: number; bytes: number };
  /** Closes the file; buffers not read yet can no longer be read. The caller releases `regions`. */
  close(): void;
}
