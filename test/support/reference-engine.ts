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
  const text = table.columns[expr.var]![row]!;
  if ('missing' in expr) return text === '';
  if (text === '') return false;
  const numeric = table.numeric.has(expr.var);
  if ('in' in expr) return expr.in.some((value) => (numeric ? Number(value) === Number(text) : value === text));
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
