// Expressions of the shapes ClickHouse's query analyzer rewrites, for the ClickHouse property
// test: OR-chains of three or more single values of one column (values, NA, one-value ranges
// such as x=5..5), written as OR terms or as one value list, inside AND, NOT and OR. A server
// that rewrites such a chain on the shards but not where their blocks are merged fails with
// "Not found column countIf(...) in block".
import fc from 'fast-check';
import type { Expr } from '../../src/query/ast.js';
import { toText } from '../support/expression-text.js';
import { exprArb, present } from '../support/random-data.js';

/** One single-value term of `name` as text for a value list (a value, NA, or lo..lo for numeric columns). */
function singleArb(name: string, values: string[], numeric: boolean): fc.Arbitrary<{ expr: Expr; listItem: string }> {
  const value = fc.constantFrom(...values).map((v) => {
    const expr: Expr = { var: name, in: [v] };
    return { expr, listItem: toText(expr).slice(name.length + 1) };
  });
  const missing = fc.constant({ expr: { var: name, missing: true } as Expr, listItem: 'NA' });
  const point = fc.constantFrom(...values).map((v) => ({ expr: { var: name, min: v, max: v } as Expr, listItem: `${v}..${v}` }));
  return numeric ? fc.oneof(value, missing, point) : fc.oneof(value, missing);
}

/** An OR-chain of 3-5 single values of one column: `(x=1 OR x=NA OR x=2..2)` or `x=1,NA,2..2`. */
export function chainArb(columns: Record<string, string[]>, numeric: ReadonlySet<string> = new Set(['num1', 'num2'])): fc.Arbitrary<string> {
  const chains = Object.entries(columns)
    .filter(([, values]) => present(values).length > 0)
    .map(([name, values]) =>
      fc.tuple(fc.array(singleArb(name, present(values), numeric.has(name)), { minLength: 3, maxLength: 5 }), fc.boolean()).map(([items, asList]) =>
        asList ? `${name}=${items.map((item) => item.listItem).join(',')}` : `(${items.map((item) => toText(item.expr)).join(' OR ')})`,
      ),
    );
  return fc.oneof(...chains);
}

/**
 * A chain inside the forms that trip the analyzer: `(other AND chain)`, `(other AND chain) OR
 * chain OR ...`, `NOT chain AND other`, `NOT (other AND chain)`, with `other` a random expression.
 */
export function rewrittenShapeArb(columns: Record<string, string[]>): fc.Arbitrary<string> {
  const chain = chainArb(columns);
  const other = exprArb(columns).map(toText);
  return fc.oneof(
    fc.tuple(other, chain).map(([a, c]) => `(${a} AND ${c})`),
    fc.tuple(other, chain, fc.array(chain, { minLength: 1, maxLength: 3 })).map(([a, c, rest]) => `((${a} AND ${c}) OR ${rest.join(' OR ')})`),
    fc.tuple(other, chain).map(([a, c]) => `(NOT ${c} AND ${a})`),
    fc.tuple(other, chain).map(([a, c]) => `NOT (${a} AND ${c})`),
    fc.tuple(chain, chain).map(([c, d]) => `(${c} AND (${d} OR ${c}))`),
  );
}
