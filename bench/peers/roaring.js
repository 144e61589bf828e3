// Peer 2: `roaring` (CRoaring for Node, native). One RoaringBitmap32 per value of
// every category/text column, built at ingest. A cell is base AND row AND column:
// base AND row is one bitmap per row; per cell, andCardinality gives the count
// (and skips empty cells), and the weighted sum copies the intersection into a
// reused Uint32Array and sums the Float64Array weights at those positions.
// Range codes on numeric columns are built from a column scan at query time;
// codes with several values use orMany of the stored bitmaps.
import { createRequire } from 'node:module';
import { evaluateMask, matchingValues } from '../lib/codes.js';
import { respondentsOfCodes } from '../lib/range-codes.js';
import { rowsBySlot, valueSlots } from '../lib/value-slots.js';

const require = createRequire(import.meta.url);

function loadRoaring() {
  try {
    return { roaring: require('roaring') };
  } catch (error) {
    return { error };
  }
}

export function createPeer() {
  const indexes = new Map();
  let RoaringBitmap32;

  const bitmapOf = (index, expr) => {
    const { store } = index;
    if (expr.all) return RoaringBitmap32.fromRange(0, store.rowCount);
    const indexed = expr.var && (expr.in || expr.min !== undefined || expr.max !== undefined) ? index.byColumn.get(expr.var) : undefined;
    if (indexed) {
      const { column, bitmaps } = indexed;
      const matches = matchingValues(expr, column).map((value) => bitmaps[column.distinct.indexOf(value)]);
      if (matches.length === 1) return matches[0];
      return matches.length === 0 ? new RoaringBitmap32() : RoaringBitmap32.orMany(matches);
    }
    if (scanned(index, expr)) return scanBatch(index, [expr])[0];
    const mask = evaluateMask(expr, store);
    let n = 0;
    for (let i = 0; i < mask.length; i++) if (mask[i]) index.scratch[n++] = i;
    return new RoaringBitmap32(index.scratch.subarray(0, n));
  };

  const scanned = (index, expr) => Boolean(expr.var && (expr.in || expr.min !== undefined || expr.max !== undefined)
    && !index.byColumn.has(expr.var) && index.store.column(expr.var).values instanceof Int32Array);

  /** Bitmaps of many numeric-column codes, one pass per variable (rows arrive sorted). */
  const scanBatch = (index, exprs) => {
    return respondentsOfCodes(exprs, index.store).map((rows) => new RoaringBitmap32(rows));
  };

  return {
    name: 'roaring',
    description: 'roaring (CRoaring native addon): RoaringBitmap32 per value code; and + andCardinality; weights summed over toUint32Array',
    usesColumnStore: true,
    async available() {
      const { roaring, error } = loadRoaring();
      if (!roaring) return { ok: false, reason: `require('roaring') failed (${error.message.split('\n')[0]}); build it with: bash bench/setup-peers.sh` };
      RoaringBitmap32 = roaring.RoaringBitmap32;
      return { ok: true, version: require('roaring/package.json').version, cRoaring: roaring.CRoaringVersion };
    },
    async prepare({ dataset, store }) {
      const byColumn = new Map();
      let bytes = 0, count = 0;
      for (const column of store.columns.values()) {
        if (column.kind !== 'category' && column.kind !== 'text') continue;
        const slotCount = column.distinct.length;
        const { offsets, rows } = rowsBySlot(valueSlots(column), slotCount);
        const bitmaps = [];
        for (let s = 0; s < slotCount; s++) {
          const bitmap = new RoaringBitmap32(rows.subarray(offsets[s], offsets[s + 1]));
          bitmap.runOptimize();
          bitmap.shrinkToFit();
          bytes += bitmap.getSerializationSizeInBytes('croaring');
          bitmaps.push(bitmap);
        }
        count += slotCount;
        byColumn.set(column.name, { column, bitmaps });
      }
      indexes.set(dataset.id, { store, byColumn, scratch: new Uint32Array(store.rowCount) });
      return { bitmaps: count, serializedBytes: bytes };
    },
    async run(shape) {
      const index = indexes.get(shape.dataset);
      const weights = index.store.weights;
      const cache = new Map();
      const numeric = [...new Map([shape.base, ...shape.rows, ...shape.columns].filter((c) => scanned(index, c.expr)).map((c) => [c.text, c])).values()];
      scanBatch(index, numeric.map((c) => c.expr)).forEach((bitmap, k) => cache.set(numeric[k].text, bitmap));
      const get = (c) => {
        let b = cache.get(c.text);
        if (!b) { b = bitmapOf(index, c.expr); cache.set(c.text, b); }
        return b;
      };
      const base = get(shape.base);
      const columns = shape.columns.map(get);
      const R = shape.rows.length, C = columns.length;
      const weighted = new Float64Array(R * C);
      const respondents = new Float64Array(R * C);
      const buffer = index.scratch;
      for (let r = 0; r < R; r++) {
        const baseRow = RoaringBitmap32.and(base, get(shape.rows[r]));
        if (baseRow.isEmpty) continue;
        for (let c = 0; c < C; c++) {
          const count = baseRow.andCardinality(columns[c]);
          if (count === 0) continue;
          const cell = count === baseRow.size ? baseRow : RoaringBitmap32.and(baseRow, columns[c]);
          const rows = cell.toUint32Array(buffer);
          let sum = 0;
          for (let k = 0; k < rows.length; k++) sum += weights[rows[k]];
          weighted[r * C + c] = sum;
          respondents[r * C + c] = count;
        }
      }
      return { weighted, respondents, method: 'and(base,row); per cell andCardinality + and + toUint32Array sums' };
    },
    async release(datasetId) { indexes.delete(datasetId); },
    async close() { indexes.clear(); },
  };
}
