import type { ReadStream } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { CsvError } from 'csv-parse';
import { CsvRecords } from './csv-records.js';
import { CrosstabError, ErrorCode } from '../errors.js';
import { suggest } from '../query/suggest.js';
import type { RawTable, ReadOptions } from './raw-table.js';
import { grownIds, idLimit, rowIds, type RowIds, widened } from './row-ids.js';
import { checkReadOptions, unreadable } from './table-encoder.js';

const progressEveryRows = 65_536;
const initialRowCapacity = 4096;
const readChunkBytes = 256 * 1024;
/**
 * Output size of each gunzip step. zlib runs on the libuv thread pool and hands every chunk
 * back to the main thread: with its default 16 KiB that is ~17,000 hand-offs for the ACS
 * file, and on a busy machine the main thread sat idle for half the build waiting for them.
 */
const gunzipChunkBytes = 1024 * 1024;
/** Plain decimal notation only: no hex, no `Infinity`, no surrounding spaces, no `1,5`. */
const decimalNumber = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

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
 * `tokenizer` is for tests: `fastPath: false` parses everything with csv-parse (the
 * reference of the fast path, see csv-records.ts), `chunkBytes` sets the read size.
 */
export async function readCsv(path: string, options: ReadOptions, tokenizer: { fastPath?: boolean; chunkBytes?: number } = {}): Promise<RawTable> {
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
    const sink = new CsvRecords((record, plain) => {
      builder.add(record, plain);
      if (onProgress !== undefined && builder.rows % progressEveryRows === 0) onProgress(file.bytesRead, size);
    }, tokenizer.fastPath !== false);
    await (gzip ? pipeline(file, createGunzip({ chunkSize: gunzipChunkBytes }), sink) : pipeline(file, sink));
    const table = builder.finish();
    onProgress?.(size, size);
    return table;
  } catch (error) {
    throw translateError(path, error);
  } finally {
    await closeInput(handle, source);
  }
}

interface ColumnBuilder {
  name: string;
  position: number;
  codes: Map<string, number>;
  dictionary: string[];
  /** Ids of the rows from the current chunk's start on. */
  ids: RowIds;
  /** Full chunks before it (narrower ones from before the column widened). */
  sealed: RowIds[];
  /** Largest id `ids` holds before it must widen. */
  limit: number;
  /** Survey files repeat a value row after row (sorted by state, household...): comparing
   * with the previous value skips hashing it; about 1 s of 37 on the ACS file. */
  lastValue: string;
  lastId: number;
}

interface WeightBuilder {
  name: string;
  position: number;
  values: Float64Array;
  sealed: Float64Array[];
}

/**
 * Rows per chunk of the growing columns. Columns grow by whole chunks, not by doubling and
 * copying: no copy of the whole table is ever made, and at most one chunk per column is
 * unused, so a 22-million-row input holds about its ids and weights, not up to twice them.
 */
const chunkRows = 1 << 20;

/** Turns parsed records into encoded columns and weights, counting physical lines. */
class TableBuilder {
  rows = 0;
  /** Physical line on which the next record starts. */
  private nextLine = 1;
  private header: string[] | undefined;
  private headerLine = 1;
  private columns: ColumnBuilder[] = [];
  private weights: WeightBuilder[] = [];
  private capacity = initialRowCapacity;
  /** Row at which the current chunk of every column starts. */
  private chunkStart = 0;

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
    if (this.rows - this.chunkStart === this.capacity) this.grow();
    const row = this.rows - this.chunkStart;
    for (const weight of this.weights) weight.values[row] = this.parseWeight(record[weight.position]!, weight.name, line);
    for (const column of this.columns) {
      const value = record[column.position]!;
      if (value === '') continue;
      if (value !== column.lastValue) {
        let id = column.codes.get(value);
        if (id === undefined) {
          const own = ownString(value);
          id = column.dictionary.push(own);
          column.codes.set(own, id);
          if (id > column.limit) {
            column.ids = widened(column.ids, id);
            column.limit = idLimit(column.ids);
          }
        }
        column.lastValue = value;
        column.lastId = id;
      }
      column.ids[row] = column.lastId;
    }
    this.rows++;
  }

  finish(): RawTable {
    if (this.header === undefined) {
      throw dataError(this.path, 1, undefined, 'the file is empty', 'A CSV needs a header row naming its columns, then one row per respondent.');
    }
    if (this.rows === 0) {
      throw dataError(this.path, this.headerLine, undefined, 'the file has a header but no data rows', 'Add one row per respondent below the header.');
    }
    const rows = this.rows;
    const tail = rows - this.chunkStart;
    // One column at a time: its chunks are joined and dropped before the next column's.
    const columns = this.columns.map((column) => {
      const ids = joined([...column.sealed, column.ids.subarray(0, tail)], rowIds(rows, column.limit));
      column.ids = rowIds(0);
      column.sealed = [];
      return { name: column.name, dictionary: column.dictionary, ids };
    });
    const weights = this.weights.map((weight) => {
      const values = joined([...weight.sealed, weight.values.subarray(0, tail)], new Float64Array(rows));
      weight.sealed = [];
      return { name: weight.name, values };
    });
    return { source: this.path, rows, columns, weights };
  }

  private setHeader(header: string[], line: number): void {
    const { path } = this;
    if (header.length === 1 && header[0] === '') {
      throw dataError(path, line, undefined, 'the header line is empty', 'Put the column names on the first line, separated by commas.');
    }
    const positions = new Map<string, number>();
    header.forEach((name, position) => {
      if (name.trim() === '') {
        throw dataError(path, line, undefined, `column ${position + 1} of the header has a blank name`, 'Name every column, or delete the empty one.');
      }
      const first = positions.get(name);
      if (first !== undefined) {
        const what = `column name "${name}" appears twice in the header, as columns ${first + 1} and ${position + 1}`;
        throw dataError(path, line, name, what, 'Rename one of them: column names must be unique.');
      }
      positions.set(name, position);
    });
    for (const name of this.options.weights) {
      const position = positions.get(name);
      if (position === undefined) throw missingColumn(path, line, name, header);
      this.weights.push({ name, position, values: new Float64Array(this.capacity), sealed: [] });
    }
    const excluded = new Set(this.options.exclude);
    for (const name of excluded) {
      if (!positions.has(name)) throw missingColumn(path, line, name, header, 'exclude');
    }
    const weightNames = new Set(this.options.weights);
    header.forEach((name, position) => {
      if (weightNames.has(name) || excluded.has(name)) return;
      this.columns.push({ name, position, codes: new Map(), dictionary: [], ids: rowIds(this.capacity), sealed: [], limit: 0xff, lastValue: '', lastId: 0 });
    });
    this.header = header;
    this.headerLine = line;
  }

  /** The current chunk is full: double it while it is small, else start a new one. */
  private grow(): void {
    if (this.capacity < chunkRows) {
      this.capacity *= 2;
      for (const column of this.columns) column.ids = grownIds(column.ids, this.capacity);
      for (const weight of this.weights) weight.values = grown(weight.values, new Float64Array(this.capacity));
      return;
    }
    for (const column of this.columns) {
      column.sealed.push(column.ids);
      column.ids = rowIds(chunkRows, column.limit);
    }
    for (const weight of this.weights) {
      weight.sealed.push(weight.values);
      weight.values = new Float64Array(chunkRows);
    }
    this.chunkStart += this.capacity;
  }

  private parseWeight(text: string, name: string, line: number): number {
    if (decimalNumber.test(text)) {
      const value = Number(text);
      if (value >= 0 && value < Infinity) return value;
    }
    if (text === '') {
      const hint = 'Every row needs a weight: fill it in, drop the rows without one, or choose a weight column that covers every row.';
      throw dataError(this.path, line, name, `weight column "${name}" is blank`, hint);
    }
    const problem = !decimalNumber.test(text) ? 'not a number' : text.startsWith('-') ? 'a negative number' : 'not finite (too large)';
    const hint = "Weights must be finite numbers >= 0 written in digits with '.' as the decimal point (e.g. 1.25 or 3e2).";
    throw dataError(this.path, line, name, `weight column "${name}" has ${JSON.stringify(text)}, which is ${problem}`, hint);
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

/** `chunks` one after the other in `into` (as wide as the widest chunk). */
function joined<T extends RowIds | Float64Array>(chunks: ArrayLike<number>[], into: T): T {
  let at = 0;
  for (const chunk of chunks) {
    into.set(chunk, at);
    at += chunk.length;
  }
  return into;
}

function grown(values: Float64Array, into: Float64Array): Float64Array {
  into.set(values);
  return into;
}

/**
 * A copy of `text` that does not keep its source alive. The fast path's fields are V8
 * slices of a whole decoded chunk; a slice of 13 characters or more (an id such as ACS
 * SERIALNO) kept in a dictionary would keep its 256 KB chunk, and with it the whole file,
 * in memory. A round trip through bytes gives a flat string of its own (43 bytes for a
 * 13-character id where a slice of a copy takes 75: measured on 2 million ids).
 */
function ownString(text: string): string {
  return text.length < 13 ? text : Buffer.from(text, 'utf8').toString('utf8');
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
  return new CrosstabError(ErrorCode.invalidInput, `${file}:${line}: ${what}. ${hint}`, {
    file,
    line,
    ...(field === undefined ? {} : { field }),
    hint,
  });
}

/** A requested weight (invalid input) or excluded column (invalid option) the header lacks. */
function missingColumn(file: string, line: number, name: string, header: string[], option?: 'exclude'): CrosstabError {
  const suggestions = suggest(name, header);
  const near =
    suggestions.length > 0
      ? `did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?`
      : `the header has ${header.length} columns: ${header.slice(0, 12).join(', ')}${header.length > 12 ? ', ...' : ''}`;
  const hint = 'Use a column name exactly as it is written in the header (names are case-sensitive).';
  const what = option === 'exclude' ? `options.exclude names "${name}", which is not a column` : `weight column "${name}" is not in the header`;
  const code = option === 'exclude' ? ErrorCode.invalidOption : ErrorCode.invalidInput;
  return new CrosstabError(code, `${file}:${line}: ${what}; ${near}. ${hint}`, {
    file,
    line,
    field: option ?? name,
    ...(option === undefined ? {} : { value: name }),
    suggestions,
    hint,
  });
}

function translateError(path: string, error: unknown): unknown {
  if (error instanceof CrosstabError) return error;
  if (error instanceof CsvError) {
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
