// Peer 4: one-pass JS scan, group-by style. Ingest dictionary-encodes every
// column (value -> position in the sorted distinct values, -1 = missing). A table
// is one loop over respondents: if the base holds, collect the row codes and the
// column codes the respondent matches (per variable, a lookup from value slot to
// the codes it satisfies) and add the weight to every (row, column) pair.
import { evaluateMask, holds } from '../lib/codes.js';
import { valueSlots } from '../lib/value-slots.js';

/** Per-variable lookup from value slot to the code indexes it satisfies (CSR). */
function axisPlan(codes, encoded) {
  const always = [];
  const byVariable = new Map();
  codes.forEach((c, index) => {
    const expr = c.expr;
    if (expr.all) { always.push(index); return; }
    if (!expr.var || expr.missing) throw new Error(`one-pass-scan: code '${c.text}' is not a single-column value or range code`);
    if (!byVariable.has(expr.var)) byVariable.set(expr.var, []);
    byVariable.get(expr.var).push(index);
  });
  const variables = [];
  for (const [variable, indexes] of byVariable) {
    const { column, slots } = encoded.get(variable);
    const distinct = column.distinct;
    const offsets = new Int32Array(distinct.length + 1);
    const lists = distinct.map((value) => indexes.filter((i) => holds(codes[i].expr, value)));
    lists.forEach((list, s) => { offsets[s + 1] = offsets[s] + list.length; });
    variables.push({ slots, offsets, codes: Int32Array.from(lists.flat()) });
  }
  return { always: Int32Array.from(always), variables, maxMatches: codes.length };
}

function collect(plan, i, out) {
  let n = 0;
  const always = plan.always;
  for (let k = 0; k < always.length; k++) out[n++] = always[k];
  const variables = plan.variables;
  for (let v = 0; v < variables.length; v++) {
    const variable = variables[v];
    const s = variable.slots[i];
    if (s < 0) continue;
    const end = variable.offsets[s + 1];
    for (let k = variable.offsets[s]; k < end; k++) out[n++] = variable.codes[k];
  }
  return n;
}

export function createPeer() {
  const datasets = new Map();
  return {
    name: 'one-pass-scan',
    description: 'plain JS: one loop over respondents scattering weights into the cell matrix (dictionary-encoded columns)',
    usesColumnStore: true,
    async available() { return { ok: true }; },
    async prepare({ dataset, store }) {
      const encoded = new Map();
      for (const column of store.columns.values()) {
        if (column.kind === 'weight') continue;
        encoded.set(column.name, { column, slots: valueSlots(column) });
      }
      datasets.set(dataset.id, { store, encoded });
      return { encodedColumns: encoded.size, encodedBytes: encoded.size * store.rowCount * 4 };
    },
    async run(shape) {
      const { store, encoded } = datasets.get(shape.dataset);
      const weights = store.weights;
      const base = evaluateMask(shape.base.expr, store);
      const rowPlan = axisPlan(shape.rows, encoded);
      const colPlan = axisPlan(shape.columns, encoded);
      const R = shape.rows.length, C = shape.columns.length;
      const weighted = new Float64Array(R * C);
      const respondents = new Float64Array(R * C);
      const rowMatches = new Int32Array(rowPlan.maxMatches + 1);
      const colMatches = new Int32Array(colPlan.maxMatches + 1);
      for (let i = 0; i < store.rowCount; i++) {
        if (base[i] === 0) continue;
        const rn = collect(rowPlan, i, rowMatches);
        if (rn === 0) continue;
        const cn = collect(colPlan, i, colMatches);
        if (cn === 0) continue;
        const w = weights[i];
        for (let a = 0; a < rn; a++) {
          const offset = rowMatches[a] * C;
          for (let b = 0; b < cn; b++) {
            const cell = offset + colMatches[b];
            weighted[cell] += w;
            respondents[cell] += 1;
          }
        }
      }
      return { weighted, respondents, method: 'one pass: matched rows x matched columns += weight' };
    },
    async release(datasetId) { datasets.delete(datasetId); },
    async close() { datasets.clear(); },
  };
}
