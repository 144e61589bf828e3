import type { FileHandle } from 'node:fs/promises';
import { CrosstabError, ErrorCode } from '../errors.js';
import { suggest } from '../text/suggest.js';
import type { RawColumn, RawTable, RawWeight, ReadOptions } from './raw-table.js';
import { grownIds, idLimit, rowIds, type RowIds, widened } from './row-ids.js';

/**
 * A value as a typed reader (SPSS, Parquet, Arrow) hands it over. `null`, `undefined`,
 * `''` and NaN are blank; numbers are written as JavaScript writes them, which is how a CSV
 * of the same data has them (`2`, not `2.0`; `0.1`; `1e-7`).
 */
export type CellValue = string | number | bigint | boolean | null | undefined;

/** A column as the input file declares it. */
export interface SourceColumn {
  name: string;
  label?: string;
  valueLabels?: Record<string, string>;
}

const initialRowCapacity = 4096;
const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);
/** The CSV reader's rule for weights written as text. */
const decimalNumber = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Dictionary-encodes one column: distinct values as text in first-seen order, ids per row. */
export class ColumnEncoder {
  readonly dictionary: string[] = [];
  ids: RowIds;
  private limit: number;
  private readonly codes = new Map<string | number | bigint | boolean, number>();
  /** Survey files repeat a value row after row: comparing with the last one skips a lookup. */
  private lastValue: CellValue = undefined;
  private lastId = 0;

  constructor(
    readonly source: SourceColumn,
    capacity: number,
  ) {
    this.ids = rowIds(capacity);
    this.limit = idLimit(this.ids);
  }

  set(row: number, value: CellValue): void {
    if (value === null || value === undefined || value === '' || Number.isNaN(value)) return;
    // Parquet and Arrow INT64 arrive as bigint; as Map keys numbers hash much faster.
    if (typeof value === 'bigint' && value <= maxSafe && value >= -maxSafe) value = Number(value);
    if (value !== this.lastValue) {
      let id = this.codes.get(value);
      if (id === undefined) {
        id = this.dictionary.push(String(value));
        this.codes.set(value, id);
        if (id > this.limit) {
          this.ids = widened(this.ids, id);
          this.limit = idLimit(this.ids);
        }
      }
      this.lastValue = value;
      this.lastId = id;
    }
    this.ids[row] = this.lastId;
  }
}

/** Collects one weight column, refusing blank, non-numeric, negative or infinite values. */
export class WeightEncoder {
  values: Float64Array;

  constructor(
    readonly name: string,
    private readonly file: string,
    capacity: number,
  ) {
    this.values = new Float64Array(capacity);
  }

  set(row: number, value: CellValue): void {
    if (typeof value === 'number' && value >= 0 && value < Infinity) {
      this.values[row] = value;
      return;
    }
    let number = NaN;
    if (typeof value === 'number') number = value;
    else if (typeof value === 'bigint') number = Number(value);
    else if (typeof value === 'string' && decimalNumber.test(value)) number = Number(value);
    if (number >= 0 && number < Infinity) {
      this.values[row] = number;
      return;
    }
    throw this.badWeight(row, value, number);
  }

  private badWeight(row: number, value: CellValue, number: number): CrosstabError {
    const where = `row ${row + 1}`;
    if (value === null || value === undefined || value === '' || Number.isNaN(value)) {
      const hint = 'Every row needs a weight: fill it in, drop the rows without one, or choose a weight column that covers every row.';
      return inputError(this.file, `${where}: weight column "${this.name}" is blank (missing)`, hint, { row: row + 1, field: this.name });
    }
    const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
    const problem = Number.isNaN(number) ? 'not a number' : number < 0 ? 'a negative number' : 'not finite';
    const hint = 'Weights must be finite numbers >= 0; fix the value or choose another weight column.';
    return inputError(this.file, `${where}: weight column "${this.name}" has ${shown}, which is ${problem}`, hint, { row: row + 1, field: this.name });
  }
}

/**
 * Turns the columns of a typed input into a {@link RawTable}: picks out the requested
 * weights (in the order requested), leaves out excluded columns, checks names the way
 * the CSV reader does (duplicates, missing weight with near matches, unknown exclude).
 */
export class TableEncoder {
  /** Per source column: its encoder, or undefined for weight and excluded columns. */
  readonly columns: Array<ColumnEncoder | undefined>;
  /** Per source column: its weight encoder, if it is a requested weight. */
  readonly weightAt: Array<WeightEncoder | undefined>;
  private readonly weights: WeightEncoder[];
  private capacity: number;

  constructor(
    private readonly file: string,
    what: string,
    source: SourceColumn[],
    options: ReadOptions,
    expectedRows = initialRowCapacity,
  ) {
    this.capacity = Math.max(1, expectedRows);
    const positions = new Map<string, number>();
    source.forEach(({ name }, position) => {
      const first = positions.get(name);
      if (first !== undefined) {
        const hint = 'Rename one of them: column names must be unique.';
        throw inputError(file, `column name "${name}" appears twice in the ${what}, as columns ${first + 1} and ${position + 1}`, hint, { field: name });
      }
      positions.set(name, position);
    });
    const names = source.map((column) => column.name);
    this.weightAt = source.map(() => undefined);
    this.weights = options.weights.map((name) => {
      const position = positions.get(name);
      if (position === undefined) throw missingColumn(file, what, name, names);
      return (this.weightAt[position] = new WeightEncoder(name, file, this.capacity));
    });
    const excluded = new Set(options.exclude);
    for (const name of excluded) if (!positions.has(name)) throw missingColumn(file, what, name, names, 'exclude');
    this.columns = source.map((column, position) =>
      this.weightAt[position] !== undefined || excluded.has(column.name) ? undefined : new ColumnEncoder(column, this.capacity),
    );
  }

  /** Makes room for rows `0 .. rows - 1`. */
  reserve(rows: number): void {
    if (rows <= this.capacity) return;
    this.capacity = Math.max(rows, this.capacity * 2);
    for (const column of this.columns) if (column) column.ids = grownIds(column.ids, this.capacity);
    for (const weight of this.weights) weight.values = grown(weight.values, new Float64Array(this.capacity));
  }

  finish(rows: number, emptyHint: string): RawTable {
    if (rows === 0) throw inputError(this.file, 'the file holds no rows (respondents)', emptyHint);
    const columns: RawColumn[] = [];
    for (const column of this.columns) {
      if (!column) continue;
      const ids = column.ids.length === rows ? column.ids : column.ids.slice(0, rows);
      column.ids = rowIds(0);
      const { name, label, valueLabels } = column.source;
      const raw: RawColumn = { name, dictionary: column.dictionary, ids };
      if (label !== undefined && label !== '') raw.label = label;
      if (valueLabels !== undefined && Object.keys(valueLabels).length > 0) raw.valueLabels = valueLabels;
      columns.push(raw);
    }
    const weights: RawWeight[] = this.weights.map(({ name, values }) => ({ name, values: values.length === rows ? values : values.slice(0, rows) }));
    return { source: this.file, rows, columns, weights };
  }
}

function grown(values: Float64Array, into: Float64Array): Float64Array {
  into.set(values);
  return into;
}

/** An `invalid_input` error about `file`: "file: what. hint". */
export function inputError(file: string, what: string, hint: string, details: Record<string, unknown> = {}): CrosstabError {
  return new CrosstabError(ErrorCode.invalidInput, `${file}: ${what}. ${hint}`, { file, ...details, hint });
}

function missingColumn(file: string, what: string, name: string, names: string[], option?: 'exclude'): CrosstabError {
  const suggestions = suggest(name, names);
  const near =
    suggestions.length > 0
      ? `did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?`
      : `it has ${names.length} columns: ${names.slice(0, 12).join(', ')}${names.length > 12 ? ', ...' : ''}`;
  const hint = `Use a column name exactly as the ${what} spells it (names are case-sensitive).`;
  const problem = option === 'exclude' ? `options.exclude names "${name}", which is not a column` : `weight column "${name}" is not in the ${what}`;
  const code = option === 'exclude' ? ErrorCode.invalidOption : ErrorCode.invalidInput;
  return new CrosstabError(code, `${file}: ${problem}; ${near}. ${hint}`, {
    file,
    field: option ?? name,
    ...(option === undefined ? {} : { value: name }),
    suggestions,
    hint,
  });
}

/** The checks readCsv makes on its options, for the typed readers. */
export function checkReadOptions(path: string, options: ReadOptions): void {
  const invalid = (field: string, message: string) => new CrosstabError(ErrorCode.invalidOption, message, { field });
  if (typeof path !== 'string' || path.length === 0) throw invalid('path', 'path must be a non-empty string naming an input file');
  const weights: unknown = options?.weights;
  if (!Array.isArray(weights) || weights.length === 0 || !weights.every((name) => typeof name === 'string' && name.length > 0)) {
    throw invalid('weights', "options.weights must be a non-empty array of column names, e.g. { weights: ['PWGTP'] }");
  }
  const repeated = weights.find((name, i) => weights.indexOf(name) !== i);
  if (repeated !== undefined) throw invalid('weights', `options.weights lists "${repeated}" twice; list each weight column once`);
  const exclude: unknown = options.exclude;
  if (exclude !== undefined && (!Array.isArray(exclude) || !exclude.every((name) => typeof name === 'string'))) {
    throw invalid('exclude', 'options.exclude must be an array of column names');
  }
  const both = options.exclude?.find((name) => weights.includes(name));
  if (both !== undefined) throw invalid('exclude', `"${both}" is in both options.weights and options.exclude; remove it from one of them`);
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') {
    throw invalid('onProgress', 'options.onProgress must be a function');
  }
}

/** `file_not_found` for an input that cannot be opened or read (as the CSV reader says it). */
export function unreadable(path: string, error: unknown): CrosstabError {
  const reason = (error as NodeJS.ErrnoException).code;
  const what = reason === 'ENOENT' ? 'does not exist' : reason === 'EACCES' ? 'is not readable (permission denied)' : `cannot be read (${String(error)})`;
  const hint = `Check the path (relative paths start at ${process.cwd()}) and the file's permissions.`;
  return new CrosstabError(ErrorCode.fileNotFound, `${path}: the input file ${what}. ${hint}`, { file: path, hint });
}

/**
 * Refuses a file whose last bytes are not the format's closing magic (Parquet `PAR1`, Arrow
 * file `ARROW1`): the usual sign of a file cut short, which the parsers report obscurely.
 */
export async function checkTrailer(handle: FileHandle, size: number, path: string, format: string, magic: string): Promise<void> {
  const tail = new Uint8Array(magic.length);
  const { bytesRead } = size >= magic.length * 2 ? await handle.read(tail, 0, magic.length, size - magic.length) : { bytesRead: 0 };
  if (bytesRead === magic.length && String.fromCharCode(...tail) === magic) return;
  const hint = `The file was cut short (an interrupted download or copy?): write or get the ${format} file again.`;
  throw inputError(path, `the file does not end with ${magic}, as every ${format} file does: it is truncated (${size} bytes)`, hint);
}

/**
 * What a typed reader rethrows: our errors as they are, I/O errors as `file_not_found`,
 * anything a parser library threw as `invalid_input` naming the file and the format.
 */
export function readFailure(path: string, format: string, error: unknown): CrosstabError {
  if (error instanceof CrosstabError) return error;
  if (typeof (error as NodeJS.ErrnoException)?.syscall === 'string') return unreadable(path, error);
  const reason = (error instanceof Error ? error.message : String(error)).replace(/[.\s]+$/, '');
  const hint = `Check that the file is a complete ${format} file (not truncated, not another format renamed); write it again if in doubt.`;
  return inputError(path, `cannot be read as ${format}: ${reason}`, hint);
}
