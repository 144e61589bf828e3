// Variables and codes named like the grammar's words: AND, OR, NOT in every case (a bare
// `not` or `NOT` is the operator, `Not` is a name), NA (a value word), all and none (value
// forms after "="). Every place that prints such a name must print it so that it parses back
// to the same respondents: the expressions of table() rows and columns (and so the table
// JSON), the tab book's rows and columns, the codes' definitions and names as info lists
// them, `crosstab info`'s tables, the catalog of GET /surveys/{SurveyCode}, and the "did you
// mean" of an unknown name.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset, tabbook, writeTabbook, type Dataset } from '../src/index.js';
import { surveyDetail } from '../src/http/survey-catalog.js';
import { nameText } from '../src/text/expression-text.js';
import { cliPath } from './support/paths.js';
import { rejection } from './support/rejection.js';
import { readWorkbook } from './support/xlsx-book.js';

const KEYWORDS = ['and', 'AND', 'And', 'or', 'OR', 'Or', 'not', 'NOT', 'Not', 'NA', 'na', 'Na', 'all', 'ALL', 'none', 'NONE'];
const ROWS = 240;
/** Respondent i's answer to variable k: 1 to 3, or blank. */
const answer = (i: number, k: number): string => ((i * 7 + k * 5) % 11 === 0 ? '' : String(((i + k) % 3) + 1));

describe('names that are words of the grammar', () => {
  let dir: string;
  let ds: Dataset;
  /** Respondents holding `value` (undefined: a blank) for the variable named `name`. */
  const count = (name: string, value?: string) => Array.from({ length: ROWS }, (_, i) => answer(i, KEYWORDS.indexOf(name))).filter((a) => (value === undefined ? a === '' : a === value)).length;
  /** Respondents of an expression, as the engine reads it. */
  const respondents = async (expr: string) => (await ds.table({ base: expr, rows: ['*'], columns: ['*'], weight: null })).total.respondents;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'crosstab-keywords-'));
    const lines = [[...KEYWORDS, 'w'].join(',')];
    for (let i = 0; i < ROWS; i++) lines.push([...KEYWORDS.map((_, k) => answer(i, k)), String(1 + (i % 4))].join(','));
    writeFileSync(join(dir, 'kw.csv'), `${lines.join('\n')}\n`);
    // A code named like each word, each selecting value 1 of the next word's variable.
    const codes = Object.fromEntries(KEYWORDS.map((name, k) => [name, { expr: `${nameText(KEYWORDS[(k + 1) % KEYWORDS.length]!)}=1`, label: `code ${name}` }]));
    writeFileSync(join(dir, 'kw.codebook.json'), JSON.stringify({ codes, variables: { not: { label: 'Negation', values: { '1': 'NOT', '2': 'and', '3': 'NA' } } } }));
    await buildDataset(join(dir, 'kw.csv'), { weights: ['w'], survey: 'KW', codebook: join(dir, 'kw.codebook.json'), out: join(dir, 'kw.arrow'), threads: 0 });
    ds = await openDataset(join(dir, 'kw.arrow'));
  });
  afterAll(async () => {
    await ds?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('table() rows and columns of every such variable read back as its values, "No answer" and codes', async () => {
    const result = await ds.table({ base: '*', rows: KEYWORDS.map((variable) => ({ variable })), columns: KEYWORDS.slice(0, 3).map((variable) => ({ variable })), weight: null });
    expect(result.rows).toHaveLength(KEYWORDS.length * 4);
    for (const entry of [...result.rows, ...result.columns]) {
      expect(await respondents(entry.expr), entry.expr).toBe(count(entry.variable!, entry.missing ? undefined : entry.value));
    }
    // A code by its printed name (bare where the grammar allows it: `Not`, `And`) is its definition.
    for (const code of ds.info.codes) expect(await respondents(nameText(code.name)), nameText(code.name)).toBe(await respondents(code.expr));
    expect(ds.info.codes.map((code) => code.name)).toEqual(expect.arrayContaining(KEYWORDS));
  });

  it('the tab book\'s rows and banner columns read back', async () => {
    const book = await tabbook(ds, { banner: ['NOT', 'and', 'Or', '"not"=1'], stubs: ['not', 'OR', 'NA', 'all'], stats: ['vpct'], weight: null });
    for (const table of book.tables) {
      for (const entry of table.result.rows) expect(await respondents(entry.expr), entry.expr).toBe(count(entry.variable!, entry.missing ? undefined : entry.value));
    }
    for (const entry of book.banner) expect(await respondents(entry.expr), entry.expr).toBe(entry.variable === undefined ? count('not', '1') : count(entry.variable, entry.missing ? undefined : entry.value));
    // The index and the titles name each variable as an expression reads it: quoted where bare it would be a word of the grammar.
    await writeTabbook(book, join(dir, 'book.xlsx'));
    const workbook = await readWorkbook(join(dir, 'book.xlsx'));
    const sheets = new Map<string, string[][]>();
    workbook.eachSheet((sheet) => {
      const rows: string[][] = [];
      sheet.eachRow({ includeEmpty: true }, (row) => rows.push(Array.from(((row.values ?? []) as unknown[]).slice(1), (cell) => (cell === null || cell === undefined ? '' : String(cell)))));
      sheets.set(sheet.name, rows);
    });
    const index = sheets.get('Index')!;
    const from = index.findIndex((row) => row[0] === 'Banner:');
    const banner = index.slice(from, index.findIndex((row, i) => i > from && (row[1] ?? '') === '')).map((row) => row[1]);
    expect(banner).toEqual(['Total', '"NOT"', '"and"', '"Or"', '"not"=1']);
    expect(index.filter((row) => /^Table \d/.test(row[0]!)).map((row) => row[1])).toEqual(['"not"', '"OR"', 'NA', 'all']);
    for (const name of ['"not"', '"OR"', 'NA', 'all']) expect(await respondents(`${name}=1`), name).toBe(count(JSON.parse(name.startsWith('"') ? name : `"${name}"`) as string, '1'));
    const titles = [...sheets.values()].slice(1).map((rows) => String(rows[0]![0]));
    expect(titles).toEqual(['Table 1: Negation ("not")', 'Table 2: "OR"', 'Table 3: NA', 'Table 4: all']);
  });

  it('every Expression and Definition of the catalog reads back', async () => {
    const detail = surveyDetail({ info: ds.info, groupsOf: () => ['default'] }, ['default']);
    expect(detail.Variables.map((variable) => variable.Name)).toEqual(KEYWORDS);
    for (const variable of detail.Variables) {
      for (const value of variable.Values ?? []) expect(await respondents(value.Expression), value.Expression).toBe(count(variable.Name, value.Value));
      if (variable.Missing) expect(await respondents(variable.Missing.Expression), variable.Missing.Expression).toBe(count(variable.Name));
    }
    for (const code of detail.Codes) {
      expect(await respondents(code.Expression), code.Expression).toBe(await respondents(code.Definition!));
      const next = KEYWORDS[(KEYWORDS.indexOf(code.Name) + 1) % KEYWORDS.length]!;
      expect(await respondents(code.Definition!), code.Definition).toBe(count(next, '1'));
    }
  });

  it('crosstab info names every such variable and code so that it reads back', async () => {
    const text = execFileSync(process.execPath, [cliPath, 'info', join(dir, 'kw.arrow')], { encoding: 'utf8' });
    /** The rows of the text table whose header starts with `first`, split on runs of two spaces or more. */
    const table = (first: string): string[][] => {
      const lines = text.split('\n');
      const from = lines.findIndex((line) => line.startsWith(`${first} `));
      const rows: string[][] = [];
      for (const line of lines.slice(from + 2)) {
        if (line.trim() === '') break;
        rows.push(line.trim().split(/ {2,}/));
      }
      return rows;
    };
    const variables = table('variable');
    expect(variables).toHaveLength(KEYWORDS.length);
    for (const [printed] of variables) {
      const name = JSON.parse(printed!.startsWith('"') ? printed! : `"${printed}"`) as string;
      expect(await respondents(`${printed}=1`), printed).toBe(count(name, '1'));
      expect(await respondents(`${printed}=NA`), printed).toBe(count(name));
    }
    const codes = table('code');
    expect(codes).toHaveLength(KEYWORDS.length);
    for (const [printed, , expression] of codes) {
      const name = JSON.parse(printed!.startsWith('"') ? printed! : `"${printed}"`) as string;
      const next = KEYWORDS[(KEYWORDS.indexOf(name) + 1) % KEYWORDS.length]!;
      expect(await respondents(expression!), expression).toBe(count(next, '1'));
      expect(await respondents(printed!), printed).toBe(count(next, '1'));
    }
  });

  it('"did you mean" names each such variable so that it reads back', async () => {
    for (const typo of ['nott=1', 'ANDD=1', 'Orr=1', 'NAA=1', 'alll=1', 'nonee=1']) {
      const error = await rejection(ds.table({ base: typo, rows: ['*'], columns: ['*'] }));
      expect(error.code, typo).toBe('unknown_variable');
      const named = [...error.message.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => match[0]).slice(1);
      expect(named.length, error.message).toBeGreaterThan(0);
      for (const name of named) {
        const variable = JSON.parse(name) as string;
        expect(await respondents(`${name}=2`), `${name} from ${error.message}`).toBe(count(variable, '2'));
      }
    }
  });
});
