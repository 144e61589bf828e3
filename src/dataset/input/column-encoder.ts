import { type CellValue, isNullAt, littleEndian, safeHalves, type Validity } from './cell-values.js';
import { ChunkedRows } from './chunked-rows.js';
import type { DeferredTexts } from './deferred-texts.js';
import { NumberIds } from './number-ids.js';
import { grownIds, idLimit, rowIds, type RowIds, widened } from './row-ids.js';

/** A column as the input file declares it. */
export interface SourceColumn {
  name: string;
  label?: string;
  valueLabels?: Record<string, string>;
}

const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);
/** Whole numbers below this have their ids in an array (see ColumnEncoder.smallIds). */
const smallInts = 1 << 14;
/** Rows per block of ids the encoder collects before writing them into a column (one array, shared by every column of the thread). */
const scratchRows = 1 << 16;
const scratchMask = scratchRows - 1;
const scratch = new Uint32Array(scratchRows);

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
  /** The values as bytes, not strings yet (see deferTexts); `dictionary` is then empty. */
  private deferred: DeferredTexts | undefined;
  /** Whether its values stopped being numbered past the id-like bound (RawColumn.partly). */
  partly = false;

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
      if (id === 0) {
        id = this.numberId(value);
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
        id = this.numberId(high * 4294967296 + (low >>> 0));
        counted = this.counted;
      }
      out[k & scratchMask] = id;
      counted[id]!++;
    }
    this.putLastIds(start, out, count);
  }

  /**
   * The id of a number setNumbers and setInt64 did not find among the small whole numbers:
   * from `numberIds`, else numbered by idOf() and kept there. May grow `counted`.
   */
  private numberId(value: number): number {
    let id = this.numberIds.get(value);
    if (id === 0) {
      id = this.idOf(value);
      this.numberIds.set(value, id);
    }
    return id;
  }

  /** The ids of the last block of rows `start .. start + count - 1` (see scratchRows) from `ids`. */
  private putLastIds(start: number, ids: Uint32Array, count: number): void {
    if (count === 0) return;
    const last = (count - 1) % scratchRows + 1;
    this.putIds(start + count - last, ids, last);
  }

  /** Rows `start .. start + count - 1` from `ids[0 .. count - 1]`, across chunk boundaries. */
  private putIds(start: number, ids: RowIds, count: number): void {
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
        id = this.wordId(words, index, known);
        counted = this.counted;
      }
      out[k & scratchMask] = id;
      counted[id]!++;
    }
    this.putLastIds(start, out, count);
  }

  /**
   * The id of `words[index]` (0: blank), numbering it if new, kept in `known[index]`: what
   * setIndexed does at the first row showing `index`. May widen `current` and grow the counts.
   */
  wordId(words: ArrayLike<CellValue>, index: number, known: Int32Array): number {
    if (!(index >= 0 && index < words.length && index < known.length)) throw new Error(`dictionary index ${index} is past the dictionary's ${words.length} values`);
    const value = words[index];
    const id = value === '' || value === null || value === undefined || Number.isNaN(value) ? 0 : this.idOf(value, true);
    known[index] = id;
    return id;
  }

  /**
   * Rows `start .. start + count - 1` from `ids[0 .. count - 1]`, ids that {@link wordId} gave
   * for `known`'s indices, not counted here: `rows[index]` rows of each index are added to
   * the counts by {@link addIndexRows} (a decoder that counts a run of equal indices at once).
   */
  setIndexIds(start: number, ids: RowIds, count: number): void {
    if (count > 0) this.putIds(start, ids, count);
  }

  /** Bytes per row id now (1, 2 or 4): ids given to setIndexIds in an array of this width are copied, not converted. */
  get idBytes(): number {
    return this.current.BYTES_PER_ELEMENT;
  }

  /** Adds `rows[index]` rows to the count of `known[index]`'s id for every looked-up index, then zeroes `rows`. */
  addIndexRows(known: Int32Array, rows: Uint32Array): void {
    const counted = this.counted;
    for (let index = 0; index < rows.length; index++) {
      const id = known[index]!;
      if (rows[index] !== 0 && id > 0) counted[id]! += rows[index]!;
    }
    rows.fill(0);
  }

  /** The id of a non-blank value, numbering it if new. May widen `current` and grow `counted`. */
  private idOf(value: string | number | bigint | boolean, ownText = false): number {
    // Parquet and Arrow INT64 arrive as bigint; as Map keys numbers hash much faster.
    if (typeof value === 'bigint' && value <= maxSafe && value >= -maxSafe) value = Number(value);
    const small = typeof value === 'number' && value >= 0 && value < smallInts && Math.trunc(value) === value;
    if (small && this.smallIds !== undefined && this.smallIds[value as number]! !== 0) return this.smallIds[value as number]!;
    if (value !== this.lastValue) {
      if (this.deferred !== undefined) this.makeTexts();
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
    if (this.deferred !== undefined) this.makeTexts();
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
  adopt(dictionary: string[], ids: RowIds, counts: Uint32Array, deferred?: DeferredTexts): void {
    if (this.size > 0 || this.sealed.length > 0) throw new Error('table encoder: adopt() into a column that has rows');
    for (const value of dictionary) this.dictionary.push(value);
    if (deferred !== undefined && deferred.count > 0) this.deferTexts(deferred);
    this.current = ids;
    this.limit = idLimit(ids);
    this.counted = counts;
    this.mapped = 0;
  }

  private mapAppended(): void {
    for (let id = this.mapped + 1; id <= this.dictionary.length; id++) this.codes.set(this.dictionary[id - 1]!, id);
    this.mapped = this.dictionary.length;
  }

  /**
   * Values numbered over their bytes (PlainTextColumn) and kept so: ids 1 .. texts.count are
   * theirs, and `texts` may grow as more are numbered (call again). The column's dictionary
   * stays empty until a value is numbered here (then the texts become strings), or until
   * the table is finished (then its RawColumn makes them on first read).
   */
  deferTexts(texts: DeferredTexts): void {
    if (this.dictionary.length > 0) throw new Error('table encoder: deferTexts() into a column that has values');
    this.deferred = texts;
    const count = texts.count;
    if (count >= this.counted.length) this.counted = grownCounts(this.counted, count);
    if (count > this.limit) {
      this.current = widened(this.current, count);
      this.limit = idLimit(this.current);
    }
  }

  /** The deferred values (see deferTexts), if the dictionary is still held as bytes. */
  get deferredTexts(): DeferredTexts | undefined {
    return this.deferred;
  }

  /** Distinct values so far (deferred or not). */
  get size(): number {
    return this.deferred?.count ?? this.dictionary.length;
  }

  /** Turns deferred values into the dictionary's strings. */
  makeTexts(): void {
    const texts = this.deferred;
    if (texts === undefined) return;
    this.deferred = undefined;
    for (const value of texts.texts()) this.dictionary.push(value);
  }

  /** Rows per id (index 0 unused), for rows `0 .. rows - 1` once all are set. */
  counts(): Uint32Array {
    const counts = this.counted.slice(0, this.size + 1);
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

function grownCounts(counts: Uint32Array, id: number): Uint32Array {
  const grown = new Uint32Array(Math.max(counts.length * 2, id + 1));
  grown.set(counts);
  return grown;
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
