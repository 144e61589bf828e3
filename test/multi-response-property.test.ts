// Random delimited sets (odd names and values: spaces, commas, quotes, NA, "..", keywords,
// numbers) built with `multi` and queried with any-of, all(), none(), NA and NOT: every
// count and weighted sum against a plain pass over the sets the test wrote.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset } from '../src/index.js';
import type { Expr } from '../src/query/ast.js';
import { toText } from './support/expression-text.js';

const dir = mkdtempSync(join(tmpdir(), 'multi-prop-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const POOL = ['1', '2', '10', '-3', '1e3', 'New York', 'a,b', 'say "hi"', 'NA', 'x..y', '(p)', 'ü', 'AND', 'back\\slash', 'all'];
const NAMES = ['brands', 'brand list', 'q"1"', 'NOT', 'x.y:z'];

interface Respondent {
  /** undefined: no answer (empty cell). */
  set: string[] | undefined;
  weight: number;
}

const csvCell = (text: string) => (/[",\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text);

/** Whether a respondent is selected by a term over the multi-response variable `name`. */
function holds(expr: Expr, respondent: Respondent, name: string, numeric: boolean): boolean {
  if ('and' in expr) return expr.and.every((item) => holds(item, respondent, name, numeric));
  if ('or' in expr) return expr.or.some((item) => holds(item, respondent, name, numeric));
  if ('not' in expr) return !holds(expr.not, respondent, name, numeric);
  if ('all' in expr) return true;
  if (!('var' in expr) || expr.var !== name) throw new Error('unexpected term');
  const { set } = respondent;
  if ('missing' in expr) return set === undefined;
  if (set === undefined) return false;
  const has = (value: string) => set.some((held) => (numeric ? Number(held) === Number(value) : held === value));
  if ('in' in expr) return expr.in.some(has);
  if ('every' in expr) return expr.every.every(has);
  if ('none' in expr) return !expr.none.some(has);
  throw new Error('unexpected term');
}

const termArb = (name: string, universe: string[]): fc.Arbitrary<Expr> => {
  const values = fc.subarray(universe, { minLength: 1, maxLength: Math.min(3, universe.length) });
  const leaf = fc.oneof(
    values.map((list): Expr => ({ var: name, in: list })),
    values.map((list): Expr => ({ var: name, every: list })),
    values.map((list): Expr => ({ var: name, none: list })),
    fc.constant<Expr>({ var: name, missing: true }),
  );
  return fc.oneof(leaf, leaf.map((item): Expr => ({ not: item })), fc.tuple(leaf, leaf).map(([a, b]): Expr => ({ and: [a, b] })), fc.tuple(leaf, leaf).map(([a, b]): Expr => ({ or: [a, b] })));
};

const caseArb = fc.record({ name: fc.constantFrom(...NAMES), universe: fc.subarray(POOL, { minLength: 1, maxLength: 6 }) }).chain(({ name, universe }) =>
  fc.record({
    name: fc.constant(name),
    universe: fc.constant(universe),
    respondents: fc.array(
      fc.record({ set: fc.option(fc.subarray(universe), { nil: undefined, freq: 6 }), weight: fc.integer({ min: 1, max: 4000 }).map((w) => w / 8) }),
      { minLength: 1, maxLength: 60 },
    ),
    terms: fc.array(termArb(name, universe), { minLength: 1, maxLength: 6 }),
  }),
);

let run = 0;
describe('multi-response variables on random sets', () => {
  it('match a plain pass over the sets', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ name, universe, respondents, terms }) => {
        const csv = join(dir, `sets-${run}.csv`);
        const out = join(dir, `sets-${run++}.arrow`);
        // A set with no values is written as "|" (an answer, none of the values); no answer as an empty cell.
        const lines = [`w,${csvCell(name)}`, ...respondents.map(({ set, weight }) => `${weight},${set === undefined ? '' : csvCell(set.length === 0 ? '|' : set.join('|'))}`)];
        writeFileSync(csv, `${lines.join('\n')}\n`);
        await buildDataset(csv, { weights: ['w'], survey: 'PROP', out, multi: [{ column: name, delimiter: '|' }], threads: 0 });
        const ds = await openDataset(out);
        try {
          const variable = ds.info.variables.find((v) => v.name === name)!;
          expect(variable.kind).toBe('multi');
          const numeric = variable.multi!.numeric;
          const used = new Set(respondents.flatMap((r) => r.set ?? []));
          // A value no respondent holds is not a value of the variable: leave such terms out.
          const known = (expr: Expr): boolean =>
            'and' in expr ? expr.and.every(known) : 'or' in expr ? expr.or.every(known) : 'not' in expr ? known(expr.not) : !('var' in expr) || 'missing' in expr || ('in' in expr ? expr.in : 'every' in expr ? expr.every : 'none' in expr ? expr.none : []).every((value) => used.has(value));
          const usable = terms.filter(known);
          if (usable.length === 0) return;
          const result = await ds.crosstab({ base: '*', targets: usable.map(toText) });
          usable.forEach((term, i) => {
            const selected = respondents.filter((respondent) => holds(term, respondent, name, numeric));
            const weighted = selected.reduce((sum, r) => sum + r.weight, 0);
            expect({ term: toText(term), respondents: result.targets[i]!.respondents, weighted: result.targets[i]!.weighted }).toEqual({ term: toText(term), respondents: selected.length, weighted });
          });
          expect(variable.values!.map((v) => v.value).sort()).toEqual([...used].sort());
        } finally {
          ds.close();
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
