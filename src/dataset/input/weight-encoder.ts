import type { CrosstabError } from '../../errors.js';
import { type CellValue, isNullAt, safeNumbers, type Validity } from './cell-values.js';
import { ChunkedRows } from './chunked-rows.js';
import { type Place, placedError } from './input-errors.js';

/** Weights written as text: plain decimal notation only (no hex, `Infinity`, spaces or `1,5`). */
const decimalNumber = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

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

  /**
   * The encoder's own doubles for rows `start .. start + count - 1` when they lie in one chunk
   * already made (a weight column read straight into them, then checked in place: see
   * storeDirectWeights), else undefined. What is written there must be valid weights by the
   * time the rows are taken; setValues may then overwrite them.
   */
  room(start: number, count: number): Float64Array | undefined {
    const at = start - this.start;
    return at >= 0 && at + count <= this.current.length ? this.current.subarray(at, at + count) : undefined;
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
