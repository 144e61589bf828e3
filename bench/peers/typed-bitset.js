// Peer 3: plain-JS dense bitsets. One Uint32Array bitset (1 bit per respondent)
// per value of every category/text column, built at ingest. A cell is
// base AND row AND column: base AND row is formed once per row together with the
// list of its non-zero words, so each cell ANDs only those words; the count is a
// SWAR popcount and the weighted sum iterates the set bits of each word.
// Range codes on numeric columns (AGEP, PINCP, ...) are built by scanning the
// column at query time; codes with several values OR the stored bitsets.
import { evaluateMask, matchingValues } from '../lib/codes.js';
import { respondentsOfCodes } from '../lib/range-codes.js';
import { rowsBySlot, valueSlots } from '../lib/value-slots.js';

function popcount32(x) {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

class BitsetIndex {
  constructor(store) {
    this.store = store;
    this.rowCount = store.rowCount;
    this.words = (store.rowCount + 31) >>> 5;
    /** @type {Map<string, {column, bitsets: Uint32Array[]}>} */
    this.byColumn = new Map();
    for (const column of store.columns.values()) {
      if (column.kind !== 'category' && column.kind !== 'text') continue;
      const slots = valueSlots(column);
      const slotCount = column.distinct.length;
      const { offsets, rows } = rowsBySlot(slots, slotCount);
      const block = new Uint32Array(slotCount * this.words);
      const bitsets = [];
      for (let s = 0; s < slotCount; s++) {
        const bitset = block.subarray(s * this.words, (s + 1) * this.words);
        for (let k = offsets[s]; k < offsets[s + 1]; k++) bitset[rows[k] >>> 5] |= 1 << (rows[k] & 31);
        bitsets.push(bitset);
      }
      this.byColumn.set(column.name, { column, bitsets });
    }
  }

  bytes() {
    let total = 0;
    for (const { bitsets } of this.byColumn.values()) total += bitsets.length * this.words * 4;
    return total;
  }

  all() {
    const bitset = new Uint32Array(this.words).fill(0xffffffff);
    const tail = this.rowCount & 31;
    if (tail) bitset[this.words - 1] = (1 << tail) - 1;
    return bitset;
  }

  fromMask(mask) {
    const bitset = new Uint32Array(this.words);
    for (let i = 0; i < mask.length; i++) if (mask[i]) bitset[i >>> 5] |= 1 << (i & 31);
    return bitset;
  }

  /** True for a code on a numeric Int32 column: built by scanBatch, not from stored bitsets. */
  scanned(expr) {
    return Boolean(expr.var && (expr.in || expr.min !== undefined || expr.max !== undefined) && !this.byColumn.has(expr.var)
      && this.store.column(expr.var).values instanceof Int32Array);
  }

  /** Bitsets of many scanned codes, one pass per variable. */
  scanBatch(exprs) {
    return respondentsOfCodes(exprs, this.store).map((rows) => {
      const bitset = new Uint32Array(this.words);
      for (let k = 0; k < rows.length; k++) bitset[rows[k] >>> 5] |= 1 << (rows[k] & 31);
      return bitset;
    });
  }

  /** The bitset of one code (stored, OR of stored, or built by a column scan). */
  bitset(expr) {
    if (expr.all) return this.all();
    if (this.scanned(expr)) return this.scanBatch([expr])[0];
    const indexed = expr.var && (expr.in || expr.min !== undefined || expr.max !== undefined) ? this.byColumn.get(expr.var) : undefined;
    if (!indexed) return this.fromMask(evaluateMask(expr, this.store));
    const { column, bitsets } = indexed;
    const slots = matchingValues(expr, column).map((value) => column.distinct.indexOf(value));
    if (slots.length === 1) return bitsets[slots[0]];
    const out = new Uint32Array(this.words);
    for (const s of slots) {
      const b = bitsets[s];
      for (let w = 0; w < out.length; w++) out[w] |= b[w];
    }
    return out;
  }

}

export function createPeer() {
  const indexes = new Map();
  return {
    name: 'typed-bitset',
    description: 'plain JS: dense Uint32Array bitset per value code; AND + SWAR popcount + weighted sum over set bits',
    usesColumnStore: true,
    async available() { return { ok: true }; },
    async prepare({ dataset, store }) {
      const index = new BitsetIndex(store);
      indexes.set(dataset.id, index);
      return { bitsets: [...index.byColumn.values()].reduce((n, c) => n + c.bitsets.length, 0), indexBytes: index.bytes() };
    },
    async run(shape) {
      const index = indexes.get(shape.dataset);
      const weights = index.store.weights;
      const words = index.words;
      const cache = new Map();
      // Numeric-column codes of the whole table are built together, one pass per variable.
      const scanned = [...new Map([shape.base, ...shape.rows, ...shape.columns].filter((c) => index.scanned(c.expr)).map((c) => [c.text, c])).values()];
      index.scanBatch(scanned.map((c) => c.expr)).forEach((bitset, k) => cache.set(scanned[k].text, bitset));
      const bitsetOf = (c) => {
        let b = cache.get(c.text);
        if (!b) { b = index.bitset(c.expr); cache.set(c.text, b); }
        return b;
      };
      const base = bitsetOf(shape.base);
      const columns = shape.columns.map(bitsetOf);
      const R = shape.rows.length, C = columns.length;
      const weighted = new Float64Array(R * C);
      const respondents = new Float64Array(R * C);
      const baseRow = new Uint32Array(words);
      const nonZero = new Int32Array(words);
      for (let r = 0; r < R; r++) {
        const row = bitsetOf(shape.rows[r]);
        let m = 0;
        for (let w = 0; w < words; w++) {
          const x = base[w] & row[w];
          baseRow[w] = x;
          if (x !== 0) nonZero[m++] = w;
        }
        for (let c = 0; c < C; c++) {
          const col = columns[c];
          let count = 0, sum = 0;
          for (let k = 0; k < m; k++) {
            const w = nonZero[k];
            let x = baseRow[w] & col[w];
            if (x === 0) continue;
            count += popcount32(x);
            const first = w << 5;
            while (x !== 0) {
              const low = x & -x;
              sum += weights[first + 31 - Math.clz32(low)];
              x ^= low;
            }
          }
          weighted[r * C + c] = sum;
          respondents[r * C + c] = count;
        }
      }
      return { weighted, respondents, method: 'base&row per row; per cell AND + popcount + set-bit sums' };
    },
    async release(datasetId) { indexes.delete(datasetId); },
    async close() { indexes.clear(); },
  };
}
