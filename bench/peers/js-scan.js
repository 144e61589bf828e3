// Peer: the plain JS scan a developer would write first. No index and no
// dictionary encoding: per query, `new Function` compiles one loop over the raw
// columns the shape needs (the harness's typed arrays), with the base, row and column
// conditions written inline, and adds each respondent's weight to its cells. An axis
// whose codes are single values of one integer variable (S3's OCCP, INDP) becomes a
// lookup from value to position; other codes are tested one by one. S5 (2,000
// overlapping codes a side) is left out: 2,000 inline tests per respondent is not
// what anyone would write.
import { MISSING } from '../lib/column-store.js';

/** Most codes on an axis tested one by one; beyond this the shape is skipped. */
const MAX_TESTED_CODES = 200;

/** A JS condition on `v<k>` (the value of column k at respondent i) for one code. */
function condition(expr, columnRef, store) {
  if (expr.all) return 'true';
  if (expr.and) return `(${expr.and.map((part) => condition(part, columnRef, store)).join(' && ')})`;
  if (expr.or) return `(${expr.or.map((part) => condition(part, columnRef, store)).join(' || ')})`;
  if (expr.not) return `!(${condition(expr.not, columnRef, store)})`;
  const column = store.column(expr.var);
  const v = columnRef(expr.var);
  if (expr.missing) return column.values instanceof Float64Array ? `Number.isNaN(${v})` : `${v} === ${MISSING}`;
  if (expr.in) {
    const values = expr.in.map((value) => column.encode(value)).filter((value) => value !== null && value !== undefined);
    if (values.length === 0) return 'false';
    return `(${values.map((value) => `${v} === ${value}`).join(' || ')})`;
  }
  const parts = [];
  if (expr.min !== undefined) parts.push(`${v} >= ${expr.min}`);
  if (expr.max !== undefined) parts.push(`${v} <= ${expr.max}`);
  if (expr.min === undefined) parts.push(`${v} !== ${MISSING}`);
  return `(${parts.join(' && ')})`;
}

/** A lookup from value to axis position when every code is one integer value of one variable. */
function lookupAxis(codes, store) {
  const variable = codes[0]?.expr.var;
  if (!variable || !codes.every((c) => c.expr.var === variable && c.expr.in?.length === 1)) return null;
  const column = store.column(variable);
  if (column.isText || column.values instanceof Float64Array) return null;
  const values = codes.map((c) => Number(c.expr.in[0]));
  const min = Math.min(...values);
  const table = new Int32Array(Math.max(...values) - min + 1).fill(-1);
  values.forEach((value, position) => (table[value - min] = position));
  return { variable, min, table };
}

/** The loop of one shape as a function (columns, weights, lookups, weighted, respondents). */
function compile(shape, store) {
  const variables = [];
  const columnRef = (name) => {
    if (!variables.includes(name)) variables.push(name);
    return `v${variables.indexOf(name)}`;
  };
  const baseTest = condition(shape.base.expr, columnRef, store);
  const axes = [shape.rows, shape.columns].map((codes, a) => {
    const lookup = lookupAxis(codes, store);
    if (lookup) {
      const v = columnRef(lookup.variable);
      return { lookup, code: `const p${a} = (${v} - ${lookup.min}) >>> 0 < ${lookup.table.length} ? lookups[${a}][${v} - ${lookup.min}] : -1; if (p${a} < 0) continue;`, single: true };
    }
    if (codes.length > MAX_TESTED_CODES) return null;
    const tests = codes.map((c, k) => `if (${condition(c.expr, columnRef, store)}) hits${a}[n${a}++] = ${k};`);
    return { lookup: null, code: `let n${a} = 0; ${tests.join(' ')} if (n${a} === 0) continue;`, single: false };
  });
  if (axes.includes(null)) return null;
  const C = shape.columns.length;
  const reads = variables.map((name, k) => `const v${k} = columns[${k}][i];`).join(' ');
  const add = (cell) => `weighted[${cell}] += w; respondents[${cell}] += 1;`;
  const [rowAxis, columnAxis] = axes;
  const cell = rowAxis.single
    ? columnAxis.single ? add(`p0 * ${C} + p1`) : `for (let b = 0; b < n1; b++) { const cell = p0 * ${C} + hits1[b]; ${add('cell')} }`
    : columnAxis.single
      ? `for (let a = 0; a < n0; a++) { const cell = hits0[a] * ${C} + p1; ${add('cell')} }`
      : `for (let a = 0; a < n0; a++) { const row = hits0[a] * ${C}; for (let b = 0; b < n1; b++) { const cell = row + hits1[b]; ${add('cell')} } }`;
  const body = `
    const hits0 = new Int32Array(${shape.rows.length}), hits1 = new Int32Array(${C});
    for (let i = 0; i < n; i++) {
      ${reads}
      if (!(${baseTest})) continue;
      ${rowAxis.code}
      ${columnAxis.code}
      const w = weights[i];
      ${cell}
    }`;
  const loop = new Function('n', 'columns', 'weights', 'lookups', 'weighted', 'respondents', body);
  return { loop, variables, lookups: axes.map((axis) => axis.lookup?.table ?? null) };
}

export function createPeer() {
  const stores = new Map();
  return {
    name: 'js-scan',
    description: 'plain JS, no index: a `new Function` loop over the raw columns the query needs',
    usesColumnStore: true,
    async available() { return { ok: true }; },
    async prepare({ dataset, store }) {
      stores.set(dataset.id, store);
      return { index: 'none' };
    },
    variantsFor(shape) {
      return compile(shape, stores.get(shape.dataset)) ? ['scan'] : [];
    },
    async run(shape) {
      const store = stores.get(shape.dataset);
      // Compiled per query, as a query-to-JS scanner would; compiling is part of the time.
      const { loop, variables, lookups } = compile(shape, store);
      const weighted = new Float64Array(shape.rows.length * shape.columns.length);
      const respondents = new Float64Array(weighted.length);
      loop(store.rowCount, variables.map((name) => store.column(name).values), store.weights, lookups, weighted, respondents);
      return { weighted, respondents, method: 'new Function scan over raw columns' };
    },
    async release(datasetId) { stores.delete(datasetId); },
    async close() { stores.clear(); },
  };
}
