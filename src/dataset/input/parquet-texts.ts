import { instantiate, csvEncoderModule } from '../../kernel/wasm-module.js';
import type { ColumnEncoder, Validity } from './table-encoder.js';
import { Utf8Text } from './utf8-text.js';
import { DeferredTexts } from './deferred-texts.js';
import { PLAIN_NUMBER } from '../../text/decimal-text.js';

/** The exports of build/csv.wasm this file calls (assembly/csv.ts). */
interface TextExports {
  memory: WebAssembly.Memory;
  allocate(bytes: number): number;
  newDictionaries(count: number): number;
  encodeLengthPrefixed(dict: number, src: number, end: number, count: number, ids: number): number;
  encodeOffsets(dict: number, offsets: number, bytes: number, bytesLength: number, count: number, validity: number, validityOffset: number, ids: number): number;
  dictionaryCount(dict: number): number;
  dictionaryNewValues(dict: number, from: number, lengths: number): number;
}

/**
 * A text column of PLAIN pages (no dictionary page: an id column such as ACS SERIALNO, with
 * about as many values as rows) dictionary-encoded over its bytes by the CSV encoder's
 * WebAssembly hash table: a JavaScript string is made once per distinct value, not per row,
 * and no Map of strings is kept. The ids are the column's ids, in first-seen order as
 * set() numbers values; the column's encoder takes them with append() and setIds().
 *
 * Values whose bytes are not valid UTF-8 read as U+FFFD, as set() reads them; two such
 * values that read the same are one value of the column, as they are for set().
 */
export class PlainTextColumn {
  private readonly wasm: TextExports;
  private readonly dict: number;
  /** Values of the wasm dictionary turned into column values so far. */
  private known = 0;
  /** Per wasm id, the column's id, once two wasm ids share a text (else undefined: the same). */
  private toColumn: Uint32Array | undefined;
  /** Texts read with U+FFFD, by text: their column ids. */
  private readonly lossy = new Map<string, number>();
  /**
   * The values as bytes while every one decodes one to one (see DeferredTexts): no string is
   * made for them unless the column is kept. Undefined once a value did not (or the target
   * had values of its own): from then on values become strings as they are numbered.
   */
  private deferred: DeferredTexts | undefined;
  private source = 0;
  private sourceBytes = 0;
  private ids = 0;
  private idCapacity = 0;
  /** Set once the values stopped being numbered (see `stopAbove`): every later value reads as blank. */
  private stopped = false;
  private blank = new Uint32Array(0);

  /**
   * `stopAbove`: the id-like bound (ReadOptions.skipIdLike), undefined to number every value.
   * Once the column, still held as bytes, has more values than that and its first is not a
   * number, the build will skip it whatever the rest hold: the values after that page are
   * only walked (their lengths checked), not numbered, and the column is marked `partly`
   * (the Parquet reader then reads none of the column's later chunks: see numberingStopped).
   */
  constructor(
    private readonly target: ColumnEncoder,
    private readonly stopAbove?: number,
  ) {
    this.wasm = instantiate<TextExports>(csvEncoderModule(), 'the text encoder');
    if (typeof this.wasm.encodeLengthPrefixed !== 'function') throw new Error('build/csv.wasm is older than this code: run `npm run build:wasm`');
    this.dict = this.wasm.newDictionaries(1);
    if (target.size === 0) this.deferred = new DeferredTexts();
  }

  /** Whether the values stopped being numbered (see `stopAbove`): every later value reads as blank, whatever it is. */
  get numberingStopped(): boolean {
    return this.stopped;
  }

  /**
   * The column ids of `count` PLAIN values from `bytes[at ..]` (0 for an empty value); new
   * values are appended to the column's dictionary. Returns the ids and where the values end.
   */
  encode(bytes: Uint8Array, at: number, count: number): { ids: Uint32Array; end: number } {
    if (this.stopped) return { ids: this.blanks(count), end: plainEnd(bytes, at, count) };
    if (this.stopAbove === undefined || count <= stopBlock) return this.numbered(bytes, at, count);
    // A block at a time (an Arrow record batch may hold every row), so that numbering stops within the call.
    const ids = new Uint32Array(count);
    let done = 0;
    while (done < count && !this.stopped) {
      const take = Math.min(stopBlock, count - done);
      const end = plainEnd(bytes, at, take);
      ids.set(this.numbered(bytes.subarray(0, end), at, take).ids, done);
      at = end;
      done += take;
    }
    return { ids, end: done < count ? plainEnd(bytes, at, count - done) : at };
  }

  /** Room in the kernel memory for `length` source bytes and `count` ids (each area at least doubled when it grows). */
  private reserve(length: number, count: number): void {
    if (length > this.sourceBytes) {
      this.sourceBytes = Math.max(length, this.sourceBytes * 2);
      this.source = this.wasm.allocate(this.sourceBytes);
    }
    if (count > this.idCapacity) {
      this.idCapacity = Math.max(count, this.idCapacity * 2);
      this.ids = this.wasm.allocate(this.idCapacity * 4);
    }
  }

  /** encode() of values to be numbered (the column has not stopped). */
  private numbered(bytes: Uint8Array, at: number, count: number): { ids: Uint32Array; end: number } {
    const wasm = this.wasm;
    const length = bytes.length - at;
    this.reserve(length, count);
    new Uint8Array(wasm.memory.buffer, this.source, length).set(bytes.subarray(at));
    const read = wasm.encodeLengthPrefixed(this.dict, this.source, this.source + length, count, this.ids);
    if (read < 0) throw new Error(`a PLAIN BYTE_ARRAY value runs past the end of its page`);
    return { ids: this.columnIds(count), end: at + read };
  }

  /**
   * The column ids of `count` Arrow Utf8 values (value k: `bytes[offsets[k] .. offsets[k + 1]]`;
   * a null row, its bit in `valid` clear, is blank), as encode() gives them for the same values
   * length-prefixed, without making that copy.
   */
  encodeArrow(offsets: Int32Array, bytes: Uint8Array, count: number, valid?: Validity): Uint32Array {
    const first = valid === undefined ? 0 : valid.offset >> 3;
    const validityBytes = valid === undefined ? 0 : ((valid.offset + count + 7) >> 3) - first;
    if (valid !== undefined && valid.bits.length < first + validityBytes) throw new Error(`a validity bitmap is shorter than its ${count} rows`);
    if (offsets.length < count + 1) throw new Error(`an offsets buffer is shorter than its ${count} rows`);
    const room = this.arrowRoom(bytes.length, count, valid === undefined ? undefined : valid.offset & 7);
    room.values.set(bytes);
    new Int32Array(room.offsets.buffer, room.offsets.byteOffset, count + 1).set(offsets.subarray(0, count + 1));
    if (valid !== undefined) room.validity.set(valid.bits.subarray(first, first + validityBytes));
    return this.encodeArrowRoom(bytes.length, count, valid === undefined ? undefined : valid.offset & 7);
  }

  /**
   * Room in the kernel memory for an Arrow Utf8 column's `count` rows: its value bytes
   * (`bytesLength`), its offsets (`count + 1`, as stored) and, when `validityOffset` is given
   * (row 0's bit in the first byte), its validity bytes; fill them (an Arrow reader reads the
   * file's buffers straight into them) and call {@link encodeArrowRoom} with the same figures
   * before anything else uses this column (the views are good until then).
   */
  arrowRoom(bytesLength: number, count: number, validityOffset?: number): { values: Uint8Array; offsets: Uint8Array; validity: Uint8Array } {
    const layout = arrowLayout(bytesLength, count, validityOffset);
    this.reserve(layout.length, count);
    const memory = this.wasm.memory.buffer;
    return {
      values: new Uint8Array(memory, this.source, bytesLength),
      offsets: new Uint8Array(memory, this.source + layout.offsetsAt, (count + 1) * 4),
      validity: new Uint8Array(memory, this.source + layout.validityAt, layout.validityBytes),
    };
  }

  /**
   * The column ids of `count` Arrow Utf8 values laid in {@link arrowRoom} (value k: the bytes
   * from offset k to offset k + 1; a null row, its bit clear, is blank), as encode() gives them
   * for the same values length-prefixed, without making that copy.
   */
  encodeArrowRoom(bytesLength: number, count: number, validityOffset?: number): Uint32Array {
    const wasm = this.wasm;
    const layout = arrowLayout(bytesLength, count, validityOffset);
    if (layout.length > this.sourceBytes || count > this.idCapacity) throw new Error('encodeArrowRoom without its arrowRoom');
    const offsetsAt = this.source + layout.offsetsAt;
    const validityAt = this.source + layout.validityAt;
    const bad = () => new Error('a Utf8 value\'s offsets are out of order or past its data');
    const ids = new Uint32Array(count);
    // A block at a time when the column may stop (as encode() does), so that numbering stops within the call.
    const block = this.stopAbove === undefined ? count : stopBlock;
    let done = 0;
    while (done < count && !this.stopped) {
      const take = Math.min(block, count - done);
      const validity = validityOffset === undefined ? 0 : validityAt;
      if (wasm.encodeOffsets(this.dict, offsetsAt + done * 4, this.source, bytesLength, take, validity, validityOffset === undefined ? 0 : validityOffset + done, this.ids) < 0) throw bad();
      ids.set(this.columnIds(take), done);
      done += take;
    }
    // Values after the column stopped are blank, their offsets still checked (the memory may have grown: a new view).
    if (done < count) {
      const offsets = new Int32Array(wasm.memory.buffer, offsetsAt, count + 1);
      for (let k = done; k < count; k++) if (offsets[k + 1]! < offsets[k]! || offsets[k + 1]! > bytesLength || offsets[k]! < 0) throw bad();
    }
    return ids;
  }

  /** The column ids of the `count` wasm ids just written, new values taken, the column stopped past its bound. */
  private columnIds(count: number): Uint32Array {
    const wasm = this.wasm;
    this.takeNewValues();
    const ids = new Uint32Array(wasm.memory.buffer, this.ids, count).slice();
    const toColumn = this.toColumn;
    if (toColumn !== undefined) for (let k = 0; k < count; k++) ids[k] = toColumn[ids[k]!]!;
    const deferred = this.deferred;
    if (this.stopAbove !== undefined && deferred !== undefined && deferred.count > this.stopAbove && this.target.deferredTexts === deferred && !PLAIN_NUMBER.test(deferred.text(0))) {
      this.stopped = true;
      this.target.partly = true;
    }
    return ids;
  }

  /** `count` blank ids, in an array reused from page to page (the encoder copies them). */
  private blanks(count: number): Uint32Array {
    if (this.blank.length < count) this.blank = new Uint32Array(count);
    return this.blank.subarray(0, count);
  }

  /** Turns the values the wasm dictionary numbered since the last call into column values. */
  private takeNewValues(): void {
    const wasm = this.wasm;
    const count = wasm.dictionaryCount(this.dict);
    if (count === this.known) return;
    const fresh = count - this.known;
    const lengthsAt = wasm.allocate(fresh * 4);
    const start = wasm.dictionaryNewValues(this.dict, this.known + 1, lengthsAt);
    const memory = new Uint8Array(wasm.memory.buffer);
    const lengths = new Uint32Array(wasm.memory.buffer, lengthsAt, fresh);
    if (this.deferred !== undefined) {
      let bytes = 0;
      for (let k = 0; k < fresh; k++) bytes += lengths[k]!;
      const values = memory.subarray(start, start + bytes);
      // Still the target's only values (nothing else numbered any), and they decode one to one.
      if (this.target.deferredTexts === (this.known === 0 ? undefined : this.deferred) && this.target.size === this.known && DeferredTexts.keeps(values)) {
        this.deferred.add(values, lengths);
        this.known = count;
        this.target.deferTexts(this.deferred);
        return;
      }
      this.target.makeTexts();
      this.deferred = undefined;
    }
    const text = new Utf8Text(memory);
    const values: string[] = [];
    let at = start;
    for (let k = 0; k < fresh; k++) {
      const id = this.known + k + 1;
      const value = text.at(at, at + lengths[k]!);
      at += lengths[k]!;
      const columnId = this.target.dictionary.length + values.length + 1;
      let given = columnId;
      if (value.includes('\uFFFD')) {
        given = this.lossy.get(value) ?? columnId;
        this.lossy.set(value, given);
      }
      if (given === columnId) values.push(value);
      if (given !== id || this.toColumn !== undefined) this.mapped(id, count)[id] = given;
    }
    this.known = count;
    this.target.append(values);
  }

  /** The wasm-to-column id map, made (as the identity so far) the first time two differ. */
  private mapped(id: number, count: number): Uint32Array {
    let map = this.toColumn;
    if (map === undefined) map = Uint32Array.from({ length: id }, (_, k) => k);
    if (map.length <= count) {
      const grown = new Uint32Array(Math.max(count + 1, map.length * 2));
      grown.set(map);
      map = grown;
    }
    return (this.toColumn = map);
  }
}

/**
 * Where an Arrow Utf8 column's parts lie in PlainTextColumn's source area: the value bytes
 * (with the slack the wasm reads past them), the offsets 4-byte aligned, the validity bytes.
 */
function arrowLayout(bytesLength: number, count: number, validityOffset?: number): { offsetsAt: number; validityAt: number; validityBytes: number; length: number } {
  const offsetsAt = (bytesLength + 16 + 3) & ~3;
  const validityAt = offsetsAt + (count + 1) * 4;
  const validityBytes = validityOffset === undefined ? 0 : (validityOffset + count + 7) >> 3;
  return { offsetsAt, validityAt, validityBytes, length: validityAt + validityBytes };
}

/** Values numbered at a time by a column that may stop (PlainTextColumn's `stopAbove`). */
const stopBlock = 1 << 16;

/** Where `count` PLAIN BYTE_ARRAY values (a 4-byte little-endian length before each) from `bytes[at ..]` end. */
function plainEnd(bytes: Uint8Array, at: number, count: number): number {
  for (let k = 0; k < count; k++) {
    if (at + 4 > bytes.length) throw new Error(`a PLAIN BYTE_ARRAY value runs past the end of its page`);
    const length = (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
    at += 4;
    if (length > bytes.length - at) throw new Error(`a PLAIN BYTE_ARRAY value runs past the end of its page`);
    at += length;
  }
  return at;
}
