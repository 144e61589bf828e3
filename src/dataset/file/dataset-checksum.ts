import { createHash } from 'node:crypto';

/** Characters of a buffer hash: XXH64 as lowercase hex. */
export const HASH_CHARS = 16;

/** One row of the buffer table, as hashed into the dataset checksum. */
export interface BufferRow {
  name: string;
  kind: number;
  count: number;
  /** Bytes stored, padding included. */
  stored: number;
  /** XXH64 of the stored bytes (padding included). */
  hash: string;
}

/**
 * The dataset checksum (`crosstab.checksum`): sha256 of the format, the metadata JSON and,
 * per buffer, every column of its row: name, kind, count, stored length and the XXH64 of
 * its bytes. Every byte that can change an answer is covered, either here (checked at
 * every open) or by its buffer's hash (checked before a query first reads the buffer, or
 * at open with `verify: 'full'`).
 */
export function datasetChecksum(format: string, metaJson: string, rows: Iterable<BufferRow>): string {
  const hash = createHash('sha256');
  hash.update(`${format}\0${metaJson}\0`);
  // The rows' text hashed some 64 KiB at a time (the same digest as row by row): a dataset
  // of many small buffers (value codes of many-valued columns) has 100,000 rows and more.
  let pending = '';
  for (const row of rows) {
    pending += `${row.name}\0${row.kind}\0${row.count}\0${row.stored}\0${row.hash}\n`;
    if (pending.length >= 65536) {
      hash.update(pending);
      pending = '';
    }
  }
  if (pending.length > 0) hash.update(pending);
  return hash.digest('hex');
}
