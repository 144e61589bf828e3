import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import type { RawTable, ReadOptions } from './raw-table.js';
import { readCsv } from './read-csv.js';
import { unreadable } from './input-file.js';
import { inputError } from './table-encoder.js';
import { placedError } from './input-errors.js';
import { firstWeightOutOfRange, weightRangeProblem } from '../weight-range.js';

export type InputFormat = 'sav' | 'parquet' | 'arrow' | 'csv';

// The binary formats' readers (and their libraries: apache-arrow alone takes a tenth of a
// second to load) are loaded when a file of theirs is read.
const readers: Record<InputFormat, (path: string, options: ReadOptions) => Promise<RawTable>> = {
  sav: async (path, options) => (await import('./read-sav.js')).readSav(path, options),
  parquet: async (path, options) => (await import('./read-parquet.js')).readParquet(path, options),
  arrow: async (path, options) => (await import('./read-arrow.js')).readArrow(path, options),
  csv: readCsv,
};

/** What each format's name promises, for files whose first bytes say otherwise. */
const extensions: Record<string, { format: InputFormat; name: string; magic: string }> = {
  '.sav': { format: 'sav', name: 'an SPSS system file', magic: '$FL2 or $FL3' },
  '.zsav': { format: 'sav', name: 'an SPSS system file', magic: '$FL3' },
  '.parquet': { format: 'parquet', name: 'a Parquet file', magic: 'PAR1' },
  '.arrow': { format: 'arrow', name: 'an Arrow IPC file', magic: 'ARROW1 (or an IPC stream message)' },
  '.feather': { format: 'arrow', name: 'an Arrow IPC file', magic: 'ARROW1' },
  '.arrows': { format: 'arrow', name: 'an Arrow IPC stream', magic: 'an IPC stream message' },
  '.ipc': { format: 'arrow', name: 'an Arrow IPC file', magic: 'ARROW1 (or an IPC stream message)' },
};

/**
 * Reads any supported input into a {@link RawTable}, choosing the reader by the file's
 * first bytes, not its name: `$FL2`/`$FL3` SPSS system file ({@link readSav}), `PAR1`
 * Parquet ({@link readParquet}), `ARROW1` Arrow IPC file or an Arrow IPC stream
 * ({@link readArrow}), anything else CSV, plain or gzip'd ({@link readCsv}). A file named
 * like a binary format (`.sav`, `.parquet`, `.arrow`...) whose bytes are not that format is
 * refused rather than read as CSV.
 */
export async function readInput(path: string, options: ReadOptions): Promise<RawTable> {
  const format = await sniffFormat(path);
  const table = await readers[format](path, options);
  checkWeightRange(path, table);
  return table;
}

/**
 * Refuses a weight the readers took (finite, not negative) that the engine cannot compute
 * with (weight-range.ts: above 1e50, or above 0 and below 1e-50), naming its column and row,
 * for every format at once and for a build and an append alike.
 */
function checkWeightRange(path: string, table: RawTable): void {
  for (const weight of table.weights) {
    const at = firstWeightOutOfRange(weight.values, table.rows);
    if (at < 0) continue;
    throw placedError(
      path,
      { row: at + 1 },
      `weight column "${weight.name}" has ${weightRangeProblem(weight.values[at]!)}`,
      'Rescale the column (every weight times one factor: percentages and their standard errors stay the same, weighted sums scale with it), or write 0 for a respondent who should not count.',
      { field: weight.name },
    );
  }
}

/** The format of `path` by its magic bytes. Rejects with `file_not_found` when it cannot be read. */
export async function sniffFormat(path: string): Promise<InputFormat> {
  if (typeof path !== 'string' || path.length === 0) return 'csv'; // readCsv names the bad option
  const head = new Uint8Array(8);
  let length = 0;
  const handle = await open(path, 'r').catch((error: unknown) => {
    throw unreadable(path, error);
  });
  try {
    length = (await handle.read(head, 0, 8, 0)).bytesRead;
  } catch (error) {
    throw unreadable(path, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
  const text = String.fromCharCode(...head.subarray(0, length));
  const view = new DataView(head.buffer);
  let format: InputFormat = 'csv';
  if (text.startsWith('$FL2') || text.startsWith('$FL3')) format = 'sav';
  else if (text.startsWith('PAR1')) format = 'parquet';
  else if (text.startsWith('ARROW1')) format = 'arrow';
  // An IPC stream starts with a message: the continuation marker 0xFFFFFFFF and the
  // length of its flatbuffer metadata.
  else if (length === 8 && view.getUint32(0, true) === 0xffffffff && view.getInt32(4, true) > 0) format = 'arrow';
  const named = extensions[extname(path).toLowerCase()];
  if (named && named.format !== format) {
    const found = length === 0 ? 'the file is empty' : `its first bytes are ${JSON.stringify(text.replace(/[^\x20-\x7e]/g, '.'))}`;
    const hint = `The file is damaged, truncated or misnamed: ${named.name} starts with ${named.magic}. Export it again, or rename it if it is really another format.`;
    throw inputError(path, `the name says ${named.name} but ${found}`, hint);
  }
  return format;
}
