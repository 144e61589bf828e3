import { instantiate, parquetDecoderModule } from '../../kernel/wasm-module.js';
import type { CellValue } from './cell-values.js';
import type { ColumnEncoder } from './column-encoder.js';
import type { WeightEncoder } from './weight-encoder.js';

/**
 * Dictionary-encoded Parquet data pages (the RLE/bit-packed hybrid of definition levels and
 * of indices into the chunk's dictionary page) decoded straight into column ids by
 * build/parquet.wasm (assembly/parquet.ts): no JavaScript value per row, no array of
 * indices or levels in JavaScript, rows counted per index and added to the column's counts
 * once per dictionary. New values are numbered by the column in the order rows first show
 * them, as ColumnEncoder.setIndexed numbers them. A weight column's pages (numeric
 * dictionaries) become numbers the same way, checked by its encoder.
 */

/** The exports of build/parquet.wasm this file calls. */
interface DecoderExports {
  memory: WebAssembly.Memory;
  parquetAbi(): number;
  allocate(bytes: number): number;
  detail(): number;
  readLevels(src: number, end: number, count: number, levels: number): number;
  readIndices(src: number, end: number, width: number, count: number, indices: number, known: number, rows: number, dictionary: number, fresh: number): number;
  writeIds(indices: number, levels: number, count: number, present: number, known: number, out: number, idBytes: number): void;
  writeNumbers(indices: number, levels: number, count: number, present: number, words: number, out: number): void;
}

/** Version of build/parquet.wasm's exports this code calls (parquetAbi() in assembly/parquet.ts). */
const PARQUET_DECODER_ABI = 2;

const FAIL_RUN_PAST_END = -1;
const FAIL_INDEX_PAST_DICTIONARY = -2;
const FAIL_LEVEL_ABOVE_ONE = -3;

/** Bytes the kernel may read past a buffer (8-byte loads); zeroed after every copy. */
const SLACK = 16;

/** Definition levels of a page: `bytes[at .. end - 1]`. */
export interface LevelBytes {
  bytes: Uint8Array;
  at: number;
  end: number;
}

/** One region of the decoder's memory: its address and size in bytes. */
interface Region {
  at: number;
  bytes: number;
}

/**
 * The decoder of one thread: its WebAssembly instance and buffers, reused from page to page
 * (grown by doubling). One dictionary at a time: {@link startDictionary}, pages, {@link endDictionary}.
 */
export class DictionaryPageDecoder {
  private readonly wasm: DecoderExports;
  private readonly regions = new Map<string, Region>();
  private dictionarySize = 0;
  private words: ArrayLike<CellValue> = [];
  private target: ColumnEncoder | WeightEncoder | undefined;

  constructor() {
    this.wasm = instantiate<DecoderExports>(parquetDecoderModule(), 'the Parquet page decoder');
    const found = typeof this.wasm.parquetAbi === 'function' ? this.wasm.parquetAbi() : 0;
    if (found !== PARQUET_DECODER_ABI) throw new Error(`build/parquet.wasm has decoder ABI ${found}, this code expects ${PARQUET_DECODER_ABI}: run \`npm run build:wasm\``);
  }

  /**
   * Starts the dictionary page `words` of `target`'s chunk: no index looked up yet, no row
   * counted. A weight column's words must be numbers (a Float64Array).
   */
  startDictionary(target: ColumnEncoder | WeightEncoder, words: ArrayLike<CellValue>): void {
    this.endDictionary();
    this.target = target;
    this.words = words;
    this.dictionarySize = words.length;
    const weights = !('wordId' in target);
    const known = this.region('known', words.length * 4);
    const rows = this.region('rows', words.length * 4);
    this.region('fresh', words.length * 4);
    const buffer = this.wasm.memory.buffer;
    // A weight's indices are never numbered (0: none is listed as new).
    new Int32Array(buffer, known, words.length).fill(weights ? 0 : -1);
    new Uint32Array(buffer, rows, words.length).fill(0);
    if (weights) {
      if (!(words instanceof Float64Array)) throw new Error('a weight column\'s dictionary page is not numbers');
      const numbers = this.region('numbers', words.length * 8);
      new Float64Array(this.wasm.memory.buffer, numbers, words.length).set(words);
    }
  }

  /** Adds the rows counted since startDictionary to the column's counts (see ColumnEncoder.addIndexRows). */
  endDictionary(): void {
    const target = this.target;
    if (target === undefined) return;
    this.target = undefined;
    if (!('addIndexRows' in target)) return;
    const size = this.dictionarySize;
    const buffer = this.wasm.memory.buffer;
    target.addIndexRows(new Int32Array(buffer, this.regions.get('known')!.at, size), new Uint32Array(buffer, this.regions.get('rows')!.at, size));
  }

  /**
   * Rows `start .. start + count - 1` of the current dictionary's column from one data page:
   * `levels` (undefined: every row has a value) and the indices of the rows with a value,
   * `width` bits each, in `values[at .. values.length - 1]`.
   */
  storePage(start: number, count: number, levels: LevelBytes | undefined, width: number, values: Uint8Array, at: number): void {
    const target = this.target;
    if (target === undefined) throw new Error('a dictionary-encoded page comes before any dictionary page');
    if (width > 32) throw new Error(`a data page's dictionary indices are ${width} bits wide, more than 32`);
    const wasm = this.wasm;
    // Every region first (allocating may grow the memory), then views of it.
    const weights = !('wordId' in target);
    const levelsAt = levels === undefined ? 0 : this.region('levels', count);
    const levelSource = levels === undefined ? 0 : this.region('levelSource', levels.end - levels.at);
    const source = this.region('source', values.length - at);
    const indices = this.region('indices', (count + 1) * 4);
    const out = this.region('out', count * (weights ? 8 : 4));
    const memory = new Uint8Array(wasm.memory.buffer);
    let present = count;
    if (levels !== undefined) {
      copyIn(memory, levelSource, levels.bytes, levels.at, levels.end);
      present = wasm.readLevels(levelSource, levelSource + levels.end - levels.at, count, levelsAt);
      if (present < 0) throw this.failure(present, count, 'definition levels');
    }
    copyIn(memory, source, values, at, values.length);
    const known = this.regions.get('known')!.at;
    const fresh = this.regions.get('fresh')!.at;
    const listed = wasm.readIndices(source, source + values.length - at, width, present, indices, known, this.regions.get('rows')!.at, this.dictionarySize, fresh);
    if (listed < 0) throw this.failure(listed, present, 'dictionary indices');
    if (weights) {
      wasm.writeNumbers(indices, levels === undefined ? 0 : levelsAt, count, present, this.regions.get('numbers')!.at, out);
      // Checked by the weight encoder: a blank (NaN) or negative weight is refused, naming its row.
      target.setValues(start, new Float64Array(wasm.memory.buffer, out, count), 0, count);
      return;
    }
    if (listed > 0) {
      // Numbered in the order rows first show them; may widen the column's ids.
      const knownIds = new Int32Array(wasm.memory.buffer, known, this.dictionarySize);
      const freshIndices = new Uint32Array(wasm.memory.buffer, fresh, listed);
      for (let k = 0; k < listed; k++) target.wordId(this.words, freshIndices[k]!, knownIds);
    }
    const idBytes = target.idBytes;
    wasm.writeIds(indices, levels === undefined ? 0 : levelsAt, count, present, known, out, idBytes);
    const buffer = wasm.memory.buffer;
    target.setIndexIds(start, idBytes === 1 ? new Uint8Array(buffer, out, count) : idBytes === 2 ? new Uint16Array(buffer, out, count) : new Uint32Array(buffer, out, count), count);
  }

  /** Address of the buffer `name`, at least `bytes` long (plus SLACK). */
  private region(name: string, bytes: number): number {
    const found = this.regions.get(name);
    if (found !== undefined && found.bytes >= bytes) return found.at;
    const size = Math.max(bytes, 2 * (found?.bytes ?? 0), 1024);
    const at = this.wasm.allocate(size + SLACK);
    this.regions.set(name, { at, bytes: size });
    return at;
  }

  private failure(code: number, count: number, what: string): Error {
    const detail = this.wasm.detail();
    if (code === FAIL_INDEX_PAST_DICTIONARY) return new Error(`dictionary index ${detail} is past the dictionary's ${this.dictionarySize} values`);
    if (code === FAIL_LEVEL_ABOVE_ONE) return new Error(`a definition level is ${detail}, above the 1 of a flat column`);
    if (code === FAIL_RUN_PAST_END) return new Error(`RLE/bit-packed run ends after ${detail} of ${count} values`);
    return new Error(`a bit-packed run of ${what} passes the end of its page after ${detail} of ${count} values`);
  }
}

/** Copies `bytes[from .. to - 1]` to `address` and zeroes the SLACK bytes after them. */
function copyIn(memory: Uint8Array, address: number, bytes: Uint8Array, from: number, to: number): void {
  memory.set(bytes.subarray(from, to), address);
  memory.fill(0, address + to - from, address + to - from + SLACK);
}

let threadDecoder: DictionaryPageDecoder | undefined;

/** This thread's decoder, made on first use. */
export function dictionaryPageDecoder(): DictionaryPageDecoder {
  return (threadDecoder ??= new DictionaryPageDecoder());
}
