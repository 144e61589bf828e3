// A small, obviously-correct reference engine: evaluates expression trees row by row over
// raw text values. Slow by design; it only checks the real engine in tests.
import type { Expr } from '../../src/query/ast.js';

export interface ReferenceTable {
  /** Column name -> one text value per row ('' = blank). */
  columns: Record<string, string[]>;
  weights: number[];
  /** Named codes (codebook), as expressions. */
  codes?: Record<string, Expr>;
  /** Columns whose values compare as numbers. */
  numeric: Set<string>;
}

export function matches(table: ReferenceTable, expr: Expr, row: number): boolean {
  if ('all' in expr) return true;
  if ('and' in expr) return expr.and.every((item) => matches(table, item, row));
  if ('or' in expr) return expr.or.some((item) => matches(table, item, row));
  if ('not' in expr) return !matches(table, expr.not, row);
  if ('code' in expr) return matches(table, table.codes![expr.code]!, row);
  if ('audience' in expr) throw new Error(`the reference engine has no audience @${expr.audience}`);
  const text = table.columns[expr.var]![row]!;
  if ('missing' in expr) return text === '';
  if (text === '') return false;
  const numeric = table.numeric.has(expr.var);
  if ('in' in expr) return expr.in.some((value) => (numeric ? Number(value) === Number(text) : value === text));
  if ('every' in expr) return expr.every.every((value) => (numeric ? Number(value) === Number(text) : value === text));
  if ('none' in expr) return !expr.none.some((value) => (numeric ? Number(value) === Number(text) : value === text));
  const value = Number(text);
  return (expr.min === undefined || value >= Number(expr.min)) && (expr.max === undefined || value <= Number(expr.max));
}

export function referenceCell(table: ReferenceTable, base: Expr, target: Expr) {
  let respondents = 0;
  let weighted = 0;
  let sumSqWeights = 0;
  for (let row = 0; row < table.weights.length; row++) {
    if (matches(table, base, row) && matches(table, target, row)) {
      const w = table.weights[row]!;
      respondents++;
      weighted += w;
      sumSqWeights += w * w;
    }
  }
  return { respondents, weighted, sumSqWeights };
}

/** Tree form with positions dropped and values as text, for comparing parse trees. */
export function normaliseTree(tree: unknown): unknown {
  if (Array.isArray(tree)) return tree.map(normaliseTree);
  if (typeof tree !== 'object' || tree === null) return tree;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(tree)) {
    if (key === 'at') continue;
    if (key === 'in') out[key] = (value as unknown[]).map(String);
    else if (key === 'min' || key === 'max') out[key] = String(value);
    else out[key] = normaliseTree(value);
  }
  return out;
}

const numberColumns = new WeakMap<string[], Float64Array>();

/** Text values as numbers (blank = NaN), once per column. */
function numbers(values: string[]): Float64Array {
  let column = numberColumns.get(values);
  if (!column) {
    column = Float64Array.from(values, (text) => (text === '' ? NaN : Number(text)));
    numberColumns.set(values, column);
  }
  return column;
}

/** `matches` as a closure over the row number, for whole passes over large tables (same semantics). */
export function predicate(table: ReferenceTable, expr: Expr): (row: number) => boolean {
  if ('all' in expr) return () => true;
  if ('and' in expr) {
    const items = expr.and.map((item) => predicate(table, item));
    return (row) => items.every((item) => item(row));
  }
  if ('or' in expr) {
    const items = expr.or.map((item) => predicate(table, item));
    return (row) => items.some((item) => item(row));
  }
  if ('not' in expr) {
    const inner = predicate(table, expr.not);
    return (row) => !inner(row);
  }
  if ('code' in expr) return predicate(table, table.codes![expr.code]!);
  if ('audience' in expr) throw new Error(`the reference engine has no audience @${expr.audience}`);
  const texts = table.columns[expr.var]!;
  if ('missing' in expr) return (row) => texts[row] === '';
  const numeric = table.numeric.has(expr.var);
  if ('in' in expr) {
    if (!numeric) {
      const wanted = new Set(expr.in.map(String));
      return (row) => texts[row] !== '' && wanted.has(texts[row]!);
    }
    const wanted = new Set(expr.in.map(Number));
    const values = numbers(texts);
    return (row) => wanted.has(values[row]!); // NaN (blank) is never in the set: Set uses SameValueZero, and no wanted value is NaN
  }
  if ('every' in expr || 'none' in expr) return (row) => matches(table, expr, row);
  const values = numbers(texts);
  const min = expr.min === undefined ? -Infinity : Number(expr.min);
  const max = expr.max === undefined ? Infinity : Number(expr.max);
  return (row) => values[row]! >= min && values[row]! <= max; // NaN compares false
}

export interface ReferenceTriple {
  respondents: number;
  weighted: number;
  sumSqWeights: number;
}

/**
 * A whole table in one pass over the rows, in plain f64 sums: cells (row-major), base AND
 * row totals, base AND column totals and the base.
 */
export function referenceTable(table: ReferenceTable, base: Expr, rows: Expr[], columns: Expr[]) {
  const triple = (): ReferenceTriple => ({ respondents: 0, weighted: 0, sumSqWeights: 0 });
  const add = (into: ReferenceTriple, w: number) => {
    into.respondents++;
    into.weighted += w;
    into.sumSqWeights += w * w;
  };
  const cells = Array.from({ length: rows.length * columns.length }, triple);
  const rowTotals = rows.map(triple);
  const columnTotals = columns.map(triple);
  const total = triple();
  const inColumn = new Array<boolean>(columns.length);
  const inBase = predicate(table, base);
  const inRows = rows.map((row) => predicate(table, row));
  const inColumns = columns.map((column) => predicate(table, column));
  for (let row = 0; row < table.weights.length; row++) {
    if (!inBase(row)) continue;
    const w = table.weights[row]!;
    add(total, w);
    inColumns.forEach((matchesColumn, c) => {
      inColumn[c] = matchesColumn(row);
      if (inColumn[c]) add(columnTotals[c]!, w);
    });
    inRows.forEach((matchesRow, r) => {
      if (!matchesRow(row)) return;
      add(rowTotals[r]!, w);
      for (let c = 0; c < columns.length; c++) if (inColumn[c]) add(cells[r * columns.length + c]!, w);
    });
  }
  return { cells, rowTotals, columnTotals, total };
}
