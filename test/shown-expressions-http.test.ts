// What the service and the CLI show, read back through the service: on random datasets with odd
// names (quotes, spaces, other scripts, keywords, `@`, `..`), numbers in every notation
// (exponents, negatives, 0.1+0.2), texts and codebook labels holding `=`, `,`, `..`, quotes and
// NA, codes named like keywords, each built by `crosstab build` from a CSV and a codebook and
// served over real HTTP with saved audiences (embedded database):
// - every Expression of GET /v1/surveys/{SurveyCode} (values, ranges, blanks, codes and their
//   definitions) run through POST /v1/crosstab selects exactly the respondents and weighted sum
//   of the raw rows for what it claims, and its Respondents are those, rounded or suppressed;
// - every value `crosstab info --json` lists, and its label, written back with valueExpression;
// - every value an unknown_value error suggests ("did you mean") is a value of the variable;
// - every audience GET /v1/audiences lists, by its Reference and by its Expression;
// - every row and column of POST /v1/tables (whole variables, codes, audiences) by its
//   expression, and each cell as the AND of its row's and column's.
// HUNT_SHOWN_RUNS (datasets, default 3) and HUNT_SHOWN_SEED (default 1) for longer hunts.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAccount, addKey, DbAudienceStore, DbKeyStore, DbUsageSink, openDatabase, parseLicences, type Database } from '../src/access/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../src/http/index.js';
import { openDataset, valueExpression, type Dataset } from '../src/index.js';
import type { Expr } from '../src/query/ast.js';
import { toText } from './support/expression-text.js';
import { floatsTellApart } from './support/float-exact.js';
import { cliPath } from './support/paths.js';
import { exprArb } from './support/random-data.js';
import { matches, type ReferenceTable } from './support/reference-engine.js';
import { tempDir } from './http/support.js';
import { newEmbeddedFolder } from './support/embedded-template.js';

const RUNS = Number(process.env['HUNT_SHOWN_RUNS'] ?? 3);
const SEED = Number(process.env['HUNT_SHOWN_SEED'] ?? 1);

const ODD_NAMES = ['two words', 'età', 'a/b', 'a,b', '"quoted"', 'back\\slash', 'AND', 'not', 'NA', 'Or', '*', 'x=y', '(p)', '1e3', '日本', '😀', 'a..b', '@home', 'e1', 'Infinity', '-5', 'all(x)'];
const NUMBERS = ['1e3', '1000', '-1', '-2.5', '0.1', '0.30000000000000004', '0.3', '2.5e-8', '1E3', '-0', '7', '12345678901234567890', '1e21', '5e-324'];
const TEXTS = ['NA', 'a b', 'x,y', '"q"', 'say "hi"', '1..2', '(p)', 'back\\slash', 'é', '06', 'AND', '*', 'a=b', '@x', 'all(x)', '-', 'Female', 'lo..', '..hi'];
const LABELS = ['a=b', 'x,y', '1..2', 'NA', 'say "hi"', 'And, or', 'Two = words', 'Female', '(p)', '@home', '..', 'x = 1, y = 2', "Bachelor's", 'AND', '=SUM(1,2)', '2', '-1', 'all(x)'];
const CODE_NAMES = ['NA', 'AND', 'OR', 'Infinity', 'a@b', 'x:y', 'a..b', 'e1', '_', 'p.1e3', 'BA+', 'F18-34', 'Na', 'and', 'c#1', 'not', 'Not'];
const AUDIENCE_NAMES = ['not', 'and', 'na', '1e3', 'a-b', 'x_1', 'or', 'e1', 'all'];

interface Spec {
  names: [string, string, string];
  numbers: string[];
  texts: string[];
  coded: string[];
  weights: number[];
  valueLabels: Array<[string, string]>;
  textLabels: Array<[string, string]>;
  variableLabels: [string, string, string];
}

const specArb: fc.Arbitrary<Spec> = fc
  .tuple(fc.uniqueArray(fc.constantFrom(...ODD_NAMES), { minLength: 3, maxLength: 3 }), fc.integer({ min: 35, max: 90 }))
  .chain(([names, rows]) =>
    fc.record({
      names: fc.constant(names as [string, string, string]),
      numbers: fc.array(fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 4, arbitrary: fc.constantFrom(...NUMBERS) }), { minLength: rows, maxLength: rows }),
      // The first row holds a value that is not a number, so the column stays text.
      texts: fc.array(fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 4, arbitrary: fc.constantFrom(...TEXTS) }), { minLength: rows, maxLength: rows }).map((texts) => ['a b', ...texts.slice(1)]),
      // A coded numeric variable with value labels (few values, most of them over 30 respondents).
      coded: fc.array(fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 6, arbitrary: fc.constantFrom('1', '2', '-1', '0.5', '1e3') }), { minLength: rows, maxLength: rows }),
      weights: fc.array(fc.oneof(fc.integer({ min: 0, max: 40 }), fc.double({ min: 0.001, max: 1000, noNaN: true })), { minLength: rows, maxLength: rows }),
      valueLabels: fc.array(fc.tuple(fc.constantFrom('1', '2', '-1', '0.5', '1e3'), fc.constantFrom(...LABELS)), { maxLength: 5 }),
      textLabels: fc.array(fc.tuple(fc.constantFrom(...TEXTS), fc.constantFrom(...LABELS)), { maxLength: 4 }),
      variableLabels: fc.tuple(fc.constantFrom(...LABELS), fc.constantFrom(...LABELS), fc.constantFrom(...LABELS)),
    }),
  );

const csvField = (text: string) => (text === '' ? '' : `"${text.replaceAll('"', '""')}"`);

interface Made {
  survey: string;
  path: string;
  table: ReferenceTable;
  codes: Array<{ name: string; expr: Expr }>;
  spec: Spec;
}

let dir: string;
let db: Database;
let server: RunningServer;
let key: string;
const made: Made[] = [];
const datasets: Dataset[] = [];

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', cwd: dir });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

beforeAll(async () => {
  dir = tempDir('crosstab-shown-http-');
  const specs = fc.sample(specArb, { seed: SEED, numRuns: RUNS });
  for (const [i, spec] of specs.entries()) {
    const survey = `ODD${i}`;
    const [numeric, text, coded] = spec.names;
    const columns = { [numeric]: spec.numbers, [text]: spec.texts, [coded]: spec.coded };
    const csv = [[...spec.names, 'w'].map(csvField).join(','), ...spec.weights.map((w, row) => [spec.numbers[row]!, spec.texts[row]!, spec.coded[row]!, String(w)].map(csvField).join(','))].join('\n');
    writeFileSync(join(dir, `${survey}.csv`), `${csv}\n`);
    const numericSet = new Set([coded, ...(floatsTellApart(spec.numbers) ? [numeric] : [])]);
    const table: ReferenceTable = { columns, weights: spec.weights, numeric: numericSet, codes: {} };
    // Codes over the columns, named like keywords, numbers and audiences.
    const codeExprs = fc.sample(exprArb(columns, numericSet), { seed: SEED * 1000 + i, numRuns: 4 });
    // The first dataset has a code named NOT, which an expression can name only in quotes.
    const codeNames = ['NOT', ...fc.sample(fc.uniqueArray(fc.constantFrom(...CODE_NAMES), { minLength: 3, maxLength: 3 }), { seed: SEED * 7 + i, numRuns: 1 })[0]!];
    const codes = (i === 0 ? codeNames : codeNames.slice(1).concat(CODE_NAMES.find((name) => !codeNames.includes(name))!)).map((name, c) => ({ name, expr: codeExprs[c]! }));
    for (const code of codes) table.codes![code.name] = code.expr;
    const labels = (pairs: Array<[string, string]>, values: string[]) => Object.fromEntries(pairs.filter(([value]) => values.includes(value)));
    const codebook = {
      variables: {
        [numeric]: { label: spec.variableLabels[0] },
        [text]: { label: spec.variableLabels[1], values: labels(spec.textLabels, spec.texts) },
        [coded]: { label: spec.variableLabels[2], values: labels(spec.valueLabels, spec.coded) },
      },
      codes: Object.fromEntries(codes.map((code) => [code.name, { expr: toText(code.expr), label: `code ${code.name} = ${toText(code.expr)}` }])),
    };
    writeFileSync(join(dir, `${survey}.codebook.json`), JSON.stringify(codebook));
    const built = cli(['build', `${survey}.csv`, '--weight', 'w', '--survey', survey, '--codebook', `${survey}.codebook.json`, '--out', `${survey}.arrow`, '--quiet']);
    // Every name, value, label and code here is one a codebook and a CSV may hold.
    expect(built.status, `build of ${survey}: ${built.stderr}\n${csv}\n${JSON.stringify(codebook)}`).toBe(0);
    made.push({ survey, path: join(dir, `${survey}.arrow`), table, codes, spec });
  }
  db = await openDatabase(await newEmbeddedFolder(join(dir, 'db')));
  await addAccount(db, 'acme', parseLicences(made.map((m) => m.survey), made.map((m) => `${m.survey}:_ALL_`)));
  key = (await addKey(db, { account: 'acme', name: 'hunt' })).apiKey;
  for (const m of made) datasets.push(await openDataset(m.path));
  const handler = await createCrosstabHandler({ datasets, keys: new DbKeyStore(db, { ttlMs: 0 }), usage: new DbUsageSink(db), audiences: new DbAudienceStore(db) });
  server = await listen(handler, { port: 0 });
}, 120_000);

afterAll(async () => {
  await server?.close();
  for (const dataset of datasets) await dataset.close();
  await db?.close();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'service-engine-authorizer': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Respondents and weighted sum of the raw rows `selected` picks. */
function reference(m: Made, selected: (row: number) => boolean): { respondents: number; weighted: number } {
  let respondents = 0;
  let weighted = 0;
  for (let row = 0; row < m.table.weights.length; row++) {
    if (!selected(row)) continue;
    respondents++;
    weighted += m.table.weights[row]!;
  }
  return { respondents, weighted };
}

const valueIs = (m: Made, variable: string, value: string) => (row: number) => {
  const cell = m.table.columns[variable]![row]!;
  return cell !== '' && (m.table.numeric.has(variable) ? Number(cell) === Number(value) : cell === value);
};

/** POST /v1/crosstab of `expressions` over the whole base: each target's respondents and weighted sum, or the error. */
async function crosstab(m: Made, expressions: string[]): Promise<Array<{ respondents: number; weighted: number }>> {
  const answers: Array<{ respondents: number; weighted: number }> = [];
  for (let i = 0; i < expressions.length; i += 2) {
    const targets = expressions.slice(i, i + 2);
    const answer = await call('POST', '/crosstab', { SurveyCode: m.survey, PopulationBaseCode: '*', TargetCodes: targets });
    expect(answer.status, `${m.survey} ${JSON.stringify(targets)}: ${JSON.stringify(answer.body)}`).toBe(200);
    for (const result of answer.body.Results as Array<{ WgtAud: number; Resps: number }>) answers.push({ respondents: result.Resps, weighted: result.WgtAud });
  }
  return answers;
}

/** Each expression reads back as the respondents and weighted sum `expected` says. */
async function expectSelects(m: Made, cases: Array<{ what: string; expression: string; expected: { respondents: number; weighted: number } }>): Promise<void> {
  const got = await crosstab(m, cases.map((c) => c.expression));
  const wrong = cases.flatMap((c, i) => {
    const answer = got[i]!;
    const close = Math.abs(answer.weighted - c.expected.weighted) <= 1e-9 * Math.max(1, Math.abs(c.expected.weighted));
    return answer.respondents === c.expected.respondents && close ? [] : [{ survey: m.survey, what: c.what, expression: c.expression, got: answer, expected: c.expected }];
  });
  expect(wrong).toEqual([]);
}

const shown = (respondents: number) => (respondents <= 30 ? null : Math.round(respondents / 10) * 10);

describe('every expression the service and the CLI show reads back as the respondents it claims', () => {
  it('built every dataset', () => {
    expect(made.length).toBe(RUNS);
  });

  it('GET /v1/surveys/{SurveyCode}: values, ranges, blanks, codes and definitions', async () => {
    for (const m of made) {
      const catalog = await call('GET', `/surveys/${m.survey}`);
      expect(catalog.status).toBe(200);
      const cases: Array<{ what: string; expression: string; expected: { respondents: number; weighted: number } }> = [];
      for (const variable of catalog.body.Variables as Array<any>) {
        const name: string = variable.Name;
        expect(Object.keys(m.table.columns)).toContain(name);
        for (const value of variable.Values ?? []) {
          const expected = reference(m, valueIs(m, name, value.Value));
          expect(expected.respondents, `${m.survey} ${name}=${value.Value} is listed but no row has it`).toBeGreaterThan(0);
          expect(value.Respondents, `${m.survey} ${value.Expression}`).toBe(shown(expected.respondents));
          cases.push({ what: `value ${JSON.stringify(value.Value)} of ${JSON.stringify(name)}`, expression: value.Expression, expected });
        }
        if (variable.Range) {
          cases.push({ what: `range of ${JSON.stringify(name)}`, expression: variable.Range.Expression, expected: reference(m, (row) => m.table.columns[name]![row] !== '') });
          const within = reference(m, (row) => {
            const cell = m.table.columns[name]![row]!;
            return cell !== '' && Number(cell) >= variable.Range.Min && Number(cell) <= variable.Range.Max;
          });
          expect(within.respondents, `${m.survey} Range Min/Max of ${name}`).toBe(reference(m, (row) => m.table.columns[name]![row] !== '').respondents);
        }
        const blanks = reference(m, (row) => m.table.columns[name]![row] === '');
        if (blanks.respondents > 0) cases.push({ what: `blanks of ${JSON.stringify(name)}`, expression: variable.Missing.Expression, expected: blanks });
        else expect(variable.Missing).toBeUndefined();
      }
      for (const code of catalog.body.Codes as Array<any>) {
        const expr = m.table.codes![code.Name]!;
        const expected = reference(m, (row) => matches(m.table, expr, row));
        cases.push({ what: `code ${code.Name}`, expression: code.Expression, expected }, { what: `definition of ${code.Name}`, expression: code.Definition, expected });
      }
      await expectSelects(m, cases);
    }
  });

  it('crosstab info --json: each value and each value label written back with valueExpression', async () => {
    for (const m of made) {
      const run = cli(['info', m.path, '--json']);
      expect(run.status, run.stderr).toBe(0);
      const info = JSON.parse(run.stdout) as { variables: Array<{ name: string; kind: string; values?: Array<{ value: string; label?: string; respondents: number }> }> };
      const cases: Array<{ what: string; expression: string; expected: { respondents: number; weighted: number } }> = [];
      for (const variable of info.variables) {
        const listed = variable.values ?? [];
        for (const value of listed) {
          const expected = reference(m, valueIs(m, variable.name, value.value));
          expect(value.respondents).toBe(expected.respondents);
          cases.push({ what: `info value ${JSON.stringify(value.value)}`, expression: valueExpression(variable.name, value.value), expected });
          // A label stands for its value unless it is itself a value the variable could hold (a number of a numeric variable, a value of a text one) or another value shares it.
          const label = value.label;
          if (label === undefined) continue;
          const isValue = variable.kind === 'numeric' ? /^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$/.test(label) : listed.some((other) => other.value === label);
          const shared = listed.filter((other) => other.label?.toLowerCase() === label.toLowerCase()).length > 1;
          if (!isValue && !shared) cases.push({ what: `label ${JSON.stringify(label)} of ${JSON.stringify(value.value)}`, expression: valueExpression(variable.name, label), expected });
        }
      }
      await expectSelects(m, cases);
    }
  });

  it('unknown_value and unknown_variable suggestions ("did you mean") are values and variables that read back', async () => {
    for (const m of made) {
      for (const name of Object.keys(m.table.columns)) {
        const absent = m.table.numeric.has(name) ? '4.25' : 'zz-absent';
        const answer = await call('POST', '/crosstab', { SurveyCode: m.survey, PopulationBaseCode: '*', TargetCodes: [valueExpression(name, absent)] });
        expect(answer.status).toBe(400);
        const message: string = answer.body.error.message;
        const suggested = /did you mean (.*)\?$/.exec(message)?.[1];
        if (suggested === undefined) continue;
        const suggestions = [...suggested.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => JSON.parse(`"${match[1]}"`) as string);
        await expectSelects(m, suggestions.map((value) => ({ what: `suggestion ${JSON.stringify(value)} for ${JSON.stringify(name)}`, expression: valueExpression(name, value), expected: reference(m, valueIs(m, name, value)) })));
      }
      // A name one letter off: the variables suggested are the dataset's, written as the engine writes them.
      for (const name of Object.keys(m.table.columns)) {
        const typo = `${name}x`;
        const answer = await call('POST', '/crosstab', { SurveyCode: m.survey, PopulationBaseCode: '*', TargetCodes: [`${JSON.stringify(typo)}=NA`] });
        expect(answer.status).toBe(400);
        const suggested = /did you mean (.*)\?/.exec(answer.body.error.message as string)?.[1];
        for (const match of suggested === undefined ? [] : suggested.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
          const variable = JSON.parse(`"${match[1]}"`) as string;
          expect(Object.keys(m.table.columns), `suggested ${variable} for ${typo}`).toContain(variable);
        }
      }
    }
  });

  it('GET /v1/audiences: each audience by its Reference and by its Expression; POST /v1/tables rows, columns and cells by their expressions', async () => {
    for (const m of made) {
      const columns = m.table.columns;
      const exprs = fc.sample(exprArb(columns, m.table.numeric), { seed: SEED * 31 + made.indexOf(m), numRuns: 3 });
      const names = fc.sample(fc.uniqueArray(fc.constantFrom(...AUDIENCE_NAMES), { minLength: 3, maxLength: 3 }), { seed: SEED * 13 + made.indexOf(m), numRuns: 1 })[0]!;
      const audiences = new Map<string, Expr>();
      for (const [i, expr] of exprs.entries()) {
        // The last audience names the one before it and a code.
        const text = i === 2 ? `@${names[1]} OR ${toText({ code: m.codes[0]!.name })}` : toText(expr);
        const tree: Expr = i === 2 ? { or: [audiences.get(names[1]!)!, { code: m.codes[0]!.name }] } : expr;
        const saved = await call('POST', '/audiences', { SurveyCode: m.survey, Name: names[i], Expression: text, Label: `aud = ${names[i]}, "x"`, Shared: true });
        expect(saved.status, JSON.stringify(saved.body)).toBe(201);
        audiences.set(names[i]!, tree);
      }
      const listing = await call('GET', `/audiences?SurveyCode=${m.survey}`);
      expect(listing.status, JSON.stringify(listing.body)).toBe(200);
      const listed = (listing.body.Audiences as Array<{ Name: string; Reference: string; Expression: string; SurveyCode: string }>).filter((audience) => audience.SurveyCode === m.survey);
      expect(listed.map((audience) => audience.Name).sort()).toEqual([...names].sort());
      await expectSelects(
        m,
        listed.flatMap((audience) => {
          const expected = reference(m, (row) => matches(m.table, audiences.get(audience.Name)!, row));
          return [
            { what: `audience ${audience.Name} by reference`, expression: audience.Reference, expected },
            { what: `audience ${audience.Name} by expression`, expression: audience.Expression, expected },
          ];
        }),
      );
      // A table of every variable by the codes and audiences: each entry and cell by its expression.
      const rows = [...Object.keys(columns).map((variable) => ({ Variable: variable })), ...m.codes.map((code) => toText({ code: code.name }))];
      const tableColumns = ['*', ...listed.map((audience) => audience.Reference), { Expression: `NOT ${listed[0]!.Reference}`, Label: 'not = "that"' }];
      const answer = await call('POST', '/tables', { SurveyCode: m.survey, PopulationBaseCode: '*', Rows: rows, Columns: tableColumns });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const table = answer.body.Table as { rows: Array<{ expr: string; label: string }>; columns: Array<{ expr: string }>; cells: Array<Array<{ weighted: number; respondents: number }>>; rowTotals: Array<{ weighted: number; respondents: number }> };
      const { rows: tableRows, columns: tableCols } = table;
      const entries = [...tableRows, ...tableCols].map((entry) => entry.expr);
      const answers = await crosstab(m, entries);
      const wrong: unknown[] = [];
      tableRows.forEach((row, r) => {
        if (answers[r]!.respondents !== table.rowTotals[r]!.respondents) wrong.push({ row: row.expr, total: table.rowTotals[r], read: answers[r] });
      });
      // Cells: the AND of the row's and the column's expressions.
      const cellTexts: string[] = [];
      tableRows.forEach((row) => tableCols.forEach((column) => cellTexts.push(`(${row.expr}) AND (${column.expr})`)));
      const cells = await crosstab(m, cellTexts);
      tableRows.forEach((row, r) =>
        tableCols.forEach((column, c) => {
          const cell = table.cells[r]![c]!;
          const read = cells[r * tableCols.length + c]!;
          const close = Math.abs(read.weighted - cell.weighted) <= 1e-9 * Math.max(1, Math.abs(cell.weighted));
          if (read.respondents !== cell.respondents || !close) wrong.push({ row: row.expr, column: column.expr, cell, read });
        }),
      );
      expect(wrong, m.survey).toEqual([]);
    }
  }, 120_000);
});
