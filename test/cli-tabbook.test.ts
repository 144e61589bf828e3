// `crosstab tabbook` and `crosstab table --format xlsx`: the workbooks, read back with
// exceljs's reader, hold what `crosstab table --format json` prints for the same spec; bad
// flags are named; LibreOffice opens a book and prints it to PDF and PNG.
// Spawns dist/cli/main.js: run `npm run build:ts` first.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TableJson } from '../src/report/index.js';
import { requireBuiltCli, runTable } from './report/support.js';
import { cliPath } from './support/paths.js';
import { findRow, readWorkbook, valueAt, type Sheet } from './support/xlsx-book.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-tabbook-cli-'));
const gss = () => inject('testDatasets').gss;
beforeAll(() => requireBuiltCli());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function crosstab(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

async function tableJson(args: string[]): Promise<TableJson> {
  const { code, stdout, stderr } = await runTable([...args, '--format', 'json']);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return JSON.parse(stdout.toString()) as TableJson;
}

/** The sheet's table from its "Base" row on equals the JSON table: labels, counts, vertical %, letters. */
/** `headed`: a single table, whose row variables each start with a heading line (a tab book's table, titled by its stub, has none). */
function expectSheetEqualsJson(sheet: Sheet, json: TableJson, headed: boolean): void {
  const width = json.columns.length;
  const header = findRow(sheet, 'Base') - (json.statistics?.stats.includes('sig') ? 3 : 2);
  json.columns.forEach((column, c) => {
    expect(valueAt(sheet, header + 1, 4 + c)).toBe(column.label);
    if (column.letter) expect(valueAt(sheet, header + 2, 4 + c)).toBe(`(${column.letter})`);
  });
  let row = findRow(sheet, 'Base');
  expect(valueAt(sheet, row, 3)).toBe(json.total.weighted / json.units);
  json.columnTotals.forEach((cell, c) => expect([valueAt(sheet, row, 4 + c), valueAt(sheet, row + 1, 4 + c)]).toEqual([cell.weighted / json.units, cell.respondents]));
  row += 2;
  json.rows.forEach((entry, r) => {
    // A heading line (in A only) where a row variable's entries start.
    if (headed && entry.variable !== undefined && entry.variable !== json.rows[r - 1]?.variable) {
      expect(String(valueAt(sheet, row, 1) ?? '')).not.toBe('');
      expect(Array.from({ length: width + 2 }, (_, k) => valueAt(sheet, row, 2 + k))).toEqual(Array.from({ length: width + 2 }, () => null));
      row++;
    }
    expect(valueAt(sheet, row, 1)).toBe(entry.label);
    expect([valueAt(sheet, row, 3), valueAt(sheet, row + 1, 3)]).toEqual([json.rowTotals[r]!.weighted / json.units, json.rowTotals[r]!.respondents]);
    for (let c = 0; c < width; c++) {
      const cell = json.cells[r]![c]!;
      expect(valueAt(sheet, row, 4 + c)).toBe(cell.weighted / json.units);
      expect(valueAt(sheet, row + 1, 4 + c)).toBe(cell.respondents);
      expect(valueAt(sheet, row + 2, 2)).toBe('Vertical %');
      expect(valueAt(sheet, row + 2, 4 + c)).toBe(cell.columnPct ?? '–');
      expect(sheet.getRow(row + 2).getCell(4 + c).numFmt ?? '').toMatch(cell.columnPct === null ? /^$|^General$/ : /^0\.0%/);
      expect(valueAt(sheet, row + 3, 2)).toBe('Significance');
      expect(valueAt(sheet, row + 3, 4 + c) ?? '').toBe(cell.letters);
    }
    row += 4;
  });
}

describe('crosstab tabbook', () => {
  it('writes every stub table as crosstab table computes it, with an index sheet', async () => {
    const out = join(dir, 'book.xlsx');
    const { code, stderr } = await crosstab(['tabbook', gss(), '--banner', 'sex,race,degree', '--stubs', 'relig,fefam', '--base', 'year=2024', '--out', out]);
    expect(stderr).toBe(`wrote ${out} (xlsx, sheets, 2 tables)\n`);
    expect(code).toBe(0);
    const workbook = await readWorkbook(out);
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['Index', 'T1 relig', 'T2 fefam']);
    for (const [i, stub] of ['relig', 'fefam'].entries()) {
      // The pool, as tabbook uses: the same plan sums in the same order, to the last bit.
      const json = await tableJson([gss(), '--execution', 'pool', '--base', 'year=2024', '--rows', stub, '--columns', 'sex', '--columns', 'race', '--columns', 'degree', '--stats', 'vpct,sig']);
      expectSheetEqualsJson(workbook.worksheets[i + 1]!, json, false);
    }
  });

  it('takes expressions in --banner (a comma in parentheses stays in its item) and --column-group, with the letters crosstab table gives', async () => {
    const out = join(dir, 'expressions.json');
    const banner = 'age=18..44,age=40..,(degree=3,4),sex';
    const { code, stderr } = await crosstab(['tabbook', gss(), '--banner', banner, '--column-group', '0,1', '--stubs', 'polviews', '--base', 'year=2024', '--out', out]);
    expect(stderr).toBe(`wrote ${out} (json, 1 tables)\n`);
    expect(code).toBe(0);
    const book = JSON.parse(readFileSync(out, 'utf8')) as { tables: Array<{ table: TableJson }> };
    const json = await tableJson([gss(), '--execution', 'pool', '--base', 'year=2024', '--rows', 'polviews', '--column', 'age=18..44', '--column', 'age=40..', '--column', '(degree=3,4)', '--columns', 'sex', '--column-group', '0,1', '--stats', 'vpct,sig']);
    expect(book.tables[0]!.table).toEqual(json);
    expect(json.columns.slice(0, 3).map((column) => column.letter ?? '')).toEqual(['A', 'B', '']);
    const refused = await crosstab(['tabbook', gss(), '--banner', 'sex,agee=18..44', '--stubs', 'polviews', '--out', join(dir, 'refused.json')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--banner: .*unknown variable "agee"/);
    const group = await crosstab(['tabbook', gss(), '--banner', 'age=18..44', '--column-group', '0,x', '--stubs', 'polviews', '--out', join(dir, 'refused.json')]);
    expect(group.stderr).toContain('--column-group "0,x": "x" is not a column index');
  });

  it('makes the column-label row tall enough for its longest wrapped label, so that it stays under the banner line', async () => {
    const out = join(dir, 'tall.xlsx');
    const { code } = await crosstab(['tabbook', gss(), '--banner', 'sex,degree', '--stubs', 'relig', '--base', 'year=2024', '--out', out]);
    expect(code).toBe(0);
    const sheet = (await readWorkbook(out)).worksheets[1]!;
    const base = findRow(sheet, 'Base');
    // Banner, column labels, letters above the base rows; "Associate/junior college" wraps to three lines of 15 points in a 12-character column.
    const labels = sheet.getRow(base - 2);
    expect(labels.values).toContain('Associate/junior college');
    expect(labels.height).toBeGreaterThanOrEqual(45);
    expect(sheet.getRow(base - 3).height ?? 15).toBeLessThan(30);
  });

  it.each([
    ['an unknown stub', ['--banner', 'sex', '--stubs', 'degree,relgi'], '--stubs', /unknown variable "relgi"; did you mean "relig"/],
    ['an empty banner', ['--banner', '', '--stubs', 'degree'], '--banner', /--banner must be a comma list/],
    ['a bad --layout', ['--banner', 'sex', '--stubs', 'degree', '--layout', 'wide'], '--layout', /--layout must be sheets, long; not "wide"/],
    ['a bad --missing', ['--banner', 'sex', '--stubs', 'degree', '--missing', 'maybe'], '--missing', /--missing must be show, hide/],
    ['a bad --max-cells', ['--banner', 'sex', '--stubs', 'degree', '--max-cells', '1e6'], '--max-cells', /--max-cells must be a whole number of cells, at least 1; got "1e6"/],
    // degree (5 values, "No answer") and relig (13, "No answer") x Total, sex (2, "No answer"): 20 rows x 4 columns.
    ['a book past --max-cells', ['--banner', 'sex', '--stubs', 'degree,relig', '--max-cells', '79'], '--max-cells', /error \[invalid_option\]: --max-cells: the tab book has 2 tables of 20 rows in all x 4 columns = 80 cells; at most 79 are allowed\n.*raise --max-cells to 80 /],
  ])('%s is refused naming the flag', async (_what, flags, flag, message) => {
    const out = join(dir, 'refused.xlsx');
    const { code, stderr } = await crosstab(['tabbook', gss(), ...flags, '--out', out]);
    expect(code).toBe(1);
    expect(stderr).toContain(flag);
    expect(stderr).toMatch(message);
    expect(existsSync(out)).toBe(false);
  });

  it('a book past the default cell limit (250,000) is refused before any table is computed; --max-cells raises the limit', async () => {
    const out = join(dir, 'giant.xlsx');
    const large = inject('testDatasets').large;
    // 3 stubs of mid's 300 values x (Total + 300 values): 270,900 cells.
    const refused = await crosstab(['tabbook', large, '--banner', 'mid', '--stubs', 'mid,mid,mid', '--out', out]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--max-cells: the tab book has 3 tables of 900 rows in all x 301 columns = 270,900 cells; at most 250,000 are allowed/);
    expect(existsSync(out)).toBe(false);
    const made = await crosstab(['tabbook', gss(), '--banner', 'sex', '--stubs', 'degree,relig', '--max-cells', '80', '--stats', 'vpct', '--out', join(dir, 'at-limit.json')]);
    expect([made.code, made.stderr]).toEqual([0, `wrote ${join(dir, 'at-limit.json')} (json, 2 tables)\n`]);
  });

  it('an --out that cannot be written is refused before any table is computed, leaving nothing', async () => {
    const out = join(dir, 'no-such-folder', 'book.xlsx');
    const { code, stderr } = await crosstab(['tabbook', gss(), '--banner', 'sex', '--stubs', 'degree', '--out', out]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/error \[invalid_option\]: --out .*no-such-folder/);
    expect(readdirSync(dir).filter((name) => name.includes('.tmp'))).toEqual([]);
  });
});

describe('crosstab table --format xlsx', () => {
  it('writes the one table as --format json gives it', async () => {
    const out = join(dir, 'table.xlsx');
    const args = [gss(), '--base', 'year=2024', '--rows', 'degree', '--columns', 'sex', '--column', 'degree=3..4', '--columns', 'race', '--stats', 'vpct,sig'];
    const { code, stderr } = await runTable([...args, '--format', 'xlsx', '--out', out]);
    expect([code, stderr]).toEqual([0, `wrote ${out} (xlsx)\n`]);
    const workbook = await readWorkbook(out);
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['Table']);
    expectSheetEqualsJson(workbook.worksheets[0]!, await tableJson(args), true);
  });

  it('needs --out', async () => {
    const { code, stderr } = await runTable([gss(), '--rows', 'degree', '--columns', 'sex', '--format', 'xlsx']);
    expect(code).toBe(1);
    expect(stderr.toString()).toContain('--out');
  });
});

/** A system tool: its path, or a failing test under CI=true when it is missing. */
function tool(name: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  return found === '' ? undefined : found;
}

describe('LibreOffice', () => {
  const soffice = tool('soffice');
  const rasterizer = tool('pdftoppm') ?? tool('gs');
  const required = process.env.CI === 'true';
  it.skipIf(!required && (!soffice || !rasterizer))('follows the index links and prints a book to PDF, its first table page to PNG (soffice --headless)', () => {
    expect(soffice, 'soffice (Debian libreoffice-calc-nogui) is required').toBeDefined();
    expect(rasterizer, 'pdftoppm (Debian poppler-utils) or gs is required').toBeDefined();
    const out = join(dir, 'print');
    mkdirSync(out);
    const book = join(out, 'book.xlsx');
    const made = spawnSync(process.execPath, [cliPath, 'tabbook', gss(), '--banner', 'sex,race,degree', '--stubs', 'degree,polviews', '--base', 'year=2024', '--stats', 'vpct,index,sig', '--out', book]);
    expect(made.status).toBe(0);
    // A profile folder of its own: a LibreOffice already running for the user does not take the job.
    const profile = `file://${join(out, 'profile')}`;
    const converted = spawnSync(soffice!, [`-env:UserInstallation=${profile}`, '--headless', '--convert-to', 'pdf', '--outdir', out, book], { encoding: 'utf8', timeout: 120_000 });
    expect(converted.status, converted.stderr).toBe(0);
    // LibreOffice follows the index's links to the tables: its HTML export shows them as jumps within the document.
    const html = spawnSync(soffice!, [`-env:UserInstallation=${profile}`, '--headless', '--convert-to', 'html', '--outdir', out, book], { encoding: 'utf8', timeout: 120_000 });
    expect(html.status, html.stderr).toBe(0);
    const page = readFileSync(join(out, 'book.html'), 'utf8');
    expect(page).toContain(`<a href="#'T1 degree'.A1"`);
    expect(page).toContain(`<a href="#'T2 polviews'.A1"`);
    const pdf = join(out, 'book.pdf');
    expect(statSync(pdf).size).toBeGreaterThan(10_000);
    const png = join(out, 'page');
    const raster = rasterizer!.endsWith('pdftoppm')
      ? spawnSync(rasterizer!, ['-png', '-r', '100', '-f', '2', '-l', '2', pdf, png])
      : spawnSync(rasterizer!, ['-q', '-sDEVICE=png16m', '-r100', '-dFirstPage=2', '-dLastPage=2', `-sOutputFile=${png}-2.png`, pdf]);
    expect(raster.status).toBe(0);
    const image = readdirSync(out).find((name) => name.startsWith('page') && name.endsWith('.png'));
    expect(image).toBeDefined();
    expect(statSync(join(out, image!)).size).toBeGreaterThan(20_000);
  });
});
