// What the engine prints, it must read: on random datasets with odd column names (spaces,
// other scripts, punctuation, quotes, keywords) and numbers in every notation a double is
// written in (exponents, tiny, huge, negative, long decimals), every expression, value, range
// and suggestion the engine shows is read back as the same respondents as the reference
// engine finds for the value it stands for. A column holding two different numbers that read
// as the same 64-bit float (`0.1` and `0.1000000000000000000001`, `0` and `1e-400`) or one
// beyond the float range (`1e400`) is text: its values answer exactly as written, never for
// the respondents of the float's number. Numbers written with more digits than a float holds
// (`0.33333333333333331`, as R writes them) are otherwise numeric, each standing for its float.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildDataset, openDataset, valueExpression, type CrosstabError, type Dataset } from '../src/index.js';
import { numberText } from '../src/text/expression-text.js';
import { exprArb } from './support/random-data.js';
import { toText } from './support/expression-text.js';
import { floatsTellApart } from './support/float-exact.js';
import { makeDataset } from './support/make-dataset.js';
import { referenceCell, type ReferenceTable } from './support/reference-engine.js';

const ODD_NAMES = ['two words', 'età', 'a/b', 'a,b', '"quoted"', 'back\\slash', 'AND', 'not', 'NA', '*', 'x=y', '(p)', '1e3', '日本', '😀', 'a..b', ' lead', 'tab\there', 'Or'];
const nameArb = fc.oneof(fc.constantFrom(...ODD_NAMES), fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }));

/** Numbers as a file or a double's text form writes them. */
const numberArb = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.double({ min: -1e-5, max: 1e-5, noNaN: true }).map(String),
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.constantFrom('1e-7', '1E3', '2.5e+21', '-0', '0', '0.30000000000000004', '0.1000000000000000000001', '-2.5e-8', '5e-324', '1e-400', '1.7976931348623157e308', '1e400', '-2e999'),
  // As R (%.17g), numpy (%.18e) and SAS write them: more digits than a float holds.
  fc.constantFrom('0.33333333333333331', '0.10000000000000001', '0.1', '8.152877200599999924e+04', '81528.772005999999', '81528.772006', '12345678901234567890', '1.2345678901234567e+19'),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => value.toPrecision(17)),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => value.toExponential(18)),
);
const textArb = fc.oneof(
  fc.constantFrom('NA', 'a b', 'x,y', '"q"', 'say "hi"', '1..2', '(p)', 'back\\slash', 'é', '06', ' lead', 'AND', '*', 'Female'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }),
);

const datasetArb = fc
  .tuple(fc.uniqueArray(nameArb, { minLength: 2, maxLength: 2, selector: (name) => name }), fc.integer({ min: 1, max: 30 }))
  .filter(([names]) => !names.includes('w'))
  .chain(([names, rows]) =>
    fc.record({
      names: fc.constant(names as [string, string]),
      // The first row holds a value that is not a number, so the text column stays text.
      numbers: fc.array(fc.oneof(fc.constant(''), numberArb), { minLength: rows, maxLength: rows }),
      texts: fc.array(fc.oneof(fc.constant(''), textArb), { minLength: rows, maxLength: rows }).map((texts) => ['a b', ...texts.slice(1)]),
      weights: fc.array(fc.integer({ min: 0, max: 50 }), { minLength: rows, maxLength: rows }),
    }),
  );

async function respondents(ds: Dataset, expr: string): Promise<number> {
  return (await ds.crosstab({ base: '*', targets: [expr] })).targets[0]!.respondents;
}

describe('expressions the engine prints are read back as the same respondents', () => {
  it('table entries, info values and ranges, and suggestions, on odd names and numbers', async () => {
    await fc.assert(
      fc.asyncProperty(datasetArb, fc.double({ noNaN: true, noDefaultInfinity: true }), async ({ names, numbers, texts, weights }, absent) => {
        const [numeric, text] = names;
        const columns = { [numeric]: numbers, [text]: texts };
        const exact = floatsTellApart(numbers);
        const table: ReferenceTable = { columns, weights, numeric: new Set(exact ? [numeric] : []) };
        const ds = await makeDataset(columns, weights);
        try {
          const count = (expr: Parameters<typeof referenceCell>[2]) => referenceCell(table, { all: true }, expr).respondents;
          for (const variable of ds.info.variables) {
            expect(variable.kind).toBe(variable.name === numeric && exact ? 'numeric' : 'text');
            // A whole variable as table rows: each entry's expression and its cells.
            const result = await ds.table({ base: '*', rows: [{ variable: variable.name }], columns: ['*'] });
            for (const [r, entry] of result.rows.entries()) {
              // The "No answer" entry (VAR=NA) is there exactly when the variable has blanks.
              const expected = entry.missing ? count({ var: variable.name, missing: true }) : count({ var: variable.name, in: [entry.value!] });
              expect(await respondents(ds, entry.expr)).toBe(expected);
              expect(result.rowTotals[r]!.respondents).toBe(expected);
              if (entry.missing) {
                expect(expected).toBeGreaterThan(0);
                continue;
              }
              // An unlabelled entry's label is its value, as info shows it.
              expect(await respondents(ds, valueExpression(variable.name, entry.label))).toBe(expected);
            }
            expect(result.rows.some((entry) => entry.missing)).toBe(count({ var: variable.name, missing: true }) > 0);
            // The range `crosstab info` prints for a numeric variable covers every answer.
            if (variable.kind === 'numeric') {
              const range = toText({ var: variable.name, min: numberText(variable.min!), max: numberText(variable.max!) });
              expect(await respondents(ds, range)).toBe(count({ not: { var: variable.name, missing: true } }));
            }
            expect(await respondents(ds, toText({ var: variable.name, missing: true }))).toBe(count({ var: variable.name, missing: true }));
          }
          // A number no respondent has: the values suggested instead are read back as themselves.
          if (!numbers.some((value) => value !== '' && Number(value) === absent)) {
            const error = await ds.crosstab({ base: '*', targets: [valueExpression(numeric, String(absent))] }).then(
              () => undefined,
              (caught: CrosstabError) => caught,
            );
            if (numbers.some((value) => value !== '')) {
              expect(error?.code).toBe('unknown_value');
              for (const suggestion of error!.details.suggestions ?? []) {
                expect(await respondents(ds, valueExpression(numeric, suggestion))).toBe(count({ var: numeric, in: [suggestion] }));
              }
            }
          }
        } finally {
          ds.close();
        }
      }),
      { numRuns: 120 },
    );
  });

  it('random expressions over odd names, written by the test\'s own printer, match the reference', async () => {
    await fc.assert(
      fc.asyncProperty(
        datasetArb.chain((data) => {
          const columns = { [data.names[0]]: data.numbers, [data.names[1]]: data.texts };
          const exact = floatsTellApart(data.numbers);
          return fc.tuple(fc.constant(data), fc.array(exprArb(columns, new Set(exact ? [data.names[0]] : [])), { minLength: 1, maxLength: 4 }));
        }),
        async ([{ names, numbers, texts, weights }, targets]) => {
          const columns = { [names[0]]: numbers, [names[1]]: texts };
          const exact = floatsTellApart(numbers);
          const table: ReferenceTable = { columns, weights, numeric: new Set(exact ? [names[0]] : []) };
          const ds = await makeDataset(columns, weights);
          try {
            const result = await ds.crosstab({ base: '*', targets: targets.map(toText) });
            targets.forEach((target, i) => expect(result.targets[i]!.respondents).toBe(referenceCell(table, { all: true }, target).respondents));
          } finally {
            ds.close();
          }
        },
      ),
      { numRuns: 80 },
    );
  });
});

describe('doubles of an Arrow file, from the smallest to the largest', () => {
  it('each value of a table of the whole variable, and the info range, read back as its respondents', async () => {
    const x = [1e-7, 2, 1e21, -0, 0.1 + 0.2, 5e-324, 1.7976931348623157e308, -1.5e-300, 123456789.123456789, 1e-7, 2];
    const dir = mkdtempSync(join(tmpdir(), 'printed-arrow-'));
    const input = join(dir, 'doubles.arrow');
    writeFileSync(input, tableToIPC(tableFromArrays({ x: Float64Array.from(x), w: Float64Array.from(x, () => 1) }), 'file'));
    const out = join(dir, 'doubles-built.arrow');
    await buildDataset(input, { weights: ['w'], survey: 'T', out });
    const ds = await openDataset(out);
    try {
      const result = await ds.table({ base: '*', rows: [{ variable: 'x' }], columns: ['*'] });
      expect(result.rows).toHaveLength(new Set(x).size);
      for (const [r, entry] of result.rows.entries()) {
        const expected = x.filter((value) => value === Number(entry.value)).length;
        expect(expected, entry.expr).toBeGreaterThan(0);
        expect(result.rowTotals[r]!.respondents, entry.expr).toBe(expected);
        expect(await respondents(ds, entry.expr), entry.expr).toBe(expected);
      }
      const variable = ds.info.variables.find((candidate) => candidate.name === 'x')!;
      expect(await respondents(ds, `x=${variable.min}..${variable.max}`)).toBe(x.length);
    } finally {
      ds.close();
    }
  });
});
