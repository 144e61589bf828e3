import type { ReadStream } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { defaultBuildThreads } from './build-threads.js';
import { CsvChunks, type EncodedRowsTarget } from './csv-chunks.js';
import { CsvRecords, isCsvError } from './csv-records.js';
import { CrosstabError, ErrorCode } from '../../errors.js';
import { checkReadOptions, unreadable } from './input-file.js';
import type { RawTable, ReadOptions } from './raw-table.js';
import { type ColumnEncoder, placedError, TableEncoder, type WeightEncoder } from './table-encoder.js';

const progressEveryRows = 65_536;
const readChunkBytes = 256 * 1024;
/** Bytes of whole lines per chunk a build worker encodes. */
const encoderChunkBytes = 2 * 1024 * 1024;
/**
 * Bytes of whole lines per call of the encoder on the calling thread: small enough that the
 * first calls, at baseline speed, are a small part of a wave's read (the ACS wave's encoding
 * took about 0.7 of the CPU in 256 KiB calls that it took in 2 MiB ones).
 */
const inlineChunkBytes = 256 * 1024;
/**
 * Files smaller than this (gzip'd: a quarter of it) are read on the calling thread:
 * starting workers (~30 ms) costs more than it saves on them.
 */
const encoderMinFileBytes = 4 * 1024 * 1024;
/**
 * Files smaller than this (gzip'd: a quarter of it) read on the calling thread are split
 * into fields as text; from it on, by the WebAssembly encoder on the calling thread (the
 * workers' encoder, without a worker): about half the CPU per field, after a few
 * milliseconds to instantiate it.
 */
const inlineEncoderMinFileBytes = 256 * 1024;
/**
 * Output size of each gunzip step. zlib runs on the libuv thread pool and hands every chunk
 * back to the main thread: with its default 16 KiB that is ~17,000 hand-offs for the ACS
 * file, and on a busy machine the main thread sat idle for half the build waiting for them.
 */
const gunzipChunkBytes = 1024 * 1024;

/**
 * Reads a CSV file (plain or gzip'd, told apart by the gzip magic bytes) into
 * dictionary-encoded columns and validated weights. Streams: memory grows with the row
 * count and the distinct values, not with the size of the text.
 *
 * The first line is the header. Values are kept exactly as written (`06` stays `06`); an
 * empty cell is blank (id 0). A UTF-8 BOM and LF, CRLF or CR line endings are accepted.
 * Every row needs one field per header column and, in each weight column, a finite
 * number >= 0.
 *
 * Rejects with a {@link CrosstabError}: `file_not_found` when the file cannot be read;
 * `invalid_option` for bad `options`, including an `exclude` name not in the header;
 * `invalid_input` for bad data, with `file`, `line` (1-based physical line, the header is
 * line 1), `field` (the column) and `hint` in `details`.
 *
 * Files of 4 MiB or more (gzip'd: 1 MiB) are encoded by worker threads running the WebAssembly encoder
 * (csv-chunks.ts), files of 256 KiB or more read on one thread (gzip'd: 64 KiB) by that
 * encoder on the calling thread; lines it cannot take (quotes, '\r', problems) are read as
 * below, with identical results.
 */
export function readCsv(path: string, options: ReadOptions): Promise<RawTable> {
  return readCsvTuned(path, options, {});
}

/**
 * How readCsvTuned() cuts and encodes its input; readCsv() uses the defaults. Tests and
 * benchmarks set them: `fastPath: false` parses everything with csv-parse (the reference of
 * the fast paths, see csv-records.ts), `chunkBytes` sets the read size, `threads` the encoder
 * workers (0: none, every line on this thread; default: one per core for files of 4 MiB or
 * more, gzip'd files of 1 MiB or more), `encoderChunkBytes` the bytes per worker chunk;
 * `report.encodedRows` is set to the rows the workers encoded.
 */
export interface CsvTuning {
  fastPath?: boolean;
  /**
   * With no encoder workers (`threads` 0), whether the WebAssembly encoder runs on this
   * thread (true) or every line is split as text (false). Default: true for files of 256 KiB
   * or more (gzip'd: 64 KiB).
   */
  inline?: boolean;
  chunkBytes?: number;
  threads?: number;
  encoderChunkBytes?: number;
  report?: { encodedRows: number };
  /** The compiled CSV encoder the fast path runs (default: build/csv.wasm's). */
  encoderModule?: WebAssembly.Module;
}

/** readCsv() with its reading and encoding tuned (the seam tests and benchmarks use). */
export async function readCsvTuned(path: string, options: ReadOptions, tokenizer: CsvTuning): Promise<RawTable> {
  checkReadOptions(path, options);
  const handle = await open(path, 'r').catch((error: unknown) => {
    throw unreadable(path, error);
  });
  let source: ReadStream | undefined;
  try {
    const { size } = await handle.stat();
    const magic = Buffer.alloc(2);
    const { bytesRead } = await handle.read(magic, 0, 2, 0);
    const gzip = bytesRead === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
    const file = (source = handle.createReadStream({ start: 0, highWaterMark: tokenizer.chunkBytes ?? readChunkBytes }));
    const builder = new TableBuilder(path, options);
    const onProgress = options.onProgress;
    const progress = () => onProgress?.(file.bytesRead, size);
    const records = new CsvRecords((record, plain) => {
      builder.add(record, plain);
      if (onProgress !== undefined && builder.rows % progressEveryRows === 0) progress();
    }, tokenizer.fastPath !== false);
    const textBytes = size * (gzip ? 4 : 1);
    const threads = tokenizer.threads ?? options.threads ?? (textBytes >= encoderMinFileBytes ? defaultBuildThreads() : 0);
    const encoded = threads > 0 || (tokenizer.inline ?? textBytes >= inlineEncoderMinFileBytes);
    const chunks = encoded && tokenizer.fastPath !== false ? new CsvChunks(records, builder, { threads, chunkBytes: tokenizer.encoderChunkBytes ?? (threads > 0 ? encoderChunkBytes : inlineChunkBytes), file: path, ...(tokenizer.encoderModule === undefined ? {} : { module: tokenizer.encoderModule }) }, progress) : undefined;
    const sink = chunks ?? records;
    try {
      await (gzip ? pipeline(file, createGunzip({ chunkSize: gunzipChunkBytes }), sink) : pipeline(file, sink));
    } finally {
      if (tokenizer.report && chunks) tokenizer.report.encodedRows += chunks.encodedRows;
    }
    const table = builder.finish();
    onProgress?.(size, size);
    return table;
  } catch (error) {
    throw translateError(path, error);
  } finally {
    await closeInput(handle, source);
  }
}

/** Turns parsed records into a table through the {@link TableEncoder}, counting physical lines. */
class TableBuilder implements EncodedRowsTarget {
  rows = 0;
  /** Physical line on which the next record starts. */
  nextLine = 1;
  /** Physical line on which the current record starts (weight errors name it). */
  private line = 1;
  private header: string[] | undefined;
  private headerLine = 1;
  private encoder: TableEncoder | undefined;
  private weights: Array<{ position: number; encoder: WeightEncoder }> = [];
  private columns: Array<{ position: number; encoder: ColumnEncoder }> = [];

  constructor(
    private readonly path: string,
    private readonly options: ReadOptions,
  ) {}

  /** `plain`: the record is one physical line (no quoted line breaks to count). */
  add(record: string[], plain = false): void {
    const line = this.nextLine;
    this.nextLine += plain ? 1 : 1 + lineBreaksIn(record);
    if (this.header === undefined) return this.setHeader(record, line);
    if (record.length !== this.header.length) throw this.raggedRow(this.header, record, line);
    this.line = line;
    const row = this.rows;
    for (const weight of this.weights) weight.encoder.set(row, record[weight.position]!);
    for (const column of this.columns) column.encoder.set(row, record[column.position]!);
    this.rows++;
  }

  layout(): ReturnType<EncodedRowsTarget['layout']> {
    if (this.header === undefined) return undefined;
    return { width: this.header.length, columns: this.columns, weights: this.weights };
  }

  addEncodedRows(rows: number): void {
    this.rows += rows;
    this.nextLine += rows;
  }

  finish(): RawTable {
    if (this.encoder === undefined) {
      throw dataError(this.path, 1, undefined, 'the file is empty', 'A CSV needs a header row naming its columns, then one row per respondent.');
    }
    if (this.rows === 0) {
      throw dataError(this.path, this.headerLine, undefined, 'the file has a header but no data rows', 'Add one row per respondent below the header.');
    }
    return this.encoder.finish(this.rows, '');
  }

  private setHeader(header: string[], line: number): void {
    const { path } = this;
    if (header.length === 1 && header[0] === '') {
      throw dataError(path, line, undefined, 'the header line is empty', 'Put the column names on the first line, separated by commas.');
    }
    header.forEach((name, position) => {
      if (name.trim() === '') {
        throw dataError(path, line, undefined, `column ${position + 1} of the header has a blank name`, 'Name every column, or delete the empty one.');
      }
    });
    // Duplicate names, missing weights and unknown excluded columns: the encoder checks them as for every format.
    const encoder = new TableEncoder(path, 'header', header.map((name) => ({ name })), this.options, {
      header: { line },
      placeOf: () => ({ line: this.line }),
    });
    // Weights are checked in the order requested, as before; columns in header order.
    for (const name of this.options.weights) {
      const position = encoder.weightAt.findIndex((weight) => weight?.name === name);
      this.weights.push({ position, encoder: encoder.weightAt[position]! });
    }
    encoder.columns.forEach((column, position) => column && this.columns.push({ position, encoder: column }));
    this.encoder = encoder;
    this.header = header;
    this.headerLine = line;
  }

  private raggedRow(header: string[], record: string[], line: number): CrosstabError {
    const expected = header.length;
    const found = record.length;
    if (found === 1 && record[0] === '') {
      const what = `the line is blank but every row needs ${expected} fields, one per header column`;
      return dataError(this.path, line, undefined, what, 'Delete blank lines.');
    }
    const where =
      found < expected ? `the first missing column is "${header[found]}"` : `it has ${found - expected} extra after the last column "${header[expected - 1]}"`;
    const what = `the row has ${found} fields but the header (line ${this.headerLine}) has ${expected}: ${where}`;
    const hint = 'Give every row one field per header column: look for a missing or extra comma, and quote values that contain commas.';
    return dataError(this.path, line, found < expected ? header[found] : undefined, what, hint);
  }
}

/** Line breaks inside the fields of a record (quoted multi-line values); CRLF counts once. */
function lineBreaksIn(record: string[]): number {
  let breaks = 0;
  for (const value of record) {
    if (value.indexOf('\n') === -1 && value.indexOf('\r') === -1) continue;
    for (let i = 0; i < value.length; i++) {
      const char = value.charCodeAt(i);
      if (char === 10 || (char === 13 && value.charCodeAt(i + 1) !== 10)) breaks++;
    }
  }
  return breaks;
}

function dataError(file: string, line: number, field: string | undefined, what: string, hint: string): CrosstabError {
  return placedError(file, { line }, what, hint, field === undefined ? {} : { field });
}

function translateError(path: string, error: unknown): unknown {
  if (error instanceof CrosstabError) return error;
  if (isCsvError(error)) {
    const line = typeof error.lines === 'number' ? error.lines : 1;
    const what: Record<string, string> = {
      CSV_QUOTE_NOT_CLOSED: 'the file ends inside a quoted field: a quote (") opened on or before this line is never closed',
      INVALID_OPENING_QUOTE: 'a quote (") appears inside an unquoted field',
      CSV_INVALID_CLOSING_QUOTE: 'a quoted field is followed by other characters before the next comma',
      CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: 'a quoted field is followed by other characters before the next comma',
    };
    const hint = 'Quote fields that contain commas, quotes or line breaks ("a,b"), double each quote inside them ("say ""hi"""), and close every quote.';
    return new CrosstabError(ErrorCode.invalidInput, `${path}:${line}: malformed CSV: ${what[error.code] ?? error.message}. ${hint}`, {
      file: path,
      line,
      hint,
      csvCode: error.code,
    });
  }
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (code.startsWith('Z_')) {
    const hint = `The file is damaged or was cut short: download or compress it again (\`gzip -t ${path}\` checks it).`;
    const what = `the gzip stream is corrupt or truncated (${(error as Error).message})`;
    return new CrosstabError(ErrorCode.invalidInput, `${path}: ${what}. ${hint}`, { file: path, hint });
  }
  if (typeof (error as NodeJS.ErrnoException).syscall === 'string') return unreadable(path, error);
  return error;
}

/** Once created, the read stream owns the handle; either way it is closed before we return. */
async function closeInput(handle: FileHandle, source: ReadStream | undefined): Promise<void> {
  if (source === undefined) return handle.close().catch(() => undefined);
  if (source.closed) return;
  const closed = new Promise<void>((resolve) => source.once('close', () => resolve()));
  source.destroy();
  await closed;
}
