// tabbook() and writeTabbook(): every table of the XLSX workbook, read back with exceljs's
// reader, equals table() for the same spec (labels, counts, percentages, letters); the index
// links every table; HTML, CSV and JSON hold the same tables; bad options name themselves and
// a failed write leaves nothing behind.
import { parse as parseCSV } from 'csv-parse/sync';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, tabbook, writeTabbook, closePool, type Dataset, type Tabbook } from '../../src/index.js';
import { tableStatistics } from '../../src/report/table-statistics.js';
import { tableToCSV } from '../../src/report/table-csv.js';
import { tableToJSON } from '../../src/report/table-json.js';
import { tableToHTMLSection } from '../../src/report/table-html.js';
import { rejection } from '../support/rejection.js';
import { expectTableInSheet, findRow, internalLinks, readWorkbook, valueAt } from '../support/xlsx-book.js';

const BASE = 'year=2024';
const BANNER = ['sex', 'race', 'BA+', 'polviews'];
const STUBS = ['degree', 'relig', 'fefam'];
const STATS = ['vpct', 'index', 'sig'] as const;
const BANNER_LABELS = ['Sex', 'Race', 'Think of self as liberal or conservative'];

let ds: Dataset;
let book: Tabbook;
const dir = mkdtempSync(join(tmpdir(), 'crosstab-tabbook-'));

beforeAll(async () => {
  ds = await openDataset(inject('testDatasets').gss, { execution: 'pool' });
  book = await tabbook(ds, { banner: BANNER, stubs: STUBS, base: BASE, stats: [...STATS], concurrency: 2 });
});
afterAll(async () => {
  await ds.close();
  await closePool();
  rmSync(dir, { recursive: true, force: true });
});

/** The same table as `crosstab table` computes it: table() and tableStatistics() on their own. */
async function expected(stub: string) {
  const result = await ds.table({ base: BASE, rows: [{ variable: stub }], columns: BANNER.map((name) => (name === 'BA+' ? name : { variable: name })) });
  return { result, statistics: tableStatistics(result, { stats: [...STATS] }) };
}

describe('tabbook()', () => {
  it('computes one table per stub on the worker pool, with the banner across', () => {
    expect(book.tables.map((table) => table.stub)).toEqual(STUBS);
    expect(book.tables.map((table) => table.title)).toEqual(['Highest degree', 'Religious preference', 'Better for man to work, woman to tend home']);
    for (const table of book.tables) {
      expect(table.result.execution).toBe('pool');
      expect(table.result.columns.map((column) => column.expr)).toEqual(book.banner.map((column) => column.expr));
    }
    // The base has respondents with no sex recorded: the banner shows them (missing: 'show' is the default).
    expect(book.banner.map((column) => column.label).slice(0, 6)).toEqual(['Male', 'Female', 'No answer', 'White', 'Black', 'Other']);
  });

  it('takes expressions and { expr, label } in the banner, and columnGroups over overlapping columns, as table() does', async () => {
    // Two age bands that share the 40-44 year olds, compared with the covariance of their overlap, then one more column not compared.
    const banner = ['age=18..44', { expr: 'age=40..', label: '40+' }, 'degree=3,4'];
    const grouped = await tabbook(ds, { banner, columnGroups: [[0, 1]], stubs: ['polviews'], base: BASE, stats: [...STATS] });
    const columns = ['age=18..44', { expr: 'age=40..', label: '40+' }, 'degree=3,4'];
    const result = await ds.table({ base: BASE, rows: [{ variable: 'polviews' }], columns, columnGroups: [[0, 1]] });
    const statistics = tableStatistics(result, { stats: [...STATS] });
    const table = grouped.tables[0]!;
    expect(tableToJSON(table.result, table.statistics)).toEqual(tableToJSON(result, statistics));
    expect(grouped.banner.map((column) => column.label)).toEqual(['age=18..44', '40+', 'degree=3,4']);
    const pairs = (table.statistics.comparisons ?? []).filter((pair) => pair.columnA === 0 && pair.columnB === 1);
    expect(pairs.length).toBeGreaterThan(0);
    expect(pairs.every((pair) => (pair.respondentsInBoth ?? 0) > 0)).toBe(true);
    expect((table.statistics.letters ?? []).some((letters) => letters !== '')).toBe(true);
    // Without groups, stand-alone expressions are compared with nothing, as in table().
    const plain = await tabbook(ds, { banner, stubs: ['polviews'], base: BASE, stats: [...STATS] });
    expect(plain.tables[0]!.statistics.comparisons ?? []).toEqual([]);
  });

  it('names a bad banner expression or column group by its banner entry', async () => {
    const expression = await rejection(tabbook(ds, { banner: ['sex', 'agee=18..34'], stubs: ['relig'] }));
    expect(expression.details.field).toBe('banner[1]');
    const group = await rejection(tabbook(ds, { banner: ['age=18..34'], columnGroups: [[0, 4]], stubs: ['relig'] }));
    expect([group.code, group.details.field]).toEqual(['invalid_option', 'columnGroups[0]']);
  });

  it("missing: 'hide' leaves the banner and stubs without their \"No answer\" entries", async () => {
    const hidden = await tabbook(ds, { banner: ['sex', 'race'], stubs: ['degree'], base: BASE, missing: 'hide' });
    expect(hidden.banner.map((column) => column.label)).toEqual(['Male', 'Female', 'White', 'Black', 'Other']);
    expect(hidden.tables[0]!.result.rows.some((row) => row.missing)).toBe(false);
    const shown = await tabbook(ds, { banner: ['sex', 'race'], stubs: ['degree'], base: BASE });
    expect(shown.banner.filter((column) => column.missing).map((column) => column.expr)).toEqual(['sex=NA', 'race=NA']);
  });

  it("'all' takes every variable with a value list and says which it left out", async () => {
    const all = await tabbook(ds, { banner: ['sex'], stubs: 'all', base: BASE });
    const listed = ds.info.variables.filter((variable) => variable.values).map((variable) => variable.name);
    expect(all.tables.map((table) => table.stub)).toEqual(listed);
    expect(all.skipped.map((skip) => skip.variable)).toEqual(ds.info.variables.filter((variable) => !variable.values).map((variable) => variable.name));
  });
});

describe('XLSX', () => {
  it.each(['sheets', 'long'] as const)('%s layout: every table equals table() cell by cell, and the index links each one', async (layout) => {
    const out = join(dir, `book-${layout}.xlsx`);
    await writeTabbook(book, out, { layout });
    const workbook = await readWorkbook(out);
    const index = workbook.getWorksheet('Index')!;
    expect(workbook.worksheets[0]!.name).toBe('Index');
    expect(workbook.worksheets.length).toBe(layout === 'sheets' ? 1 + STUBS.length : 2);
    const header = findRow(index, 'Table');
    const links = await internalLinks(out);
    expect(links.size).toBe(STUBS.length);
    for (const [i, stub] of STUBS.entries()) {
      expect(valueAt(index, header + 1 + i, 1)).toBe(`Table ${i + 1}`);
      expect(valueAt(index, header + 1 + i, 2)).toBe(stub);
      const [, sheetName, cell] = /^'(.+)'!A(\d+)$/.exec(links.get(`A${header + 1 + i}`)!)!;
      const sheet = workbook.getWorksheet(sheetName!)!;
      const titleRow = Number(cell);
      expect(valueAt(sheet, titleRow, 1)).toBe(`Table ${i + 1}: ${book.tables[i]!.title} (${stub})`);
      const { result, statistics } = await expected(stub);
      // Both layouts: title, note, then the banner heading (long: once, at the top of its one sheet).
      const headerRow = 3;
      expectTableInSheet(sheet, headerRow, titleRow, result, statistics, BANNER_LABELS);
      const frozen = sheet.views[0] as { state?: string; xSplit?: number; ySplit?: number };
      expect([frozen.state, frozen.xSplit, frozen.ySplit]).toEqual(['frozen', 2, 5]);
    }
  });

  it('the index lists the banner one item a cell, so an item with a comma reads back whole', async () => {
    const commas = await tabbook(ds, { banner: ['sex', 'degree=3,4', { expr: 'age=18..34', label: '18-34, young' }], stubs: ['relig'], base: BASE, stats: ['vpct'] });
    const out = join(dir, 'banner-items.xlsx');
    await writeTabbook(commas, out);
    const index = (await readWorkbook(out)).getWorksheet('Index')!;
    const first = findRow(index, 'Banner:');
    const items: unknown[] = [];
    for (let row = first; valueAt(index, row, 2) !== undefined && valueAt(index, row, 2) !== null; row++) items.push(valueAt(index, row, 2));
    expect(items).toEqual(['Total', 'Sex (sex)', 'degree=3,4', '18-34, young']);
  });

  it('has no file under the name asked for when the write fails, and no temporary file either', async () => {
    const target = join(dir, 'taken');
    mkdirSync(target);
    mkdirSync(join(target, 'x'));
    const before = readdirSync(dir).sort();
    const error = await rejection(writeTabbook(book, join(target, 'x'), { format: 'xlsx' }));
    expect([error.code, error.details.field]).toEqual(['invalid_option', 'out']);
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(readdirSync(target)).toEqual(['x']);
    const missing = await rejection(writeTabbook(book, join(dir, 'no-such-folder', 'book.xlsx')));
    expect([missing.code, missing.details.field]).toEqual(['invalid_option', 'out']);
    expect(readdirSync(dir).sort()).toEqual(before);
  });
});

describe('HTML, CSV and JSON', () => {
  it('JSON holds each table as crosstab table --format json gives it', async () => {
    const out = join(dir, 'book.json');
    expect((await writeTabbook(book, out)).format).toBe('json');
    const json = JSON.parse(readFileSync(out, 'utf8'));
    expect(json.base).toBe(BASE);
    for (const [i, stub] of STUBS.entries()) {
      const { result, statistics } = await expected(stub);
      expect(json.tables[i]).toEqual(JSON.parse(JSON.stringify({ number: i + 1, stub, title: book.tables[i]!.title, table: tableToJSON(result, statistics) })));
    }
  });

  it('CSV is every table of crosstab table --format csv after its table number and stub', async () => {
    const out = join(dir, 'book.csv');
    await writeTabbook(book, out);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
    const expectedLines: string[] = [];
    for (const [i, stub] of STUBS.entries()) {
      const { result, statistics } = await expected(stub);
      const [header, ...rows] = tableToCSV(result, statistics).trimEnd().split('\n');
      if (i === 0) expectedLines.push(`table,stub,${header}`);
      expectedLines.push(...rows.map((row) => `${i + 1},${stub},${row}`));
    }
    expect(lines).toEqual(expectedLines);
  });

  it('CSV keeps a label with a line break in its quoted field, each record after its table number and stub', async () => {
    const broken = await tabbook(ds, { banner: ['sex', { expr: 'age=18..34', label: 'aged\n18-34, "young"' }], stubs: ['degree', 'relig'], base: BASE });
    const out = join(dir, 'broken.csv');
    await writeTabbook(broken, out);
    const records = parseCSV(readFileSync(out, 'utf8'), { columns: true }) as Record<string, string>[];
    const cells = broken.tables.reduce((sum, table) => sum + table.result.rows.length * table.result.columns.length, 0);
    expect(records).toHaveLength(cells);
    const young = records.filter((record) => record.columnExpr === 'age=18..34');
    expect(young).toHaveLength(broken.tables.reduce((sum, table) => sum + table.result.rows.length, 0));
    for (const record of young) {
      expect(record.columnLabel).toBe('aged\n18-34, "young"');
      expect(['degree', 'relig']).toContain(record.stub);
    }
  });

  it('HTML has an index linking a section per table, drawn as crosstab table --format html draws it', async () => {
    const out = join(dir, 'book.html');
    await writeTabbook(book, out);
    const html = readFileSync(out, 'utf8');
    for (const [i, stub] of STUBS.entries()) {
      expect(html).toContain(`<a href="#table-${i + 1}">`);
      const { result, statistics } = await expected(stub);
      const title = `Table ${i + 1}: ${book.tables[i]!.title} (${stub})`;
      expect(html).toContain(`<section id="table-${i + 1}">\n${tableToHTMLSection(result, statistics, { title, variableLabels: book.variableLabels })}\n</section>`);
    }
  });
});

describe('bad options', () => {
  it.each([
    ['an unknown stub', { banner: ['sex'], stubs: ['degree', 'degre'] }, 'unknown_variable', 'stubs[1]'],
    ['an empty banner', { banner: [], stubs: ['degree'] }, 'invalid_option', 'banner'],
    ['an unknown banner variable', { banner: ['sex', 'nosuch'], stubs: ['degree'] }, 'unknown_variable', 'banner[1]'],
    ['missing other than show or hide', { banner: ['sex'], stubs: ['degree'], missing: 'maybe' }, 'invalid_option', 'missing'],
    ['a misspelt option', { banner: ['sex'], stubs: ['degree'], stub: ['x'] }, 'invalid_option', 'options.stub'],
  ])('%s is refused naming the option', async (_what, options, code, field) => {
    const error = await rejection(tabbook(ds, options as never));
    expect([error.code, error.details.field]).toEqual([code, field]);
  });

  it('a stub without a value list (more than 5,000 values) is refused naming it', async () => {
    const large = await openDataset(inject('testDatasets').large);
    try {
      const error = await rejection(tabbook(large, { banner: ['cat'], stubs: ['mid', 'big'] }));
      expect([error.code, error.details.field]).toEqual(['invalid_option', 'stubs[1]']);
      const banner = await rejection(tabbook(large, { banner: ['big'], stubs: ['mid'] }));
      expect([banner.code, banner.details.field]).toEqual(['invalid_option', 'banner[0]']);
      const all = await tabbook(large, { banner: ['cat'], stubs: 'all' });
      expect(all.skipped.map((skip) => skip.variable)).toEqual(['big']);
    } finally {
      await large.close();
    }
  });

  it('a book of more cells than maxCells (default 250,000) is refused before any table is computed, naming the limit and how to raise it', async () => {
    const large = await openDataset(inject('testDatasets').large);
    try {
      let tables = 0;
      const counted = { info: large.info, table: (query: Parameters<Dataset['table']>[0]) => (tables++, large.table(query)) };
      // mid has 300 values and no blank: 3 stubs of 300 rows = 900 rows x (Total + 300 values) = 270,900 cells.
      const error = await rejection(tabbook(counted, { banner: ['mid'], stubs: ['mid', 'mid', 'mid'] }));
      expect([error.code, error.details.field, error.details['limit'], error.details['needed']]).toEqual(['invalid_option', 'maxCells', 250_000, 270_900]);
      expect(error.message).toBe('maxCells: the tab book has 3 tables of 900 rows in all x 301 columns = 270,900 cells; at most 250,000 are allowed');
      expect(error.details.hint).toBe('Ask for fewer stubs or banner columns, in several tab books, or raise maxCells to 270900 if the machine has the memory for it.');
      const bad = await rejection(tabbook(counted, { banner: ['mid'], stubs: ['mid'], maxCells: 0 }));
      expect([bad.code, bad.details.field]).toEqual(['invalid_option', 'maxCells']);
      expect(tables).toBe(0);
    } finally {
      await large.close();
    }
    // Counted as the tables have them, "No answer" rows and columns included: at the limit the book is made, one below it is refused.
    for (const missing of ['show', 'hide'] as const) {
      const made = await tabbook(ds, { banner: ['sex', 'BA+'], stubs: ['degree', 'relig'], missing, stats: ['vpct'] });
      const cells = made.tables.reduce((sum, table) => sum + table.result.rows.length, 0) * (made.banner.length + 1);
      // degree 5 values, relig 13, each with its "No answer" under show; Total, sex's 2 values (and "No answer"), BA+.
      expect(cells).toBe(missing === 'show' ? (6 + 14) * 5 : (5 + 13) * 4);
      await tabbook(ds, { banner: ['sex', 'BA+'], stubs: ['degree', 'relig'], missing, stats: ['vpct'], maxCells: cells });
      const over = await rejection(tabbook(ds, { banner: ['sex', 'BA+'], stubs: ['degree', 'relig'], missing, stats: ['vpct'], maxCells: cells - 1 }));
      expect([over.details.field, over.details['needed']]).toEqual(['maxCells', cells]);
    }
  });

  it('a bad layout or format is refused naming it, before anything is written', async () => {
    const out = join(dir, 'never.xlsx');
    const layout = await rejection(writeTabbook(book, out, { layout: 'wide' as never }));
    expect([layout.code, layout.details.field]).toEqual(['invalid_option', 'layout']);
    const format = await rejection(writeTabbook(book, out, { format: 'pdf' as never }));
    expect([format.code, format.details.field]).toEqual(['invalid_option', 'format']);
    expect(readdirSync(dir)).not.toContain('never.xlsx');
  });
});
