import { instantiate, csvEncoderModule } from '../../kernel/wasm-module.js';
import type { CellValue, Validity } from './cell-values.js';
import type { ColumnEncoder } from './column-encoder.js';

/** The exports of build/csv.wasm this file calls (assembly/typed-numbers.ts). */
interface NumberExports {
  memory: WebAssembly.Memory;
  allocate(bytes: number): number;
  newNumberColumn(kind: number): number;
  numberKeys(column: number): number;
  numberRows(column: number): number;
  encodeNumbers(column: number, src: number, count: number, validity: number, validityOffset: number, ids: number): number;
}

/** How a column's values are stored (KIND_* in assembly/typed-numbers.ts). */
export const NumberKind = { int64: 0, uint64: 1, int32: 2, uint32: 3, int16: 4, uint16: 5, int8: 6, uint8: 7, float64: 8, float32: 9 } as const;
export type NumberKind = (typeof NumberKind)[keyof typeof NumberKind];

/** Bytes per value of each kind. */
export const numberWidth: Record<NumberKind, number> = [8, 8, 4, 4, 2, 2, 1, 1, 8, 4];

/** One column's numbering in the wasm memory, and how its ids map to the encoder's. */
interface Numbered {
  kind: NumberKind;
  /** Its header in the wasm memory. */
  column: number;
  /** Per wasm id (index 0: blank), the value as the encoder takes it. */
  words: CellValue[];
  /** Per wasm id, the encoder's id (see ColumnEncoder.setIndexed's `known`). */
  known: Int32Array;
  /** Whether every wasm id is the encoder's id (a column numbered only here): ids need no mapping. */
  same: boolean;
}

const maxSafe = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Numbers columns of stored numbers (Arrow Int and Float buffers, as they lie in the file) in
 * WebAssembly, a batch at a time, into their column encoders: the values, ids and counts come
 * out as ColumnEncoder.setValues makes them from the same numbers (an integer beyond 2^53 as
 * its exact bigint, -0 as 0, NaN and null rows blank), at about a third of its cost a row.
 * One per thread; each column keeps its numbering across batches.
 */
export class TypedNumbers {
  private readonly wasm: NumberExports;
  private readonly columns = new Map<ColumnEncoder, Numbered>();
  private src = 0;
  private srcBytes = 0;
  private validity = 0;
  private validityBytes = 0;
  private ids = 0;
  private idRows = 0;
  private mapped = new Uint32Array(0);

  constructor() {
    this.wasm = instantiate<NumberExports>(csvEncoderModule(), 'the number encoder');
    if (typeof this.wasm.encodeNumbers !== 'function') throw new Error('build/csv.wasm is older than this code: run `npm run build:wasm`');
  }

  /**
   * Room for `bytes` bytes of values in the wasm memory, to be filled before the next
   * {@link store} with `inPlace` (the view is good until then: nothing else allocates).
   */
  room(bytes: number): Uint8Array {
    if (bytes > this.srcBytes) {
      this.srcBytes = Math.max(bytes, Math.min(this.srcBytes * 2, bytes + (64 << 20)));
      this.src = this.wasm.allocate(this.srcBytes);
    }
    return new Uint8Array(this.wasm.memory.buffer, this.src, bytes);
  }

  /** Room for `bytes` bytes of a validity bitmap in the wasm memory (see {@link room}). */
  validityRoom(bytes: number): Uint8Array {
    if (bytes > this.validityBytes) {
      this.validityBytes = Math.max(bytes, Math.min(this.validityBytes * 2, bytes + (8 << 20)));
      this.validity = this.wasm.allocate(this.validityBytes);
    }
    return new Uint8Array(this.wasm.memory.buffer, this.validity, bytes);
  }

  /**
   * Rows `start .. start + count - 1` of `target` from `count` values of `kind`: `values`
   * holds them (little-endian, as stored), or, when it is undefined, they were read into
   * {@link room}. Null rows: bit `valid.offset + k` of `valid.bits` is 0.
   */
  store(target: ColumnEncoder, start: number, kind: NumberKind, values: Uint8Array | undefined, count: number, valid?: Validity): void {
    if (count === 0) return;
    const wasm = this.wasm;
    const width = numberWidth[kind];
    if (values !== undefined) this.room(count * width).set(values.subarray(0, count * width));
    // The validity bytes from the one that holds row 0's bit.
    let validityOffset: number | undefined;
    if (valid !== undefined) {
      const first = valid.offset >> 3;
      const bytes = ((valid.offset + count + 7) >> 3) - first;
      if (valid.bits.length < first + bytes) throw new Error(`the validity bitmap of column "${target.source.name}" is shorter than its ${count} rows`);
      this.validityRoom(bytes).set(valid.bits.subarray(first, first + bytes));
      validityOffset = valid.offset & 7;
    }
    this.storeRoom(target, start, kind, count, validityOffset);
  }

  /**
   * Rows `start .. start + count - 1` of `target` from `count` values of `kind` read into
   * {@link room} (at least `count` values' bytes) and, when `validityOffset` is given (row 0's
   * bit in the first byte), their validity bits into {@link validityRoom}.
   */
  storeRoom(target: ColumnEncoder, start: number, kind: NumberKind, count: number, validityOffset?: number): void {
    if (count === 0) return;
    const wasm = this.wasm;
    if (this.srcBytes < count * numberWidth[kind] || (validityOffset !== undefined && this.validityBytes < (validityOffset + count + 7) >> 3)) throw new Error('storeRoom without its room');
    let numbered = this.columns.get(target);
    if (numbered === undefined) {
      numbered = { kind, column: wasm.newNumberColumn(kind), words: [null], known: new Int32Array(256).fill(-1), same: target.size === 0 };
      numbered.known[0] = 0;
      this.columns.set(target, numbered);
    }
    if (numbered.kind !== kind) throw new Error(`column "${target.source.name}" is not of one type in every record batch`);
    if (count > this.idRows) {
      this.idRows = Math.max(count, this.idRows * 2);
      this.ids = wasm.allocate(this.idRows * 4);
    }
    const total = wasm.encodeNumbers(numbered.column, this.src, count, validityOffset === undefined ? 0 : this.validity, validityOffset ?? 0, this.ids);
    this.newValues(target, numbered, total);
    const memory = wasm.memory.buffer;
    let ids = new Uint32Array(memory, this.ids, count);
    if (!numbered.same) {
      if (this.mapped.length < count) this.mapped = new Uint32Array(count);
      const known = numbered.known;
      const mapped = this.mapped;
      for (let k = 0; k < count; k++) mapped[k] = known[ids[k]!]!;
      ids = mapped.subarray(0, count);
    }
    target.setIndexIds(start, ids, count);
    target.addIndexRows(numbered.known, new Uint32Array(memory, wasm.numberRows(numbered.column), total + 1));
  }

  /** Numbers in the encoder the values the wasm numbered since the last batch, in their order. */
  private newValues(target: ColumnEncoder, numbered: Numbered, total: number): void {
    const from = numbered.words.length;
    if (total < from) return;
    if (numbered.known.length <= total) {
      const grown = new Int32Array(Math.max(total + 1, numbered.known.length * 2)).fill(-1);
      grown.set(numbered.known);
      numbered.known = grown;
    }
    const keysAt = this.wasm.numberKeys(numbered.column);
    const memory = this.wasm.memory.buffer;
    const kind = numbered.kind;
    const floats = kind === NumberKind.float64 || kind === NumberKind.float32;
    const keys = floats ? new Float64Array(memory, keysAt, total) : kind === NumberKind.uint64 ? new BigUint64Array(memory, keysAt, total) : new BigInt64Array(memory, keysAt, total);
    for (let id = from; id <= total; id++) {
      const key = keys[id - 1]!;
      numbered.words.push(typeof key === 'bigint' && key <= maxSafe && key >= -maxSafe ? Number(key) : key);
      if (target.wordId(numbered.words, id, numbered.known) !== id) numbered.same = false;
    }
  }
}
