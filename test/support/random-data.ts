// Random small datasets and random expressions over them (fast-check), shared by the
// property tests of the engine (test/property.test.ts) and of the ClickHouse backend.
import fc from 'fast-check';
import type { Expr } from '../../src/query/ast.js';

export const NUMERIC_VALUES = ['0', '1', '2', '3', '5', '8', '13', '-4', '2.5', '100'];
export const TEXT_VALUES = ['a', 'b', '06', '6', 'x y', 'NA', '1..2', 'é'];

export const datasetArb = fc.integer({ min: 1, max: 400 }).chain((rows) =>
  fc.record({
    num1: fc.array(fc.oneof(fc.constant(''), fc.constantFrom(...NUMERIC_VALUES)), { minLength: rows, maxLength: rows }),
    num2: fc.array(fc.oneof(fc.constantFrom(...NUMERIC_VALUES.slice(0, 4))), { minLength: rows, maxLength: rows }),
    txt: fc.array(fc.oneof(fc.constant(''), fc.constantFrom(...TEXT_VALUES)), { minLength: rows, maxLength: rows }),
    weights: fc.array(engineWeight(1000, 2300), { minLength: rows, maxLength: rows }),
  }),
);

export function present(values: string[]): string[] {
  return [...new Set(values.filter((v) => v !== ''))];
}

export function exprArb(columns: Record<string, string[]>, numeric: ReadonlySet<string> = new Set(['num1', 'num2'])): fc.Arbitrary<Expr> {
  const leaves: Array<fc.Arbitrary<Expr>> = [fc.constant({ all: true } as Expr)];
  for (const [name, values] of Object.entries(columns)) {
    const seen = present(values);
    if (seen.length === 0) continue; // an all-blank column is skipped at build time
    leaves.push(fc.constant({ var: name, missing: true } as Expr));
    if (seen.length > 0) leaves.push(fc.subarray(seen, { minLength: 1 }).map((list) => ({ var: name, in: list }) as Expr));
    if (numeric.has(name)) {
      const bound = fc.option(fc.constantFrom('-5', '0', '1', '2.5', '3', '7', '50', '1000'), { nil: undefined });
      leaves.push(
        fc.tuple(bound, bound)
          .filter(([min, max]) => min !== undefined || max !== undefined)
          // A reversed range (7..-5) is an invalid_expression, not an empty set.
          .map(([min, max]) => (min !== undefined && max !== undefined && Number(min) > Number(max) ? [max, min] : [min, max]))
          .map(([min, max]) => ({ var: name, ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) }) as Expr),
      );
    }
  }
  return fc.letrec<{ expr: Expr }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      ...leaves,
      tie('expr').map((inner) => ({ not: inner }) as Expr),
      fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((items) => ({ and: items }) as Expr),
      fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((items) => ({ or: items }) as Expr),
    ),
  })).expr;
}

/**
 * A weight the engine takes (0, or from 1e-50 to 1e50: smaller and larger ones are refused at
 * build and when a stored weight is first read, test/weight-range and test/stored-weight-range):
 * 0, doubles from 1e-50 to `max` (the smallest ones included: fast-check shrinks toward them) or
 * whole numbers to `maxInteger`.
 */
export function engineWeight(max: number, maxInteger: number): fc.Arbitrary<number> {
  return fc.oneof(fc.constant(0), fc.double({ min: 1e-50, max, noNaN: true }), fc.integer({ min: 0, max: maxInteger }));
}
