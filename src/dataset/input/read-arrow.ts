import type { FileHandle } from 'node:fs/promises';
import { type Data, type DataType, DataType as Types, type Field, makeVector, RecordBatchReader, type Utf8, type Vector } from 'apache-arrow';
import type { RawTable, ReadOptions } from './raw-table.js';
import { checkTrailer, readTypedFile } from './input-file.js';
import { Utf8Text } from './utf8-text.js';
import { isNullAt } from './cell-values.js';
import { PlainTextColumn } from './parquet-texts.js';
import { type CellValue, ColumnEncoder, inputError, TableEncoder, type Validity, type WeightEncoder } from './table-encoder.js';

/**
 * Reads an Arrow IPC file (`ARROW1`, "Feather v2") or an Arrow IPC stream into
 * dictionary-encoded columns and validated weights, one record batch at a time.
 *
 * Values are the text a CSV export of the same data would hold: integers and floats as
 * JavaScript writes them (`2`, not `2.0`), strings as they are (`06` stays `06`),
 * dictionary-encoded columns by their values, booleans as `true`/`false`, dates and
 * timestamps as ISO 8601; null, NaN and empty strings are blank. Weight columns may be any
 * numeric type. Other types (binary, decimal, lists, structs...) cannot be crosstabbed:
 * leave them out with `exclude`.
 *
 * Rejects with a {@link CrosstabError}, as {@link readCsv} does, plus `invalid_input` for a
 * truncated or corrupt file; bad weights carry `row` (1-based) and `field` in `details`.
 */
export async function readArrow(path: string, options: ReadOptions): Promise<RawTable> {
  return readTypedFile(path, options, 'Arrow IPC', async (handle, size) => {
    const head = new Uint8Array(6);
    await handle.read(head, 0, 6, 0);
    if (String.fromCharCode(...head) === 'ARROW1') await checkTrailer(handle, size, path, 'Arrow IPC', 'ARROW1');
    else await checkEndOfStream(handle, size, path);
    const reader = await RecordBatchReader.from(handle);
    await reader.open();
    const fields = reader.schema.fields;
    const encoder = new TableEncoder(path, 'Arrow schema', fields.map((field) => ({ name: field.name })), options);
    const wanted = fields.flatMap((field, i) => (encoder.columns[i] !== undefined || encoder.weightAt[i] !== undefined ? [i] : []));
    const cells = new Map(wanted.map((i) => [i, cellReader(path, fields[i]!)]));
    // A text column's values are numbered over their bytes (see textIds), one encoder per column.
    const texts = new Map<number, PlainTextColumn>();
    const textsOf = (i: number, target: ColumnEncoder) => texts.get(i) ?? texts.set(i, new PlainTextColumn(target)).get(i)!;
    const batches = reader.isFile() ? reader.numRecordBatches : 0;
    let rows = 0;
    let batchIndex = 0;
    for await (const batch of reader) {
      for (const i of wanted) {
        const target = encoder.columns[i] ?? encoder.weightAt[i]!;
        const vector = batch.getChildAt(i)!;
        if (!storeColumnar(target, rows, vector, (encoder) => textsOf(i, encoder))) {
          const cell = cells.get(i)!;
          for (let row = 0; row < batch.numRows; row++) target.set(rows + row, cell(vector.get(row)));
        }
      }
      rows += batch.numRows;
      batchIndex++;
      if (batches > 0) options.onProgress?.(Math.round((size * batchIndex) / batches), size);
    }
    options.onProgress?.(size, size);
    return encoder.finish(rows, 'An Arrow file needs at least one row.');
  });
}

/**
 * An IPC stream ends with an end-of-stream marker (a zero metadata length); a stream cut
 * between two record batches would otherwise read as a shorter, valid one.
 */
async function checkEndOfStream(handle: FileHandle, size: number, path: string): Promise<void> {
  const tail = new Uint8Array(4);
  if (size >= 8) await handle.read(tail, 0, 4, size - 4);
  if (size >= 8 && tail.every((byte) => byte === 0)) return;
  const hint = 'The stream was cut short (an interrupted download or copy?): write or get the Arrow IPC stream again.';
  throw inputError(path, `the Arrow IPC stream does not end with its end-of-stream marker: it is truncated (${size} bytes)`, hint);
}

/**
 * Numbers and text go over a whole vector at a time: the value buffer itself (ints, floats;
 * nulls from the validity bitmap) or the vector's strings, and a dictionary-encoded column's
 * dictionary once per batch with its indices. Other types (dates, booleans...) go cell by
 * cell. Returns whether the vector was stored.
 */
function storeColumnar(target: ColumnEncoder | WeightEncoder, start: number, vector: Vector, textsOf: (target: ColumnEncoder) => PlainTextColumn): boolean {
  const type = vector.type as DataType;
  const plainNumbers = Types.isInt(type) || (Types.isFloat(type) && type.precision !== 0);
  const dictionaryOfPlain = Types.isDictionary(type) && (Types.isUtf8(type.dictionary) || Types.isLargeUtf8(type.dictionary) || Types.isInt(type.dictionary));
  if (!plainNumbers && !Types.isUtf8(type) && !Types.isLargeUtf8(type) && !dictionaryOfPlain) return false;
  let at = start;
  for (const data of vector.data) {
    const valid: Validity | undefined = data.nullCount > 0 && data.nullBitmap ? { bits: data.nullBitmap, offset: data.offset } : undefined;
    if (plainNumbers) target.setValues(at, data.values as ArrayLike<number | bigint>, 0, data.length, valid);
    else if (dictionaryOfPlain) {
      const words = (data.dictionary as Vector).toArray() as ArrayLike<CellValue>;
      const narrow = data.values instanceof Int32Array || data.values instanceof Int16Array || data.values instanceof Uint16Array || data.values instanceof Int8Array || data.values instanceof Uint8Array;
      if (narrow && 'setIndexed' in target) {
        const indices = Int32Array.from(data.values as ArrayLike<number>);
        if (valid !== undefined) for (let k = 0; k < data.length; k++) if (isNullAt(valid, k)) indices[k] = -1;
        target.setIndexed(at, words, indices, data.length, new Int32Array(words.length).fill(-1));
      } else {
        const indices = data.values as ArrayLike<number | bigint>;
        const cells: CellValue[] = new Array(data.length);
        for (let k = 0; k < data.length; k++) cells[k] = words[Number(indices[k]!)];
        target.setValues(at, cells, 0, data.length, valid);
      }
    } else if (Types.isUtf8(type) && target instanceof ColumnEncoder) target.setIds(at, textsOf(target).encode(lengthPrefixed(data as Data<Utf8>, valid), 0, data.length).ids);
    else if (Types.isUtf8(type)) target.setValues(at, utf8Cells(data as Data<Utf8>), 0, data.length, valid, true);
    else target.setValues(at, makeVector(data).toArray() as ArrayLike<CellValue>, 0, data.length);
    at += data.length;
  }
  return true;
}

/**
 * A Utf8 vector's values as Parquet PLAIN stores text (each a 4-byte little-endian length, then
 * its bytes; a null row as an empty value, which is blank): what PlainTextColumn numbers over
 * the bytes, making a string once per distinct value instead of once per row.
 */
function lengthPrefixed(data: Data<Utf8>, valid: Validity | undefined): Uint8Array {
  const offsets = data.valueOffsets;
  const bytes = data.values;
  const first = offsets[0]!;
  const out = new Uint8Array(4 * data.length + (offsets[data.length]! - first));
  let at = 0;
  for (let k = 0; k < data.length; k++) {
    const start = offsets[k]!;
    const length = valid !== undefined && isNullAt(valid, k) ? 0 : offsets[k + 1]! - start;
    out[at] = length;
    out[at + 1] = length >>> 8;
    out[at + 2] = length >>> 16;
    out[at + 3] = length >>> 24;
    at += 4;
    if (length > 16) out.set(bytes.subarray(start, start + length), at);
    else for (let b = 0; b < length; b++) out[at + b] = bytes[start + b]!;
    at += length;
  }
  return out.subarray(0, at);
}

/** The strings of a Utf8 vector's data, straight from its offsets and bytes (null rows: left as ''). */
function utf8Cells(data: Data<Utf8>): string[] {
  const offsets = data.valueOffsets;
  const text = new Utf8Text(data.values);
  const cells: string[] = new Array(data.length);
  for (let k = 0; k < data.length; k++) cells[k] = text.at(offsets[k]!, offsets[k + 1]!);
  return cells;
}

/** How one column's values (as `Vector.get` returns them) become cells; refuses types a crosstab cannot use. */
function cellReader(path: string, field: Field): (value: unknown) => CellValue {
  const type = Types.isDictionary(field.type) ? (field.type.dictionary as DataType) : (field.type as DataType);
  if (Types.isInt(type) || Types.isFloat(type) || Types.isUtf8(type) || Types.isLargeUtf8(type) || Types.isBool(type)) {
    return (value) => value as CellValue;
  }
  if (Types.isDate(type)) return (value) => (value === null ? null : new Date(value as number).toISOString().slice(0, 10));
  if (Types.isTimestamp(type)) {
    return (value) => {
      if (value === null) return null;
      const iso = new Date(value as number).toISOString();
      return iso.endsWith('.000Z') ? iso.slice(0, 19) : iso.slice(0, 23);
    };
  }
  const hint = `Crosstabs need numbers, text, booleans or dates: leave it out (options.exclude / --exclude ${field.name}) or convert it first.`;
  throw inputError(path, `column "${field.name}" has Arrow type ${String(field.type)}, which crosstabs cannot use`, hint, { field: field.name });
}
