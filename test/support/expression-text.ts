import type { Expr } from '../../src/query/ast.js';

// The test's own printer, kept apart from the engine's: quotes anything beyond the plainest
// names and values, with a backslash before a quote or backslash inside the quotes.
const escape = (text: string) => `"${text.replace(/(["\\])/g, '\\$1')}"`;
const quote = (value: string) => (/^[^\s,()"]+$/.test(value) && value !== 'NA' && !value.includes('..') ? value : escape(value));
const name = (text: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(text) && !/^(and|or|not)$/i.test(text) ? text : escape(text));

/** Prints a tree in the text grammar, fully parenthesised. */
export function toText(expr: Expr): string {
  if ('all' in expr) return '*';
  if ('and' in expr) return `(${expr.and.map(toText).join(' AND ')})`;
  if ('or' in expr) return `(${expr.or.map(toText).join(' OR ')})`;
  if ('not' in expr) return `NOT ${toText(expr.not)}`;
  if ('code' in expr) return name(expr.code);
  if ('audience' in expr) return `@${expr.audience}`;
  if ('missing' in expr) return `${name(expr.var)}=NA`;
  if ('in' in expr) return `${name(expr.var)}=${expr.in.map(quote).join(',')}`;
  if ('every' in expr) return `${name(expr.var)}=all(${expr.every.map(quote).join(',')})`;
  if ('none' in expr) return `${name(expr.var)}=none(${expr.none.map(quote).join(',')})`;
  return `${name(expr.var)}=${expr.min ?? ''}..${expr.max ?? ''}`;
}
