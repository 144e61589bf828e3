import { type Data, type DataType, DataType as Types, type Decimal, type Field, makeVector, type Time, type Timestamp, type Utf8, type Vector } from 'apache-arrow';
import { decimalText } from '../../text/decimal-text.js';
import { isNullAt, isoTime, isoTimestamp, safeNumbers } from './cell-values.js';
import type { TextColumns } from './arrow-direct.js';
import { type CellValue, ColumnEncoder, inputError, type Validity, WeightEncoder } from './table-encoder.js';
import { Utf8Text } from './utf8-text.js';
import { NumberKind } from './typed-numbers.js';

/**
 * How an Arrow record batch's vectors go into column encoders, on the calling thread and in
 * Arrow build workers (arrow-worker.ts) alike.
 */

/** Whether {@link storeColumnar} takes vectors of `type` whole (else they go cell by cell). */
export function isColumnar(type: DataType): boolean {
  const plainNumbers = Types.isInt(type) || (Types.isFloat(type) && type.precision !== 0);
  const dictionaryOfPlain = Types.isDictionary(type) && (Types.isUtf8(type.dictionary) || Types.isLargeUtf8(type.dictionary) || Types.isInt(type.dictionary));
  return plainNumbers || Types.isUtf8(type) || Types.isLargeUtf8(type) || dictionaryOfPlain;
}

export { TextColumns } from './arrow-direct.js';

/** How a column of `type` can be read straight from the file into WebAssembly memory (see arrow-direct.ts): Utf8 text, Int or Float numbers; else undefined. */
export function directKind(type: DataType): NumberKind | 'utf8' | undefined {
  return Types.isUtf8(type) ? 'utf8' : numberKind(type);
}

/** How a vector of `type` (an Int or a Float, not Float16) stores its values. */
export function numberKind(type: DataType): NumberKind | undefined {
  if (Types.isInt(type)) {
    const kinds = type.isSigned ? [NumberKind.int8, NumberKind.int16, NumberKind.int32, NumberKind.int64] : [NumberKind.uint8, NumberKind.uint16, NumberKind.uint32, NumberKind.uint64];
    return kinds[[8, 16, 32, 64].indexOf(type.bitWidth)];
  }
  if (Types.isFloat(type)) return type.precision === 2 ? NumberKind.float64 : type.precision === 1 ? NumberKind.float32 : undefined;
  return undefined;
}

/**
 * Numbers and text go over a whole vector at a time: the value buffer itself (ints, floats;
 * nulls from the validity bitmap) or the vector's strings, and a dictionary-encoded column's
 * dictionary once per batch with its indices. Other types (dates, booleans...) go cell by
 * cell. Returns whether the vector was stored.
 */
export function storeColumnar(target: ColumnEncoder | WeightEncoder, start: number, vector: Vector, texts: TextColumns): boolean {
  const type = vector.type as DataType;
  if (!isColumnar(type)) return false;
  const plainNumbers = Types.isInt(type) || Types.isFloat(type);
  const dictionaryOfPlain = Types.isDictionary(type);
  const kind = target instanceof ColumnEncoder ? numberKind(type) : undefined;
  let at = start;
  for (const data of vector.data) {
    const valid: Validity | undefined = data.nullCount > 0 && data.nullBitmap ? { bits: data.nullBitmap, offset: data.offset } : undefined;
    if (kind !== undefined) {
      const values = data.values as Uint8Array;
      texts.numbers.store(target as ColumnEncoder, at, kind, new Uint8Array(values.buffer, values.byteOffset, values.byteLength), data.length, valid);
    } else if (plainNumbers && valid === undefined && target instanceof WeightEncoder && storeWeights(target, at, data.values as ArrayLike<number | bigint>, data.length)) {
      // Stored whole.
    } else if (plainNumbers) target.setValues(at, data.values as ArrayLike<number | bigint>, 0, data.length, valid);
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
    } else if (Types.isUtf8(type) && target instanceof ColumnEncoder) target.setIds(at, texts.of(target).encodeArrow((data as Data<Utf8>).valueOffsets, (data as Data<Utf8>).values, data.length, valid));
    else if (Types.isUtf8(type)) target.setValues(at, utf8Cells(data as Data<Utf8>), 0, data.length, valid, true);
    else target.setValues(at, makeVector(data).toArray() as ArrayLike<CellValue>, 0, data.length);
    at += data.length;
  }
  return true;
}

/**
 * A weight column's `count` numbers (no nulls) stored at once when every one is a valid weight
 * (finite, not negative: what WeightEncoder.setValues checks row by row); false when one is
 * not, or a 64-bit integer is past 2^53, so that setValues finds and names it.
 */
function storeWeights(target: WeightEncoder, start: number, values: ArrayLike<number | bigint>, count: number): boolean {
  const numbers = values instanceof Float64Array ? values.subarray(0, count) : values instanceof BigInt64Array ? safeNumbers(values, 0, count) : values instanceof BigUint64Array ? undefined : Float64Array.from(values as ArrayLike<number>).subarray(0, count);
  if (numbers === undefined || numbers.length !== count) return false;
  for (let k = 0; k < count; k++) if (!(numbers[k]! >= 0 && numbers[k]! < Infinity)) return false;
  target.setAll(start, numbers);
  return true;
}

/** The strings of a Utf8 vector's data, straight from its offsets and bytes (null rows: left as ''). */
function utf8Cells(data: Data<Utf8>): string[] {
  const offsets = data.valueOffsets;
  const text = new Utf8Text(data.values);
  const cells: string[] = new Array(data.length);
  for (let k = 0; k < data.length; k++) cells[k] = text.at(offsets[k]!, offsets[k + 1]!);
  return cells;
}

/** How one column's values (row `row` of a batch's vector) become cells; refuses types a crosstab cannot use. */
export function cellReader(path: string, field: Field): (vector: Vector, row: number) => CellValue {
  const type = Types.isDictionary(field.type) ? (field.type.dictionary as DataType) : (field.type as DataType);
  if (Types.isInt(type) || Types.isFloat(type) || Types.isUtf8(type) || Types.isLargeUtf8(type) || Types.isBool(type)) {
    return (vector, row) => vector.get(row) as CellValue;
  }
  if (Types.isDate(type)) {
    return (vector, row) => {
      const value = vector.get(row);
      return value === null ? null : new Date(value as number).toISOString().slice(0, 10);
    };
  }
  if (Types.isTimestamp(type)) {
    // The stored 64-bit count, not Vector.get's milliseconds (a float, which drops micro- and nanoseconds).
    const digits = ([0, 3, 6, 9] as const)[(type as Timestamp).unit]!;
    const stored = (vector: Vector, row: number): CellValue => {
      const [data, at] = dataAt(vector, row);
      return data.getValid(at) ? isoTimestamp(BigInt((data.values as BigInt64Array)[at]!), digits) : null;
    };
    return throughDictionary(field, stored);
  }
  if (Types.isDecimal(type)) {
    // Decimal128/256: little-endian two's complement in 32-bit words, written as the exact decimal (decimalText).
    const { scale, bitWidth } = type as Decimal;
    const words = bitWidth / 32;
    const stored = (vector: Vector, row: number): CellValue => {
      const [data, at] = dataAt(vector, row);
      if (!data.getValid(at)) return null;
      const values = data.values as Uint32Array;
      let unscaled = 0n;
      for (let k = words - 1; k >= 0; k--) unscaled = (unscaled << 32n) | BigInt(values[at * words + k]!);
      return decimalText(BigInt.asIntN(bitWidth, unscaled), scale);
    };
    return throughDictionary(field, stored);
  }
  if (Types.isTime(type)) {
    // Time32 (seconds, milliseconds) and Time64 (micro-, nanoseconds) since midnight, from the stored counts.
    const digits = ([0, 3, 6, 9] as const)[(type as Time).unit]!;
    const stored = (vector: Vector, row: number): CellValue => {
      const [data, at] = dataAt(vector, row);
      return data.getValid(at) ? isoTime(BigInt((data.values as Int32Array | BigInt64Array)[at]!), digits) : null;
    };
    return throughDictionary(field, stored);
  }
  const hint = `Crosstabs need numbers, text, booleans or dates: leave it out (options.exclude / --exclude ${field.name}) or convert it first.`;
  throw inputError(path, `column "${field.name}" has Arrow type ${String(field.type)}, which crosstabs cannot use`, hint, { field: field.name });
}

/**
 * `stored` (a reader of a column's own values) for `field`: as it is, or, for a
 * dictionary-encoded field, applied to the dictionary entry each row's index names.
 */
function throughDictionary(field: Field, stored: (vector: Vector, row: number) => CellValue): (vector: Vector, row: number) => CellValue {
  if (!Types.isDictionary(field.type)) return stored;
  return (vector, row) => {
    const [data, at] = dataAt(vector, row);
    return data.getValid(at) ? stored(data.dictionary!, Number(data.values[at])) : null;
  };
}

/** The chunk of `vector` that holds row `row`, and the row's index in it. */
function dataAt(vector: Vector, row: number): [Data, number] {
  let at = row;
  for (const data of vector.data) {
    if (at < data.length) return [data, at];
    at -= data.length;
  }
  throw new RangeError(`row ${row} is past the end of a ${vector.length}-row column`);
}
