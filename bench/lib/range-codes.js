// Batched materialization of codes on numeric (non-indexed) columns: all codes of
// one variable are built in ONE pass over its column (a value -> matching codes
// lookup, as a group-by would), instead of one full column scan per code.
// S5 has ~800 range codes on 7 numeric variables; this keeps the bitset peers'
// cost there about the cells, not about re-scanning columns.
import { holds } from './codes.js';
import { MISSING } from './column-store.js';

/**
 * @param exprs single-column codes ({var, in} or {var, min, max}) on Int32 columns
 * @returns {Uint32Array[]} ascending respondent indexes matching each code
 */
export function respondentsOfCodes(exprs, store) {
  const out = new Array(exprs.length);
  const byVariable = new Map();
  exprs.forEach((expr, index) => {
    if (!byVariable.has(expr.var)) byVariable.set(expr.var, []);
    byVariable.get(expr.var).push(index);
  });
  for (const [variable, indexes] of byVariable) {
    const values = store.column(variable).values;
    const distinct = store.column(variable).distinct;
    if (distinct.length === 0) { for (const i of indexes) out[i] = new Uint32Array(0); continue; }
    if (indexes.length === 1 && !exprs[indexes[0]].in) {
      // One range on this variable: a plain filtering loop is cheapest.
      const { min: lo = -2147483647, max: hi = 2147483647 } = exprs[indexes[0]];
      const scratch = new Uint32Array(values.length);
      let n = 0;
      for (let i = 0; i < values.length; i++) {
        const v = values[i];
        if (v >= lo && v <= hi && v !== MISSING) scratch[n++] = i;
      }
      out[indexes[0]] = scratch.slice(0, n);
      continue;
    }
    const min = distinct[0];
    const slotOf = new Int32Array(distinct[distinct.length - 1] - min + 1).fill(-1);
    distinct.forEach((value, s) => { slotOf[value - min] = s; });
    const slotCounts = new Int32Array(distinct.length);
    for (let i = 0; i < values.length; i++) if (values[i] !== MISSING) slotCounts[slotOf[values[i] - min]]++;
    // Code lists per distinct value (CSR), and exact output sizes from the slot counts.
    const lists = distinct.map((value) => indexes.filter((i) => holds(exprs[i], value)));
    const offsets = new Int32Array(distinct.length + 1);
    lists.forEach((list, s) => { offsets[s + 1] = offsets[s] + list.length; });
    const flat = Int32Array.from(lists.flat());
    const sizes = new Map(indexes.map((i) => [i, 0]));
    lists.forEach((list, s) => { for (const i of list) sizes.set(i, sizes.get(i) + slotCounts[s]); });
    const rows = indexes.map((i) => (out[i] = new Uint32Array(sizes.get(i))));
    const fill = new Int32Array(indexes.length);
    const local = new Int32Array(exprs.length);
    indexes.forEach((i, k) => { local[i] = k; });
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v === MISSING) continue;
      const s = slotOf[v - min];
      for (let k = offsets[s], end = offsets[s + 1]; k < end; k++) {
        const code = local[flat[k]];
        rows[code][fill[code]++] = i;
      }
    }
  }
  return out;
}
