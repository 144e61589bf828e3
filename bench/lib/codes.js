// Codes: a condition on one column, in the datasets README's grammar.
// Shapes carry each code in both forms: `text` ('SEX=2', 'SCHL=21..24',
// 'AGEP=18..', '*') for the engine, and `expr` (the README's JSON tree) for peers.
import { MISSING } from './column-store.js';

export const ALL = Object.freeze({ text: '*', expr: Object.freeze({ all: true }) });

const scalar = (token) => (/^-?(0|[1-9]\d*)$/.test(token) ? Number(token) : token);

/** Parses one single-column code: '*', 'VAR=v', 'VAR=v1,v2', 'VAR=lo..hi', 'VAR=lo..', 'VAR=..hi'. */
export function code(text) {
  if (text === '*') return ALL;
  const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.+)$/.exec(text);
  if (!m) throw new Error(`bench: code '${text}' is not VAR=value[,value], VAR=lo..hi or *`);
  const [, variable, rhs] = m;
  const range = /^(-?\d+)?\.\.(-?\d+)?$/.exec(rhs);
  if (range) {
    const expr = { var: variable };
    if (range[1] !== undefined) expr.min = Number(range[1]);
    if (range[2] !== undefined) expr.max = Number(range[2]);
    if (expr.min === undefined && expr.max === undefined) throw new Error(`bench: code '${text}' has an empty range`);
    return { text, expr };
  }
  return { text, expr: { var: variable, in: rhs.split(',').map(scalar) } };
}

/** Text form of a single-column code tree. */
export function codeText(expr) {
  if (expr.all) return '*';
  if (expr.in) return `${expr.var}=${expr.in.join(',')}`;
  return `${expr.var}=${expr.min ?? ''}..${expr.max ?? ''}`;
}

export const valueCode = (variable, value) => ({ text: `${variable}=${value}`, expr: { var: variable, in: [value] } });
export const rangeCode = (variable, min, max) => {
  const expr = { var: variable };
  if (min !== undefined && min !== null) expr.min = min;
  if (max !== undefined && max !== null) expr.max = max;
  return { text: codeText(expr), expr };
};

/** Variables a code refers to. */
export function variablesOf(expr, into = new Set()) {
  if (expr.var) into.add(expr.var);
  for (const part of expr.and ?? expr.or ?? []) variablesOf(part, into);
  if (expr.not) variablesOf(expr.not, into);
  return into;
}

/** True when a single-column code holds for a stored (non-missing, decoded) value. */
export function holds(expr, value) {
  if (expr.in) return expr.in.includes(value);
  return (expr.min === undefined || value >= expr.min) && (expr.max === undefined || value <= expr.max);
}

/**
 * Evaluates any code tree over a column store into a 0/1 mask, the obvious way.
 * Missing never matches `in` or a range; `not` includes missing.
 */
export function evaluateMask(expr, store) {
  const n = store.rowCount;
  if (expr.all) return new Uint8Array(n).fill(1);
  if (expr.and || expr.or) {
    const parts = (expr.and ?? expr.or).map((part) => evaluateMask(part, store));
    const out = parts[0];
    for (const part of parts.slice(1)) for (let i = 0; i < n; i++) out[i] = expr.and ? out[i] & part[i] : out[i] | part[i];
    return out;
  }
  if (expr.not) {
    const inner = evaluateMask(expr.not, store);
    for (let i = 0; i < n; i++) inner[i] ^= 1;
    return inner;
  }
  const column = store.column(expr.var);
  const values = column.values;
  const out = new Uint8Array(n);
  if (expr.missing) {
    for (let i = 0; i < n; i++) out[i] = values[i] === MISSING || Number.isNaN(values[i]) ? 1 : 0;
    return out;
  }
  if (column.isText) {
    const codes = new Set((expr.in ?? []).map((v) => column.encode(v)).filter((c) => c !== null));
    if (!expr.in) throw new Error(`bench: range code on text column ${expr.var}`);
    for (let i = 0; i < n; i++) out[i] = codes.has(values[i]) ? 1 : 0;
    return out;
  }
  if (expr.in) {
    const wanted = expr.in.map(Number);
    if (wanted.length === 1) {
      const v = wanted[0];
      for (let i = 0; i < n; i++) out[i] = values[i] === v ? 1 : 0;
    } else {
      const set = new Set(wanted);
      for (let i = 0; i < n; i++) out[i] = values[i] !== MISSING && set.has(values[i]) ? 1 : 0;
    }
    return out;
  }
  const lo = expr.min ?? -Infinity, hi = expr.max ?? Infinity;
  // MISSING (-2^31) and NaN both fail lo <= v when lo is finite; guard the open-below case.
  for (let i = 0; i < n; i++) {
    const v = values[i];
    out[i] = v >= lo && v <= hi && v !== MISSING ? 1 : 0;
  }
  return out;
}

/** Decoded distinct values of `variable` that a single-column code matches (sorted). */
export function matchingValues(expr, column) {
  return column.distinct.filter((value) => holds(expr, value));
}
