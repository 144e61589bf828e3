import type { Expr } from '../../src/query/ast.js';

const quote = (value: string) => (/^[^\s,()"]+$/.test(value) && value !== 'NA' && !value.includes('..') ? value : `"${value.replace(/(["\\])/g, '\\$1')}"`);

/** Prints a tree in the text grammar, fully parenthesised. */
export function toText(expr: Expr): string {
  if ('all' in expr) return '*';
  if ('and' in expr) return `(${expr.and.map(toText).join(' AND ')})`;
  if ('or' in expr) return `(${expr.or.map(toText).join(' OR ')})`;
  if ('not' in expr) return `NOT ${toText(expr.not)}`;
  if ('code' in expr) return expr.code;
  if ('missing' in expr) return `${expr.var}=NA`;
  if ('in' in expr) return `${expr.var}=${expr.in.map(quote).join(',')}`;
  return `${expr.var}=${expr.min ?? ''}..${expr.max ?? ''}`;
}
