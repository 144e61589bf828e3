import type { FileHandle } from 'node:fs/promises';
import { PlainTextColumn } from './parquet-texts.js';
import type { ColumnEncoder } from './table-encoder.js';
import { NumberKind, numberWidth, TypedNumbers } from './typed-numbers.js';
import type { WeightEncoder } from './weight-encoder.js';

/**
 * Arrow IPC columns read straight from the file into the WebAssembly memory that numbers
 * them: an uncompressed record batch's buffers (validity bitmap, offsets, values) lie in
 * the file at offsets its message gives (see planBatch in arrow-batch-columns.ts), so a
 * column of numbers or Utf8 text is read with one file read per buffer into the number or
 * text encoder's own memory, with no copy of it made in JavaScript. Nothing here needs
 * apache-arrow: an Arrow build worker given its read plans does not load it.
 */

/** Bytes of the file: `length` bytes from `offset`. */
export interface FileRange {
  offset: number;
  length: number;
}

/** Where one column of one record batch lies in the file, checked against its message (see planBatch). */
export interface ColumnPlan {
  /** How its values are stored: Utf8 text or a kind of number. */
  kind: 'utf8' | NumberKind;
  rows: number;
  /** The validity bitmap, when the column has nulls in this batch (bit k: row k is not null). */
  validity?: FileRange;
  /** A Utf8 column's offsets (rows + 1 32-bit integers). */
  offsets?: FileRange;
  /** The values (a number column: at least rows values; Utf8: the bytes the offsets index). */
  data: FileRange;
}

/**
 * A text column's values are numbered over their bytes (PlainTextColumn.encodeArrow, from the vector's offsets and bytes), one PlainTextColumn per column encoder.
 * `stopAbove`: the id-like bound at which a column not named in `readWhole` stops being numbered (see PlainTextColumn).
 */
export class TextColumns {
  private readonly texts = new Map<ColumnEncoder, PlainTextColumn>();
  constructor(
    private readonly stopAbove?: number,
    private readonly readWhole: ReadonlySet<string> = new Set(),
  ) {}

  readonly of = (target: ColumnEncoder): PlainTextColumn => {
    let texts = this.texts.get(target);
    if (texts === undefined) this.texts.set(target, (texts = new PlainTextColumn(target, this.readWhole.has(target.source.name) ? undefined : this.stopAbove)));
    return texts;
  };

  private typed: TypedNumbers | undefined;
  /** The thread's numbering of stored numbers (made at the first numeric column). */
  get numbers(): TypedNumbers {
    return (this.typed ??= new TypedNumbers());
  }
}

/**
 * Rows `start ..` of `target` from the column `plan` locates in the file of `handle`, its
 * buffers read into the encoder's WebAssembly memory. A text column that stopped being
 * numbered (id-like, see PlainTextColumn) has only its offsets read and checked.
 */
export async function storeDirect(handle: FileHandle, target: ColumnEncoder, start: number, plan: ColumnPlan, texts: TextColumns): Promise<void> {
  const { rows } = plan;
  if (rows === 0) return;
  if (plan.kind === 'utf8') {
    const column = texts.of(target);
    const stopped = column.numberingStopped;
    const nullable = plan.validity !== undefined && !stopped;
    const room = column.arrowRoom(plan.data.length, rows, nullable ? 0 : undefined);
    if (!stopped) await readInto(handle, room.values, plan.data.offset);
    await readInto(handle, room.offsets, plan.offsets!.offset);
    if (nullable) await readInto(handle, room.validity, plan.validity!.offset);
    target.setIds(start, column.encodeArrowRoom(plan.data.length, rows, nullable ? 0 : undefined));
    return;
  }
  const numbers = texts.numbers;
  const width = numberWidth[plan.kind];
  // A block of rows at a time, each into the same room: the thread's room is a few MB that it
  // touches once (not a column's whole bytes, new memory the first time), and a block is
  // numbered while it is still in the processor's cache. Blocks are whole bytes of validity.
  const block = numberBlockBytes / width;
  for (let done = 0; done < rows; done += block) {
    const count = Math.min(block, rows - done);
    await readInto(handle, numbers.room(count * width), plan.data.offset + done * width);
    if (plan.validity !== undefined) await readInto(handle, numbers.validityRoom((count + 7) >> 3), plan.validity.offset + done / 8);
    numbers.storeRoom(target, start + done, plan.kind, count, plan.validity === undefined ? undefined : 0);
  }
}

/** Bytes of a column of numbers read and numbered at a time (storeDirect): a multiple of 8 values of any width. */
export const numberBlockBytes = 1 << 22;

/**
 * Rows `start ..` of a weight column of numbers (`plan`, not Utf8) from the file: its values
 * read into a buffer of doubles and converted there (64-bit integers to doubles in place)
 * when every one is a valid weight (not null, finite, not negative; an integer within
 * 2^53), else handed to WeightEncoder.setValues as stored, which names the row at fault (or
 * converts past 2^53 as before).
 */
export async function storeDirectWeights(handle: FileHandle, target: WeightEncoder, start: number, plan: ColumnPlan): Promise<void> {
  const { rows, kind } = plan;
  if (rows === 0 || kind === 'utf8') return;
  const width = numberWidth[kind];
  // Values of 8 bytes are read into the encoder's own doubles when its rows are made (no buffer of their own, no copy).
  const room = width === 8 ? target.room(start, rows) : undefined;
  const doubles = room ?? new Float64Array(rows);
  await readInto(handle, new Uint8Array(doubles.buffer, doubles.byteOffset, rows * width), plan.data.offset);
  let validity: Uint8Array | undefined;
  if (plan.validity !== undefined) {
    validity = new Uint8Array((rows + 7) >> 3);
    await readInto(handle, validity, plan.validity.offset);
  }
  const weights = validity === undefined ? toWeights(doubles, kind, rows) : undefined;
  if (weights !== undefined) return room === undefined ? target.setAll(start, weights) : undefined;
  // Not all valid (or nullable): setValues checks them one by one from a copy as stored (it writes over the room).
  const stored = storedNumbers((room === undefined ? doubles : doubles.slice()).buffer as ArrayBuffer, kind, rows);
  target.setValues(start, stored, 0, rows, validity === undefined ? undefined : { bits: validity, offset: 0 });
}

/** The stored values of `kind` in `buffer` as a typed array. */
function storedNumbers(buffer: ArrayBuffer, kind: NumberKind, rows: number): ArrayLike<number | bigint> {
  const arrays = [BigInt64Array, BigUint64Array, Int32Array, Uint32Array, Int16Array, Uint16Array, Int8Array, Uint8Array, Float64Array, Float32Array] as const;
  return new arrays[kind](buffer, 0, rows);
}

/**
 * `rows` stored values as doubles, or undefined when one is not a valid weight (or an integer
 * past 2^53) or the kind is not one of 8 bytes (then WeightEncoder.setValues goes value by
 * value). 64-bit integers are checked first and then converted in place, so that `buffer`
 * is left as stored when they cannot be.
 */
function toWeights(doubles: Float64Array, kind: NumberKind, rows: number): Float64Array | undefined {
  const out = doubles.subarray(0, rows);
  if (kind === NumberKind.float64) {
    for (let k = 0; k < rows; k++) if (!(out[k]! >= 0 && out[k]! < Infinity)) return undefined;
    return out;
  }
  if (kind !== NumberKind.int64 && kind !== NumberKind.uint64) return undefined;
  // Little-endian (as Arrow stores them): the low word first. A valid weight is >= 0 and below 2^53 here.
  const halves = new Int32Array(doubles.buffer, doubles.byteOffset, rows * 2);
  for (let k = 1; k < 2 * rows; k += 2) if (halves[k]! < 0 || halves[k]! > 0x1fffff) return undefined;
  for (let k = 0; k < rows; k++) out[k] = halves[2 * k + 1]! * 4294967296 + (halves[2 * k]! >>> 0);
  return out;
}

/** Fills `bytes` from the file at `position`, or throws if the file ends first. */
export async function readInto(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let filled = 0;
  while (filled < bytes.length) {
    const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, position + filled);
    if (bytesRead === 0) throw new Error('the file ends inside a record batch');
    filled += bytesRead;
  }
}

/** Rows of a text column's first batch looked at by {@link manyDistinctRead}. */
const sampleRows = 4096;

/**
 * Whether a Utf8 column (`plan`, of its first record batch) has about as many distinct values
 * as rows in its first rows (an id column), reading only those rows' bytes. Values are told
 * apart by their bytes; null rows count as one value.
 */
export async function manyDistinctRead(handle: FileHandle, plan: ColumnPlan): Promise<boolean> {
  const rows = Math.min(plan.rows, sampleRows);
  if (rows === 0 || plan.offsets === undefined) return false;
  const offsets = new Int32Array(rows + 1);
  await readInto(handle, new Uint8Array(offsets.buffer), plan.offsets.offset);
  const validity = new Uint8Array(plan.validity === undefined ? 0 : (rows + 7) >> 3);
  if (plan.validity !== undefined) await readInto(handle, validity, plan.validity.offset);
  const from = offsets[0]!;
  const to = offsets[rows]!;
  if (!(from >= 0 && to >= from && to <= plan.data.length)) throw new Error("a Utf8 value's offsets are out of order or past its data");
  const bytes = Buffer.alloc(to - from);
  await readInto(handle, bytes, plan.data.offset + from);
  const seen = new Set<string | null>();
  for (let row = 0; row < rows; row++) {
    const start = offsets[row]! - from;
    const end = offsets[row + 1]! - from;
    if (plan.validity !== undefined && (validity[row >> 3]! & (1 << (row & 7))) === 0) seen.add(null);
    else if (start >= 0 && end >= start && end <= bytes.length) seen.add(bytes.toString('latin1', start, end));
    else throw new Error("a Utf8 value's offsets are out of order or past its data");
  }
  return seen.size > rows / 2;
}
