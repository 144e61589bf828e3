import type { FileHandle } from 'node:fs/promises';
import { type AsyncBuffer, type ColumnData, type FileMetaData, type ParquetParsers, parquetMetadataAsync, parquetRead, parquetSchema } from 'hyparquet';
import { CrosstabError } from '../../errors.js';
import { chunkFailure, chunkRange, codecsReady, type FlatColumn, flatType, storeColumnChunk, unreadEncoding } from './parquet-chunk.js';
import { type FlatColumnAt, handOutColumns, startWorkers } from './parquet-share.js';
import { adoptShare, type ShareWorkers } from './column-shares.js';
import { PlainTextColumn } from './parquet-texts.js';
import type { RawTable, ReadOptions } from './raw-table.js';
import { idLikeCountLimit } from '../format.js';
import { decimalText } from '../../text/decimal-text.js';
import { isoTime, isoTimestamp } from './cell-values.js';
import { checkTrailer, readTypedFile } from './input-file.js';
import type { FileIdentity } from './file-identity.js';
import { type CellValue, type ColumnEncoder, inputError, TableEncoder } from './table-encoder.js';

/** Dates and timestamps become ISO 8601 text, as a CSV export writes them. */
const parsers: Partial<ParquetParsers> = {
  dateFromDays: (days: number) => isoDate(days * 86_400_000),
  timestampFromMilliseconds: (millis: bigint) => isoTimestamp(BigInt(millis), 3),
  timestampFromMicroseconds: (micros: bigint) => isoTimestamp(BigInt(micros), 6),
  timestampFromNanoseconds: (nanos: bigint) => isoTimestamp(BigInt(nanos), 9),
};

/**
 * Reads a Parquet file (snappy, gzip, zstd, brotli and lz4 pages) into dictionary-encoded
 * columns and validated weights, one row group at a time. Flat integer, float and text
 * columns in PLAIN or dictionary encoding are decoded here straight into the encoder, a
 * share of them by worker threads (`threads`, see parquet-share.ts); other types and
 * encodings by hyparquet, each such column named in the table's `notes`.
 *
 * Values are the text a CSV export of the same data would hold: integers and floats as
 * JavaScript writes them (`2`, not `2.0`), strings as they are (`06` stays `06`), booleans
 * as `true`/`false`, dates, times and timestamps as ISO 8601 with every digit stored,
 * decimals as their exact digits; null, NaN and empty strings are
 * blank. Weight columns may be any numeric type (or text holding decimal numbers).
 * Nested columns (lists, structs, maps) cannot be crosstabbed: leave them out with `exclude`.
 *
 * Rejects with a {@link CrosstabError}, as {@link readCsv} does, plus `invalid_input` for a
 * truncated or corrupt file; bad weights carry `row` (1-based) and `field` in `details`.
 */
export async function readParquet(path: string, options: ReadOptions): Promise<RawTable> {
  return readTypedFile(path, options, 'Parquet', async (handle, size, identity) => {
    // Worker threads start now: their start-up overlaps this thread's read of the metadata.
    const started = startWorkers(size, options.threads);
    try {
      return await readWith(path, options, handle, size, identity, started);
    } finally {
      await started?.stop();
    }
  });
}

/** readParquet once the file is open, with the workers `started` for it (startWorkers), if any. */
async function readWith(path: string, options: ReadOptions, handle: FileHandle, size: number, identity: FileIdentity, started: ShareWorkers | undefined): Promise<RawTable> {
  await checkTrailer(handle, size, path, 'Parquet', 'PAR1');
  const file = fileBuffer(handle, size);
  const metadata = await parquetMetadataAsync(file);
  const fields = parquetSchema(metadata).children;
  const rows = Number(metadata.num_rows);
  await codecsReady(metadata.row_groups.flatMap((group) => group.columns.map((chunk) => chunk.meta_data?.codec ?? 'UNCOMPRESSED')));
  const encoder = new TableEncoder(path, 'Parquet schema', fields.map((field) => ({ name: field.element.name })), options, { expectedRows: rows });
  const wanted = fields.flatMap((field, i) => (encoder.columns[i] !== undefined || encoder.weightAt[i] !== undefined ? [i] : []));
  for (const i of wanted) {
    const field = fields[i]!;
    if (field.children.length > 0 || field.element.repetition_type === 'REPEATED') {
      const name = field.element.name;
      const hint = `Crosstabs need one value per respondent: leave it out (options.exclude / --exclude ${name}) or flatten it first.`;
      throw inputError(path, `column "${name}" is a nested Parquet column (list, struct or map)`, hint, { field: name });
    }
  }
  const positions = new Map(wanted.map((i) => [fields[i]!.element.name, i]));
  const flat = new Map(wanted.flatMap((i) => {
    const element = fields[i]!.element;
    const type = flatType(element);
    const target = encoder.columns[i] ?? encoder.weightAt[i]!;
    if (type === undefined) return [];
    const column: FlatColumn & FlatColumnAt = { position: i, type, optional: element.repetition_type !== 'REQUIRED', weight: encoder.weightAt[i] !== undefined, target };
    return [[element.name, column] as const];
  }));
  // Why a column goes to hyparquet (its first reason), for a note: it is several times slower.
  const slow = new Map<string, string>();
  for (const i of wanted) {
    const element = fields[i]!.element;
    if (!flat.has(element.name)) slow.set(element.name, `its type (${[element.type, element.logical_type?.type ?? element.converted_type].filter(Boolean).join(' ')}) needs converting`);
  }
  const conversions = ownConversions(metadata, wanted.map((i) => fields[i]!.element));
  // A share of the columns goes to worker threads, read while this thread reads the rest.
  const handed = handOutColumns(path, identity, metadata, flat, options.threads, started);
  const readWhole = new Set(options.skipIdLike?.except);
  for (const [name, column] of flat) {
    if (column.type !== 'BYTE_ARRAY' || column.weight || handed?.names.has(name) || !onlyPlainPages(metadata, name)) continue;
    const stopAbove = options.skipIdLike === undefined || readWhole.has(name) ? undefined : idLikeCountLimit(rows);
    column.texts = new PlainTextColumn(column.target as ColumnEncoder, stopAbove);
  }
  try {
    await readHere(path, handle, size, file, metadata, flat, positions, encoder, slow, handed?.names ?? new Set(), options, conversions);
    for (const share of (await handed?.results) ?? []) adoptShare(encoder.columns[share.position]!, share);
  } finally {
    await handed?.stop();
  }
  const table = encoder.finish(rows, 'A Parquet file needs at least one row.');
  if (slow.size > 0) table.notes = [...slow].map(([name, why]) => `column ${name} read by the general Parquet reader (several times slower): ${why}`);
  return table;
}

/** Reads the columns not `handed` to workers, a row group at a time, reporting progress after each. */
async function readHere(path: string, handle: FileHandle, size: number, file: AsyncBuffer, metadata: FileMetaData, flat: Map<string, FlatColumn>, positions: Map<string, number>, encoder: TableEncoder, slow: Map<string, string>, handed: Set<string>, options: ReadOptions, conversions: Conversions): Promise<void> {
  const rows = Number(metadata.num_rows);
  let groupStart = 0;
  for (const [index, group] of metadata.row_groups.entries()) {
    const groupRows = Number(group.num_rows);
    // Columns whose chunk is not read here (not found by its metadata, either) go to hyparquet.
    const others = new Set([...positions.keys()].filter((name) => !handed.has(name)));
    for (const chunk of group.columns) {
      const meta = chunk.meta_data;
      const name = meta?.path_in_schema.join('.') ?? '';
      const column = flat.get(name);
      if (meta === undefined || column === undefined || handed.has(name)) continue;
      const unread = chunk.file_path === undefined ? unreadEncoding(meta) : 'its pages in another file';
      if (unread !== undefined) {
        if (!slow.has(name)) slow.set(name, unread.includes(' ') ? unread : `${unread} pages`);
        continue;
      }
      others.delete(name);
      // A column that stopped being numbered past the id-like bound reads as blank from there on: its later chunks are not read.
      if (column.texts?.numberingStopped) continue;
      const { start, end } = chunkRange(meta);
      const bytes = await readRange(handle, start, end, size);
      try {
        storeColumnChunk(bytes, meta, column, groupStart, groupRows);
      } catch (error) {
        throw chunkFailure(path, name, index, error);
      }
    }
    if (others.size > 0) await readOthers(file, conversions.metadata, [...others], positions, encoder, groupStart, groupRows, conversions.cells);
    groupStart += groupRows;
    options.onProgress?.(Math.round((size * groupStart) / Math.max(rows, 1)), size);
  }
}

/**
 * Columns of one row group that {@link storeColumnChunk} does not read (dates, timestamps,
 * decimals, booleans, binary; DELTA or BYTE_STREAM_SPLIT encodings), read by hyparquet.
 */
async function readOthers(file: AsyncBuffer, metadata: FileMetaData, columns: string[], positions: Map<string, number>, encoder: TableEncoder, groupStart: number, groupRows: number, converted: Conversions['cells']): Promise<void> {
  let failure: unknown;
  const onChunk = (chunk: ColumnData) => {
    if (failure !== undefined) return;
    try {
      storeChunk(encoder, positions.get(chunk.columnName)!, chunk, groupStart, groupStart + groupRows, converted.get(chunk.columnName));
    } catch (error) {
      failure = error;
    }
  };
  // hyparquet-compressors loads only for a file that has columns hyparquet reads.
  const { compressors } = await import('hyparquet-compressors');
  await parquetRead({ file, metadata, columns, rowStart: groupStart, rowEnd: groupStart + groupRows, compressors, parsers, onChunk });
  if (failure !== undefined) throw failure;
}

/** Whether every row group has a chunk of `name` that this decoder reads, without a dictionary page (so PLAIN pages only). */
function onlyPlainPages(metadata: FileMetaData, name: string): boolean {
  return metadata.row_groups.every((group) => {
    const meta = group.columns.find((chunk) => chunk.file_path === undefined && chunk.meta_data?.path_in_schema.join('.') === name)?.meta_data;
    return meta !== undefined && meta.dictionary_page_offset === undefined && unreadEncoding(meta) === undefined && meta.encodings.every((encoding) => encoding === 'PLAIN' || encoding === 'RLE');
  });
}

/** Bytes `start .. end - 1` of the file, refusing a range past its end. */
async function readRange(handle: FileHandle, start: number, end: number, size: number): Promise<Uint8Array> {
  if (!(start >= 0 && end <= size && start <= end)) throw new Error(`a column chunk's pages (bytes ${start} to ${end}) lie outside the file (${size} bytes)`);
  const bytes = new Uint8Array(end - start);
  let filled = 0;
  while (filled < bytes.length) {
    const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, start + filled);
    if (bytesRead === 0) throw new Error('the file ends inside a column chunk');
    filled += bytesRead;
  }
  return bytes;
}

function storeChunk(encoder: TableEncoder, position: number, chunk: ColumnData, from: number, to: number, convert?: (value: unknown, column: string) => string): void {
  const column = encoder.columns[position];
  const target = column ?? encoder.weightAt[position]!;
  const values = chunk.columnData;
  const name = column?.source.name ?? encoder.weightAt[position]!.name;
  const start = Math.max(chunk.rowStart, from);
  const end = Math.min(chunk.rowEnd, to);
  if (end <= start) return;
  const offset = start - chunk.rowStart;
  if (convert !== undefined) {
    target.setValues(start, convertedCells(values, offset, end - start, convert, name), 0, end - start);
    return;
  }
  // Decoded pages of numbers, text and booleans go over whole; dates left as objects and
  // binary values are looked at (and refused) cell by cell.
  if (ArrayBuffer.isView(values) || plainCells(values, offset, end - start)) {
    target.setValues(start, values as ArrayLike<CellValue>, offset, end - start);
    return;
  }
  for (let row = start; row < end; row++) target.set(row, cellOf(values[row - chunk.rowStart], name));
}

/** Whether `values[from .. from + count - 1]` are all cells as they are (no objects but null). */
function plainCells(values: ArrayLike<unknown>, from: number, count: number): boolean {
  for (let i = from; i < from + count; i++) {
    const value = values[i];
    if (typeof value === 'object' && value !== null) return false;
  }
  return true;
}

function cellOf(value: unknown, column: string): CellValue {
  switch (typeof value) {
    case 'number':
    case 'bigint':
    case 'string':
    case 'boolean':
    case 'undefined':
      return value;
    default:
      if (value === null) return null;
      if (value instanceof Date) return isoDateTime(value.getTime());
      throw new TypeError(`column "${column}" holds ${value instanceof Uint8Array ? 'binary' : 'structured'} values, which crosstabs cannot use; leave it out with exclude`);
  }
}

function isoDate(millis: number): string {
  return new Date(millis).toISOString().slice(0, 10);
}

function isoDateTime(millis: number): string {
  const iso = new Date(millis).toISOString();
  return iso.endsWith('.000Z') ? iso.slice(0, 19) : iso.slice(0, 23);
}

/** hyparquet's random-access view of the file, read through our handle. */
function fileBuffer(handle: FileHandle, size: number): AsyncBuffer {
  return {
    byteLength: size,
    async slice(start: number, end = size): Promise<ArrayBuffer> {
      const bytes = new Uint8Array(Math.max(0, Math.min(end, size) - start));
      let filled = 0;
      while (filled < bytes.length) {
        const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, start + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return bytes.buffer;
    },
  };
}

/** Columns read unconverted by hyparquet and made text here (by name), and the metadata hyparquet reads them by. */
interface Conversions {
  cells: Map<string, (value: unknown, column: string) => string>;
  /** The file's metadata with those columns' DECIMAL or TIME annotation taken off, so hyparquet hands over the stored integers. */
  metadata: FileMetaData;
}

/**
 * DECIMAL columns are read as the integers they store and written as exact decimal text
 * here (decimalText): hyparquet would multiply them by 10^-scale as floats, so that 0.57
 * became 0.5700000000000001 and digits past a float's 17 were rounded away, merging values.
 * TIME columns (which hyparquet leaves as counts of milli-, micro- or nanoseconds since
 * midnight) become `10:00:00` as a CSV export writes them.
 */
function ownConversions(metadata: FileMetaData, elements: FileMetaData['schema']): Conversions {
  const cells = new Map<string, (value: unknown, column: string) => string>();
  const annotated = new Set<FileMetaData['schema'][number]>();
  for (const element of elements) {
    const logical = element.logical_type;
    const converted = element.converted_type;
    if (logical?.type === 'DECIMAL' || (logical === undefined && converted === 'DECIMAL')) {
      const scale = logical?.type === 'DECIMAL' ? logical.scale : (element.scale ?? 0);
      cells.set(element.name, (value, column) => decimalText(stored(value, column), scale));
    } else if (logical?.type === 'TIME' || (logical === undefined && (converted === 'TIME_MILLIS' || converted === 'TIME_MICROS'))) {
      const unit = logical?.type === 'TIME' ? logical.unit : converted === 'TIME_MILLIS' ? 'MILLIS' : 'MICROS';
      const digits = unit === 'MILLIS' ? 3 : unit === 'MICROS' ? 6 : 9;
      cells.set(element.name, (value, column) => isoTime(stored(value, column), digits));
    } else continue;
    annotated.add(element);
  }
  if (cells.size === 0) return { cells, metadata };
  const schema = metadata.schema.map((element) => (annotated.has(element) ? { ...element, converted_type: undefined, logical_type: undefined } : element));
  return { cells, metadata: { ...metadata, schema } };
}

/** Cells `from .. from + count - 1` of such a column, each made text by `cell`. */
function convertedCells(values: ArrayLike<unknown>, from: number, count: number, cell: (value: unknown, column: string) => string, column: string): CellValue[] {
  const cells = new Array<CellValue>(count);
  for (let k = 0; k < count; k++) {
    const value = values[from + k];
    cells[k] = value === null || value === undefined ? null : cell(value, column);
  }
  return cells;
}

/** The integer a DECIMAL or TIME cell stores: a number, a bigint, or big-endian two's-complement bytes. */
function stored(value: unknown, column: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (value instanceof Uint8Array) {
    let integer = 0n;
    for (const byte of value) integer = (integer << 8n) | BigInt(byte);
    // Two's complement, big-endian: the top bit of the first byte is the sign.
    return value.length > 0 && value[0]! >= 0x80 ? integer - (1n << BigInt(value.length * 8)) : integer;
  }
  throw new TypeError(`column "${column}" is a DECIMAL or TIME column holding ${typeof value} values, which are not integers`);
}
