// `crosstab table`: R's figures through --format json, every format, flag order and bad flags.
// Spawns dist/cli/main.js: run `npm run build:ts` first.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset } from '../src/index.js';
import { tableStatistics, type TableJson } from '../src/report/index.js';
import { checkRun, figuresFromJson, type Run } from './report/r-check.js';
import { ErrorLedger, datasetKey, fixture, requireBuiltCli, runTable } from './report/support.js';

const ledger = new ErrorLedger();
const runFlags: Record<Exclude<Run, 'population'>, string[]> = {
  linearization: ['--stats', 'all'],
  bonferroni: ['--stats', 'sig', '--correction', 'bonferroni'],
  holm: ['--stats', 'sig', '--correction', 'holm'],
  kish: ['--stats', 'se,moe,sig', '--se', 'kish'],
};

beforeAll(() => requireBuiltCli());
afterAll(() => {
  console.log(`max relative error vs R, CLI --format json (statistic, compared, error):\n${ledger.table()}`);
});

describe.each(fixture.tables.map((table) => [table.id, table] as const))('R table %s through crosstab table --format json', (_id, table) => {
  it.each(Object.keys(runFlags) as Array<keyof typeof runFlags>)('%s figures equal R to 1e-9', async (run) => {
    const args = [
      inject('testDatasets')[datasetKey(table)],
      '--base', table.base,
      '--weight', table.weight,
      ...table.rows.flatMap((row) => ['--row', row.id]),
      ...table.columnVariables.flatMap(({ variable }) => ['--columns', variable]),
      ...runFlags[run],
      '--domain', 'base', // the fixture's design is built on the base's rows
      '--format', 'json',
    ];
    const { code, stdout, stderr } = await runTable(args);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const json = JSON.parse(stdout.toString()) as TableJson;
    expect(json.statistics!.designRespondents).toBe(table.designRespondents);
    checkRun(table, figuresFromJson(json), run, ledger, 'CLI json');
  });
});

describe('crosstab table formats', () => {
  const gss = () => inject('testDatasets').gss;
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-table-cli-out-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const common = () => [gss(), '--base', 'year=2024', '--rows', 'degree', '--row', 'relig=9', '--columns', 'sex', '--column', 'degree=3..4', '--columns', 'race'];

  it('keeps --row/--rows and --column/--columns in command-line order', async () => {
    const { code, stdout } = await runTable([gss(), '--base', 'year=2024', '--row', 'relig=9', '--rows', 'sex', '--row', 'degree=3,4', '--column', '*', '--columns', 'race', '--column', 'sex=2', '--format', 'json']);
    expect(code).toBe(0);
    const json = JSON.parse(stdout.toString()) as TableJson;
    // Each expanded variable ends with its "No answer" entry (2024 has respondents with no sex, no race).
    expect(json.rows.map((row) => row.expr)).toEqual(['relig=9', 'sex=1', 'sex=2', 'sex=NA', 'degree=3,4']);
    expect(json.columns.map((column) => column.expr)).toEqual(['*', 'race=1', 'race=2', 'race=3', 'race=NA', 'sex=2']);
    expect(json.columns.map((column) => column.letter ?? null)).toEqual([null, 'A', 'B', 'C', null, null]);
    expect(json.statistics!.stats).toEqual(['vpct']);
  });

  it('text: labels, percentages, letters, * and ** markers and their legend', async () => {
    const { code, stdout } = await runTable([...common(), '--stats', 'vpct,index,sig']);
    expect(code).toBe(0);
    const text = stdout.toString();
    for (const label of ['GSS\n', 'Sex', 'Race', 'Male', 'Female', 'White', 'Less than high school', 'Graduate', 'relig=9', 'degree=3..4', '(A)', 'vertical %', 'index', 'significance']) {
      expect(text).toContain(label);
    }
    expect(text).toMatch(/\d\.\d% \*\*/);
    expect(text).toMatch(/\d  \*( |$)/m);
    expect(text).toContain('* use with caution: 31–60 respondents; ** very unstable: 30 or fewer');
  });

  it('arrow: IPC file to --out and to a pipe, same figures as the library', async () => {
    const out = join(dir, 'table.arrow');
    const written = await runTable([...common(), '--stats', 'all', '--format', 'arrow', '--out', out]);
    expect(written.code).toBe(0);
    expect(written.stderr).toContain(`wrote ${out}`);
    const piped = await runTable([...common(), '--stats', 'all', '--format', 'arrow']);
    expect(piped.code).toBe(0);
    expect(Buffer.compare(piped.stdout, readFileSync(out))).toBe(0);
    const table = tableFromIPC(readFileSync(out));
    const ds = await openDataset(gss());
    try {
      const result = await ds.table({ base: 'year=2024', rows: [{ variable: 'degree' }, 'relig=9'], columns: [{ variable: 'sex' }, 'degree=3..4', { variable: 'race' }] });
      const statistics = tableStatistics(result, { stats: 'all' });
      expect(table.numRows).toBe(result.weighted.length);
      for (let at = 0; at < table.numRows; at++) {
        const row = table.get(at)!.toJSON();
        expect(row['weighted']).toBe(result.weighted[at]);
        expect(row['respondents']).toBe(result.respondents[at]);
        for (const field of ['columnPct', 'index', 'columnPctSE', 'columnPctMoE', 'designEffect'] as const) {
          const value = statistics[field]![at]!;
          expect(row[field]).toBe(Number.isFinite(value) ? value : null);
        }
        expect(row['letters']).toBe(statistics.letters![at]);
      }
    } finally {
      ds.close();
    }
  });

  it('csv and html', async () => {
    const csv = await runTable([...common(), '--stats', 'vpct,sig', '--format', 'csv']);
    expect(csv.code).toBe(0);
    const lines = csv.stdout.toString().trimEnd().split('\n');
    expect(lines[0]).toBe('row,rowLabel,rowExpr,column,columnLabel,columnExpr,columnLetter,weighted,respondents,sumSqWeights,stability,columnPct,letters');
    // Rows: degree's 5 values and "No answer", relig=9; columns: sex's 2 and "No answer", degree=3..4, race's 3 and "No answer".
    expect(lines.length).toBe(1 + 7 * 8);
    const out = join(dir, 'table.html');
    const html = await runTable([...common(), '--stats', 'all', '--format', 'html', '--out', out]);
    expect(html.code).toBe(0);
    const page = readFileSync(out, 'utf8');
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain('<h1>GSS</h1>');
    expect(page).not.toMatch(/<(script|link)\b|src=|url\(/);
  });
});

describe('crosstab table bad flags', () => {
  const gss = () => inject('testDatasets').gss;
  const base = () => [gss(), '--base', 'year=2024'];
  const cases: Array<[string, () => string[], RegExp]> = [
    ['unknown statistic', () => [...base(), '--rows', 'degree', '--columns', 'sex', '--stats', 'vpct,vpc'], /--stats: unknown statistic "vpc"/],
    ['bad --se', () => [...base(), '--rows', 'degree', '--columns', 'sex', '--se', 'bootstrap'], /--se must be linearization, kish; not "bootstrap"/],
    ['bad --correction', () => [...base(), '--rows', 'degree', '--columns', 'sex', '--correction', 'fdr'], /--correction must be none, bonferroni, holm/],
    ['bad --alpha', () => [...base(), '--rows', 'degree', '--columns', 'sex', '--alpha', '5%'], /--alpha must be a number between 0 and 1/],
    ['bad --format', () => [...base(), '--rows', 'degree', '--columns', 'sex', '--format', 'pdf'], /--format must be text, csv, json, arrow, html, xlsx/],
    ['--weight with --unweighted', () => [...base(), '--rows', 'degree', '--columns', 'sex', '--weight', 'wtssps', '--unweighted'], /--weight and --unweighted/],
    ['no rows', () => [...base(), '--columns', 'sex'], /no rows: give at least one --row EXPR or --rows VARIABLE/],
    ['no columns', () => [...base(), '--rows', 'degree'], /no columns: give at least one --column EXPR or --columns VARIABLE/],
    ['unknown --rows variable', () => [...base(), '--rows', 'degre', '--columns', 'sex'], /--rows "degre": unknown variable "degre"; did you mean "degree"/],
    ['unknown --column value', () => [...base(), '--rows', 'degree', '--column', 'sex=7'], /--column "sex=7": .*7/],
    ['bad --base', () => [gss(), '--base', 'year=', '--rows', 'degree', '--columns', 'sex'], /--base "year=": /],
    ['unknown --weight', () => [...base(), '--rows', 'degree', '--columns', 'sex', '--weight', 'wtss'], /--weight "wtss": must be one of "wtssps"/],
    ['unwritable --out', () => [...base(), '--rows', 'degree', '--columns', 'sex', '--out', '/nonexistent-dir/t.txt'], /--out \/nonexistent-dir\/t.txt: cannot write/],
  ];
  it.each(cases)('%s', async (_name, args, message) => {
    const { code, stdout, stderr } = await runTable(args());
    expect(code, stderr).toBe(1);
    expect(stdout.length).toBe(0);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/unexpected failure|at .*\.js:\d+/);
  });
});
