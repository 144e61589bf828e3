import type { RowIds } from './row-ids.js';

/**
 * Rows per chunk of a growing column. Columns grow by doubling up to this, then by whole
 * chunks, not by copying: no copy of the whole table is ever made and at most one chunk per
 * column is unused, so a 22-million-row input holds about its ids and weights, not up to
 * twice them.
 */
const chunkRows = 1 << 20;

/**
 * One column's rows in chunks. Rows must arrive in increasing order per column (they may
 * skip rows, which stay 0); `slot(row)` is the index of `row` in `current`.
 */
export abstract class ChunkedRows<T extends RowIds | Float64Array> {
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
