import { CrosstabError, ErrorCode } from '../../errors.js';
import { suggest } from '../../text/suggest.js';
import type { RawColumn, RawTable, RawWeight, ReadOptions } from './raw-table.js';
import { NumberIds } from './number-ids.js';
import { grownIds, idLimit, rowIds, type RowIds, widened } from './row-ids.js';

/**
 * The one encoder of every input reader (CSV, SPSS, Parquet, Arrow): picks out the weights,
 * dictionary-encodes the other columns, validates weights, and names problems where they are.
 */

/**
 * A value as a reader hands it over. `null`, `undefined`, `''` and NaN are blank; numbers
 * are written as JavaScript writes them, which is how a CSV of the same data has them
 * (`2`, not `2.0`; `0.1`; `1e-7`).
 */
export type CellValue = string | number | bigint | boolean | null | undefined;

/** A column as the input file declares it. */
export interface SourceColumn {
  name: string;
  label?: string;
  valueLabels?: Record<string, string>;
}

/** Where a problem is: a physical line (CSV), a row (typed files, 1-based), or the file as a whole. */
export type Place = { line: number } | { row: number } | undefined;

export interface EncoderOptions {
  /** Rows the file says it holds (Parquet, SPSS): the columns start that long. */
  expectedRows?: number;
  /** Where the column names are (the CSV header line), for header problems. */
  header?: Place;
  /** Where row `row` (0-based) is, for weight problems; default `{ row: row + 1 }`. */
  placeOf?: (row: number) => Place;
}

const initialRowCapacity = 4096;
/**
 * Rows per chunk of a growing column. Columns grow by doubling up to this, then by whole
 * chunks, not by copying: no copy of the whole table is ever made and at most one chunk per
 * column is unused, so a 22-million-row input holds about its ids and weights, not up to
 * twice them.
 */
const chunkRows = 1 << 20;
const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);
/** Whole numbers below this have their ids in an array (see ColumnEncoder.smallIds). */
const smallInts = 1 << 14;
/** Rows per block of ids the encoder collects before writing them into a column (one array, shared by every column of the thread). */
const scratchRows = 1 << 16;
const scratchMask = scratchRows - 1;
const scratch = new Uint32Array(scratchRows);
/** Weights written as text: plain decimal notation only (no hex, `Infinity`, spaces or `1,5`). */
const decimalNumber = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * One column's rows in chunks. Rows must arrive in increasing order per column (they may
 * skip rows, which stay 0); `slot(row)` is the index of `row` in `current`.
 */
abstract class ChunkedRows<T extends RowIds | Float64Array> {
  protected start = 0;
  protected sealed: T[] = [];

  constructor(protected current: T) {}

  protected abstract grownCopy(length: number): T;
  protected abstract fresh(length: number): T;

  /** Makes room for `row`; returns its index in `current`. */
  protected slot(row: number): number {
    if (row < this.start) throw new Error(`table encoder: row ${row} arrived after row ${this.start}`);
    while (row - this.start >= this.current.length) {
      if (this.sealed.length === 0 && this.current.length < chunkRows) {
        this.current = this.grownCopy(Math.max(1, this.current.length * 2));
      } else {
        this.sealed.push(this.current);
        this.start += this.current.length;
        this.current = this.fresh(chunkRows);
      }
    }
    return row - this.start;
  }

  /** Rows `start .. start + values.length - 1` at once, across chunk boundaries. */
  protected putRows(start: number, values: T): void {
    let done = 0;
    while (done < values.length) {
      const at = this.slot(start + done);
      const take = Math.min(values.length - done, this.current.length - at);
      this.current.set(take === values.length ? values : values.subarray(done, done + take), at);
      done += take;
    }
  }

  /** Rows `0 .. rows - 1` in one array (into `into` unless one chunk already is exactly that), releasing the chunks. */
  protected joined(rows: number, into: (rows: number) => T): T {
    const chunks = [...this.sealed, this.current];
    this.sealed = [];
    let out: T;
    if (chunks.length === 1 && this.current.length === rows) out = this.current;
    else if (chunks.length === 1 && this.current.length > rows) out = this.current.slice(0, rows) as T;
    else {
      out = into(rows);
      let at = 0;
      for (const chunk of chunks) {
        const take = Math.min(chunk.length, rows - at);
        if (take <= 0) break;
        out.set(take === chunk.length ? chunk : chunk.subarray(0, take), at);
        at += take;
      }
    }
    this.current = this.fresh(0);
    return out;
  }
}

/** Dictionary-encodes one column: distinct values as text in first-seen order, ids per row. */
export class ColumnEncoder extends ChunkedRows<RowIds> {
  readonly dictionary: string[] = [];
  private limit: number;
  private readonly codes = new Map<string | number | bigint | boolean, number>();
  /** Survey files repeat a value row after row (sorted by state, household...): comparing
   * with the previous value skips hashing it; about 1 s of 37 on the ACS CSV. */
  private lastValue: CellValue = undefined;
  private lastId = 0;
  /** Dictionary entries that are in `codes` (append() leaves the rest for mapAppended). */
  private mapped = 0;
  /** Ids of whole numbers 0 .. smallInts - 1 by value (0: not seen), made at the first one: codes
   * in numeric columns (Parquet, Arrow) change from row to row, and an array beats the Map. */
  private smallIds: Uint32Array | undefined;
  /** Ids of the other numbers seen by setNumbers and setInt64, by value (a cache in front of `codes`). */
  private readonly numberIds = new NumberIds();
  /** Rows per id so far (index 0 unused: blanks are not counted), so the compiler need not count. */
  private counted: Uint32Array = new Uint32Array(256);

  constructor(
    readonly source: SourceColumn,
    capacity: number,
  ) {
    super(rowIds(capacity));
    this.limit = idLimit(this.current);
  }

  set(row: number, value: CellValue): void {
    if (value === '' || value === null || value === undefined || Number.isNaN(value)) return;
    const id = this.idOf(value);
    let at = row - this.start;
    // `>>> 0` sends a negative index (a row before this chunk) to the slow path, which refuses it.
    // (The index is found before `current` is read: slot() may replace it.)
    if ((at >>> 0) >= this.current.length) at = this.slot(row);
    this.current[at] = id;
    this.counted[id]!++;
  }

  /**
   * Rows `start .. start + count - 1` from `values[from .. from + count - 1]`, as set() would
   * take them one by one (blanks stay 0), a column chunk at a time: how Parquet and Arrow
   * readers hand over decoded pages and vectors. `ownText`: the strings are flat strings of
   * their own (decoded from bytes, not slices of a larger string), kept as they are.
   */
  setValues(start: number, values: ArrayLike<CellValue>, from = 0, count = values.length - from, valid?: Validity, ownText = false): void {
    if (values instanceof BigInt64Array && littleEndian) {
      // Read as 32-bit halves (a BigInt64Array element read makes a BigInt on the heap), unless one is beyond 2^53.
      const halves = new Int32Array(values.buffer, values.byteOffset + from * 8, count * 2);
      if (safeHalves(halves, count)) return this.setInt64(start, halves, count, valid && { bits: valid.bits, offset: valid.offset + from });
    }
    if (values instanceof Float64Array) return this.setNumbers(start, values, from, count, valid);
    let done = 0;
    while (done < count) {
      const at = this.slot(start + done);
      const take = Math.min(count - done, this.current.length - at);
      let ids = this.current;
      for (let k = 0; k < take; k++) {
        const i = from + done + k;
        if (valid !== undefined && isNullAt(valid, i)) continue;
        const value = values[i];
        if (value === '' || value === null || value === undefined || Number.isNaN(value)) continue;
        const id = this.idOf(value, ownText);
        if (this.current !== ids) ids = this.current;
        ids[at + k] = id;
        this.counted[id]!++;
      }
      done += take;
    }
  }

  /**
   * setValues for numbers, in a loop of its own: one element type keeps the loop's reads
   * monomorphic, and small whole numbers (codes) are looked up inline.
   */
  private setNumbers(start: number, values: Float64Array, from: number, count: number, valid?: Validity): void {
    // As in setIndexed, the ids go through a Uint32Array, a block at a time (monomorphic writes).
    const out = scratch;
    let counted = this.counted;
    for (let k = 0; k < count; k++) {
      if ((k & scratchMask) === 0 && k > 0) this.putIds(start + k - scratchRows, out, scratchRows);
      const i = from + k;
      const value = values[i]!;
      if (value !== value || (valid !== undefined && isNullAt(valid, i))) {
        out[k & scratchMask] = 0;
        continue;
      }
      let id = 0;
      if (value >= 0 && value < smallInts && (value | 0) === value && this.smallIds !== undefined) id = this.smallIds[value]!;
      if (id === 0) id = this.numberIds.get(value);
      if (id === 0) {
        id = this.idOf(value);
        this.numberIds.set(value, id);
        counted = this.counted;
      }
      out[k & scratchMask] = id;
      counted[id]!++;
    }
    this.putLastIds(start, out, count);
  }

  /** setNumbers for 64-bit integers given as little-endian 32-bit halves, all within 2^53 (see safeHalves): no array of numbers is made. */
  private setInt64(start: number, halves: Int32Array, count: number, valid?: Validity): void {
    const out = scratch;
    let counted = this.counted;
    for (let k = 0; k < count; k++) {
      if ((k & scratchMask) === 0 && k > 0) this.putIds(start + k - scratchRows, out, scratchRows);
      if (valid !== undefined && isNullAt(valid, k)) {
        out[k & scratchMask] = 0;
        continue;
      }
      const high = halves[2 * k + 1]!;
      const low = halves[2 * k]!;
      let id = 0;
      if (high === 0 && low >= 0 && low < smallInts && this.smallIds !== undefined) id = this.smallIds[low]!;
      if (id === 0) {
        const value = high * 4294967296 + (low >>> 0);
        id = this.numberIds.get(value);
        if (id === 0) {
          id = this.idOf(value);
          this.numberIds.set(value, id);
          counted = this.counted;
        }
      }
      out[k & scratchMask] = id;
      counted[id]!++;
    }
    this.putLastIds(start, out, count);
  }

  /** The ids of the last block of rows `start .. start + count - 1` (see scratchRows) from `ids`. */
  private putLastIds(start: number, ids: Uint32Array, count: number): void {
    if (count === 0) return;
    const last = (count - 1) % scratchRows + 1;
    this.putIds(start + count - last, ids, last);
  }

  /** Rows `start .. start + count - 1` from `ids[0 .. count - 1]`, across chunk boundaries. */
  private putIds(start: number, ids: Uint32Array, count: number): void {
    let done = 0;
    while (done < count) {
      const at = this.slot(start + done);
      const take = Math.min(count - done, this.current.length - at);
      this.current.set(ids.subarray(done, done + take), at);
      done += take;
    }
  }

  /**
   * Rows `start .. start + count - 1` given as indices into `words` (a file's own dictionary,
   * as Parquet dictionary pages and Arrow dictionary vectors have it; -1: blank row).
   * `known[i]` caches the id of `words[i]` (-1: not looked up yet; fill it with -1 for each new
   * `words`), so each distinct value is looked up once, in the order rows first show it,
   * and the dictionary comes out as set() would make it. Strings in `words` are kept as
   * they are (see setValues' `ownText`). With `defined` (1: the row has a value, 0: blank),
   * `indices` holds the indices of the rows with a value only, in order (a Parquet page's
   * definition levels and values as they are).
   */
  setIndexed(start: number, words: ArrayLike<CellValue>, indices: Int32Array, count: number, known: Int32Array, defined?: Int32Array): void {
    // The ids go through a Uint32Array, a block of rows at a time: one element type keeps this
    // loop monomorphic, where writing into `current` (8, 16 or 32 bits by column) would not.
    const out = scratch;
    let counted = this.counted;
    let next = 0;
    for (let k = 0; k < count; k++) {
      if ((k & scratchMask) === 0 && k > 0) this.putIds(start + k - scratchRows, out, scratchRows);
      let index: number;
      if (defined === undefined) index = indices[k]!;
      else if (defined[k] === 1) index = indices[next++]!;
      else index = -1;
      if (index < 0) {
        out[k & scratchMask] = 0;
        continue;
      }
      let id = known[index]!;
      // Not `id < 0`: an index past `known` reads undefined, which must reach the check.
      if (!(id >= 0)) {
        if (index >= words.length || index >= known.length) throw new Error(`dictionary index ${index} is past the dictionary's ${words.length} values`);
        const value = words[index];
        id = value === '' || value === null || value === undefined || Number.isNaN(value) ? 0 : this.idOf(value, true);
        known[index] = id;
        counted = this.counted;
      }
      out[k & scratchMask] = id;
      counted[id]!++;
    }
    this.putLastIds(start, out, count);
  }

  /** The id of a non-blank value, numbering it if new. May widen `current` and grow `counted`. */
  private idOf(value: string | number | bigint | boolean, ownText = false): number {
    // Parquet and Arrow INT64 arrive as bigint; as Map keys numbers hash much faster.
    if (typeof value === 'bigint' && value <= maxSafe && value >= -maxSafe) value = Number(value);
    const small = typeof value === 'number' && value >= 0 && value < smallInts && Math.trunc(value) === value;
    if (small && this.smallIds !== undefined && this.smallIds[value as number]! !== 0) return this.smallIds[value as number]!;
    if (value !== this.lastValue) {
      // Values a build worker appended are looked up from here on (append() skips the map).
      if (this.mapped !== this.dictionary.length) this.mapAppended();
      let id = this.codes.get(value);
      if (id === undefined) {
        const text = typeof value === 'string' ? (ownText ? value : ownString(value)) : String(value);
        id = this.dictionary.push(text);
        this.mapped = id;
        if (id >= this.counted.length) this.counted = grownCounts(this.counted, id);
        this.codes.set(typeof value === 'string' ? text : value, id);
        if (small) (this.smallIds ??= new Uint32Array(smallInts))[value as number] = id;
        if (id > this.limit) {
          this.current = widened(this.current, id);
          this.limit = idLimit(this.current);
        }
      }
      this.lastValue = value;
      this.lastId = id;
    }
    return this.lastId;
  }

  /**
   * Appends values found new by a CSV build worker, which owns this column's numbering
   * (src/dataset/input/csv-chunks.ts): the worker's ids are this column's ids.
   */
  append(values: string[]): void {
    for (const value of values) this.dictionary.push(value);
    if (this.dictionary.length >= this.counted.length) this.counted = grownCounts(this.counted, this.dictionary.length);
    if (this.dictionary.length > this.limit) {
      this.current = widened(this.current, this.dictionary.length);
      this.limit = idLimit(this.current);
    }
  }

  /** Rows `start .. start + ids.length - 1` at once, ids from a build worker (see append). */
  setIds(start: number, ids: RowIds): void {
    const counted = this.counted;
    for (let i = 0; i < ids.length; i++) counted[ids[i]!]!++;
    this.putRows(start, ids);
  }

  /**
   * Every row at once, as another thread's ColumnEncoder made them (a Parquet build worker's
   * column): its dictionary, ids of rows `0 .. ids.length - 1` and rows per id. The encoder
   * must be empty.
   */
  adopt(dictionary: string[], ids: RowIds, counts: Uint32Array): void {
    if (this.dictionary.length > 0 || this.sealed.length > 0) throw new Error('table encoder: adopt() into a column that has rows');
    for (const value of dictionary) this.dictionary.push(value);
    this.current = ids;
    this.limit = idLimit(ids);
    this.counted = counts;
    this.mapped = 0;
  }

  private mapAppended(): void {
    for (let id = this.mapped + 1; id <= this.dictionary.length; id++) this.codes.set(this.dictionary[id - 1]!, id);
    this.mapped = this.dictionary.length;
  }

  /** Rows per id (index 0 unused), for rows `0 .. rows - 1` once all are set. */
  counts(): Uint32Array {
    const counts = this.counted.slice(0, this.dictionary.length + 1);
    counts[0] = 0;
    return counts;
  }

  /** The ids of rows `0 .. rows - 1`; the encoder is empty afterwards. */
  take(rows: number): RowIds {
    return this.joined(rows, (length) => rowIds(length, this.limit));
  }

  protected grownCopy(length: number): RowIds {
    return grownIds(this.current, length);
  }

  protected fresh(length: number): RowIds {
    return rowIds(length, this.limit);
  }
}

/** Collects one weight column, refusing blank, non-numeric, negative or infinite values. */
export class WeightEncoder extends ChunkedRows<Float64Array> {
  constructor(
    readonly name: string,
    private readonly file: string,
    capacity: number,
    private readonly placeOf: (row: number) => Place,
  ) {
    super(new Float64Array(capacity));
  }

  set(row: number, value: CellValue): void {
    const number = this.numberOf(value);
    if (!(number >= 0 && number < Infinity)) throw this.badWeight(row, value, number);
    let at = row - this.start;
    if ((at >>> 0) >= this.current.length) at = this.slot(row);
    this.current[at] = number;
  }

  /** Rows `start .. start + count - 1` from `values[from ..]`, each checked as set() checks it. */
  setValues(start: number, values: ArrayLike<CellValue>, from = 0, count = values.length - from, valid?: Validity): void {
    const numbers = values instanceof BigInt64Array ? safeNumbers(values, from, count) : undefined;
    if (numbers !== undefined) return this.setValues(start, numbers, 0, count, valid && { bits: valid.bits, offset: valid.offset + from });
    let done = 0;
    while (done < count) {
      const at = this.slot(start + done);
      const take = Math.min(count - done, this.current.length - at);
      const out = this.current;
      for (let k = 0; k < take; k++) {
        const i = from + done + k;
        const value = valid !== undefined && isNullAt(valid, i) ? null : values[i];
        const number = typeof value === 'number' ? value : this.numberOf(value);
        if (!(number >= 0 && number < Infinity)) throw this.badWeight(start + done + k, value, number);
        out[at + k] = number;
      }
      done += take;
    }
  }

  /** Rows `start .. start + values.length - 1` at once; the values are valid weights (>= 0, finite). */
  setAll(start: number, values: Float64Array): void {
    this.putRows(start, values);
  }

  /** The weights of rows `0 .. rows - 1`; the encoder is empty afterwards. */
  take(rows: number): Float64Array {
    return this.joined(rows, (length) => new Float64Array(length));
  }

  private numberOf(value: CellValue): number {
    if (typeof value === 'number') return value;
    if (typeof value === 'string') return decimalNumber.test(value) ? Number(value) : Number.NaN;
    if (typeof value === 'bigint') return Number(value);
    return Number.NaN;
  }

  protected grownCopy(length: number): Float64Array {
    const grown = new Float64Array(length);
    grown.set(this.current);
    return grown;
  }

  protected fresh(length: number): Float64Array {
    return new Float64Array(length);
  }

  private badWeight(row: number, value: CellValue, number: number): CrosstabError {
    const place = this.placeOf(row);
    if (value === null || value === undefined || value === '' || (typeof value === 'number' && Number.isNaN(value))) {
      const hint = 'Every row needs a weight: fill it in, drop the rows without one, or choose a weight column that covers every row.';
      return placedError(this.file, place, `weight column "${this.name}" is blank`, hint, { field: this.name });
    }
    const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
    const problem = Number.isNaN(number) ? 'not a number' : number < 0 ? 'a negative number' : typeof value === 'string' ? 'not finite (too large)' : 'not finite';
    const hint = "Weights must be finite numbers >= 0, as text written in digits with '.' as the decimal point (e.g. 1.25 or 3e2); fix the value or choose another weight column.";
    return placedError(this.file, place, `weight column "${this.name}" has ${shown}, which is ${problem}`, hint, { field: this.name });
  }
}

/**
 * Turns the columns of an input into a {@link RawTable}: picks out the requested weights
 * (in the order requested), leaves out excluded columns, and refuses duplicate column
 * names, a missing weight column (with near matches) and an unknown excluded column.
 */
export class TableEncoder {
  /** Per source column: its encoder, or undefined for weight and excluded columns. */
  readonly columns: Array<ColumnEncoder | undefined>;
  /** Per source column: its weight encoder, if it is a requested weight. */
  readonly weightAt: Array<WeightEncoder | undefined>;
  private readonly weights: WeightEncoder[];

  /** `what` names where the column names are: `header`, `Arrow schema`, `SPSS file`... */
  constructor(
    private readonly file: string,
    what: string,
    source: SourceColumn[],
    options: ReadOptions,
    encoding: EncoderOptions = {},
  ) {
    const capacity = Math.max(1, encoding.expectedRows ?? initialRowCapacity);
    const header = encoding.header;
    const placeOf = encoding.placeOf ?? ((row: number) => ({ row: row + 1 }));
    const positions = new Map<string, number>();
    source.forEach(({ name }, position) => {
      const first = positions.get(name);
      if (first !== undefined) {
        const hint = 'Rename one of them: column names must be unique.';
        throw placedError(file, header, `column name "${name}" appears twice in the ${what}, as columns ${first + 1} and ${position + 1}`, hint, { field: name });
      }
      positions.set(name, position);
    });
    const names = source.map((column) => column.name);
    this.weightAt = source.map(() => undefined);
    this.weights = options.weights.map((name) => {
      const position = positions.get(name);
      if (position === undefined) throw missingColumn(file, header, what, name, names);
      return (this.weightAt[position] = new WeightEncoder(name, file, capacity, placeOf));
    });
    const excluded = new Set(options.exclude);
    for (const name of excluded) if (!positions.has(name)) throw missingColumn(file, header, what, name, names, 'exclude');
    this.columns = source.map((column, position) =>
      this.weightAt[position] !== undefined || excluded.has(column.name) ? undefined : new ColumnEncoder(column, capacity),
    );
  }

  /** The table of rows `0 .. rows - 1`, one column at a time (each column's chunks are joined and dropped before the next's). */
  finish(rows: number, emptyHint: string): RawTable {
    if (rows === 0) throw inputError(this.file, 'the file holds no rows (respondents)', emptyHint);
    const columns: RawColumn[] = [];
    for (const column of this.columns) {
      if (!column) continue;
      const { name, label, valueLabels } = column.source;
      const raw: RawColumn = { name, dictionary: column.dictionary, counts: column.counts(), ids: column.take(rows) };
      if (label !== undefined && label !== '') raw.label = label;
      if (valueLabels !== undefined && Object.keys(valueLabels).length > 0) raw.valueLabels = valueLabels;
      columns.push(raw);
    }
    const weights: RawWeight[] = this.weights.map((weight) => ({ name: weight.name, values: weight.take(rows) }));
    return { source: this.file, rows, columns, weights };
  }
}

/** An Arrow-style validity bitmap: value `i` is null when bit `offset + i` is 0. */
export interface Validity {
  bits: Uint8Array;
  offset: number;
}

function isNullAt(valid: Validity, i: number): boolean {
  const bit = valid.offset + i;
  return (valid.bits[bit >> 3]! & (1 << (bit & 7))) === 0;
}

const littleEndian = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/**
 * `values[from .. from + count - 1]` as numbers, read as 32-bit halves (reading a
 * BigInt64Array element makes a BigInt on the heap, about as slow as a Map lookup), or
 * undefined when one is beyond Number.MAX_SAFE_INTEGER (those stay bigint, written exactly).
 */
/** Whether the 64-bit integers given as `count` little-endian pairs of halves are all within Number.MAX_SAFE_INTEGER. */
function safeHalves(halves: Int32Array, count: number): boolean {
  for (let k = 0; k < count; k++) {
    const high = halves[2 * k + 1]!;
    if (high > 0x1fffff || high < -0x1fffff) return false;
  }
  return true;
}

function safeNumbers(values: BigInt64Array, from: number, count: number): Float64Array | undefined {
  if (!littleEndian) return undefined;
  const halves = new Int32Array(values.buffer, values.byteOffset + from * 8, count * 2);
  const out = new Float64Array(count);
  for (let k = 0; k < count; k++) {
    const high = halves[2 * k + 1]!;
    if (high > 0x1fffff || high < -0x1fffff) return undefined;
    out[k] = high * 4294967296 + (halves[2 * k]! >>> 0);
  }
  return out;
}

function grownCounts(counts: Uint32Array, id: number): Uint32Array {
  const grown = new Uint32Array(Math.max(counts.length * 2, id + 1));
  grown.set(counts);
  return grown;
}

/** An `invalid_input` error about `file`: "file: what. hint". */
export function inputError(file: string, what: string, hint: string, details: Record<string, unknown> = {}): CrosstabError {
  return placedError(file, undefined, what, hint, details);
}

/** An `invalid_input` error at `place`: "file:line: what. hint", "file: row N: what. hint" or "file: what. hint". */
export function placedError(file: string, place: Place, what: string, hint: string, details: Record<string, unknown> = {}, code: ErrorCode = ErrorCode.invalidInput): CrosstabError {
  const where = place === undefined ? `${file}:` : 'line' in place ? `${file}:${place.line}:` : `${file}: row ${place.row}:`;
  return new CrosstabError(code, `${where} ${what}. ${hint}`, { file, ...place, ...details, hint });
}

/** A requested weight (invalid input) or excluded column (invalid option) that `what` lacks. */
function missingColumn(file: string, place: Place, what: string, name: string, names: string[], option?: 'exclude'): CrosstabError {
  const suggestions = suggest(name, names);
  const near =
    suggestions.length > 0
      ? `did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?`
      : `the ${what} has ${names.length} columns: ${names.slice(0, 12).join(', ')}${names.length > 12 ? ', ...' : ''}`;
  const hint = `Use a column name exactly as the ${what} spells it (names are case-sensitive).`;
  const problem = option === 'exclude' ? `options.exclude names "${name}", which is not a column` : `weight column "${name}" is not in the ${what}`;
  const code = option === 'exclude' ? ErrorCode.invalidOption : ErrorCode.invalidInput;
  return placedError(file, place, `${problem}; ${near}`, hint, { field: option ?? name, ...(option === undefined ? {} : { value: name }), suggestions }, code);
}

/**
 * A copy of `text` that does not keep its source alive. The CSV fast path's fields are V8
 * slices of a whole decoded chunk; a slice of 13 characters or more (an id such as ACS
 * SERIALNO) kept in a dictionary would keep its 256 KB chunk, and with it the whole file,
 * in memory. A round trip through bytes gives a flat string of its own (43 bytes for a
 * 13-character id where a slice of a copy takes 75: measured on 2 million ids).
 */
function ownString(text: string): string {
  return text.length < 13 ? text : Buffer.from(text, 'utf8').toString('utf8');
}
