import { isUtf8 } from 'node:buffer';
import type { RawColumn } from './raw-table.js';

/** U+FFFD in UTF-8: a value holding it may equal another after decoding (see PlainTextColumn). */
const REPLACEMENT = Buffer.from([0xef, 0xbf, 0xbd]);

/**
 * A column's distinct values kept as their UTF-8 bytes, value k (0-based) at
 * `bytes[ends[k - 1] .. ends[k] - 1]`, made JavaScript strings only when someone reads them.
 * An id-like text column (ACS SERIALNO: 1.25 million distinct values) is skipped by the build,
 * which needs only how many values it has and that one of them is not a number: its strings
 * (and collecting them) were most of a Parquet or Arrow read's time on the calling thread,
 * and a CSV build worker's new values are kept so too (csv-chunks.ts).
 *
 * Only bytes that decode one to one are kept so (valid UTF-8 without U+FFFD): two such
 * values are the same text exactly when their bytes are the same, so the numbering over
 * bytes is the numbering over texts.
 */
export class DeferredTexts {
  constructor(
    private bytes: Uint8Array = new Uint8Array(1 << 16),
    private ends: Uint32Array = new Uint32Array(1 << 12),
    private size = 0,
  ) {}

  /** Values numbered so far. */
  get count(): number {
    return this.size;
  }

  /** Whether `bytes` may be kept here: valid UTF-8 holding no U+FFFD. */
  static keeps(bytes: Uint8Array): boolean {
    return isUtf8(bytes) && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(REPLACEMENT) < 0;
  }

  /** Appends values whose bytes follow each other in `bytes`, `lengths[k]` bytes each (see {@link keeps}). */
  add(bytes: Uint8Array, lengths: ArrayLike<number>): void {
    const used = this.size === 0 ? 0 : this.ends[this.size - 1]!;
    if (used + bytes.length > this.bytes.length) this.bytes = grown(this.bytes, used + bytes.length);
    this.bytes.set(bytes, used);
    if (this.size + lengths.length > this.ends.length) this.ends = grown(this.ends, this.size + lengths.length);
    let end = used;
    for (let k = 0; k < lengths.length; k++) this.ends[this.size + k] = end += lengths[k]!;
    this.size += lengths.length;
  }

  /** Value `k` (0-based) as a string. */
  text(k: number): string {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString('utf8', k === 0 ? 0 : this.ends[k - 1]!, this.ends[k]!);
  }

  /** Every value as a string, in order. */
  texts(): string[] {
    const buffer = Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
    const out = new Array<string>(this.size);
    let start = 0;
    for (let k = 0; k < this.size; k++) {
      const end = this.ends[k]!;
      out[k] = buffer.toString('utf8', start, end);
      start = end;
    }
    return out;
  }

  /** The values as plain data (for a worker's message: both arrays may be transferred), see {@link from}. */
  data(): DeferredTextsData {
    const used = this.size === 0 ? 0 : this.ends[this.size - 1]!;
    return { bytes: this.bytes.slice(0, used), ends: this.ends.slice(0, this.size) };
  }

  static from({ bytes, ends }: DeferredTextsData): DeferredTexts {
    return new DeferredTexts(bytes, ends, ends.length);
  }
}

export interface DeferredTextsData {
  bytes: Uint8Array;
  ends: Uint32Array;
}

function grown<T extends Uint8Array | Uint32Array>(array: T, least: number): T {
  const bigger = new (array.constructor as new (length: number) => T)(Math.max(least, array.length * 2));
  bigger.set(array);
  return bigger;
}

/**
 * Gives `column` the values of `texts` as its dictionary, made strings on first read of
 * `column.dictionary` (a write replaces it); until then `column.deferred` says how many
 * there are and what the first is, which is all that deciding to skip an id-like text
 * column needs (classify.ts).
 */
export function deferDictionary(column: RawColumn, texts: DeferredTexts): void {
  let made: string[] | undefined;
  Object.defineProperty(column, 'dictionary', {
    get: () => (made ??= texts.texts()),
    set: (dictionary: string[]) => {
      made = dictionary;
      delete column.deferred;
    },
    enumerable: true,
    configurable: true,
  });
  column.deferred = { count: texts.count, first: texts.text(0) };
}
