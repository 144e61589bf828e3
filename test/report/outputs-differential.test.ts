// Every output format against the engine, figure by figure (a seeded property/differential
// test): random tables and tab books on the bundled GSS and NHANES datasets and on a generated dataset with
// odd names, odd labels, a multi-response variable and weights at the edges (sums past 2^53,
// 1e-300, exponents). Each table is rendered as CSV, JSON, XLSX, PPTX, SVG chart, text and HTML,
// read back (csv-parse, JSON.parse, exceljs's reader, the deck's and chart's XML), and every
// figure compared with the TableResult and its statistics; every row and column expression, read
// back from the CSV and JSON, is run through crosstab() with the table's base: its respondents
// and weighted sum equal the table's cell, row total and column total. Labels come back as they
// were written (the CSV's formula guard aside), and no figure is ever shown as NaN or Infinity.
// The same spec as a tab book (its row variables the stubs, its columns the banner), written as
// CSV and JSON, holds the same cells as crosstab() gives.
//
// HUNT_OUT_RUNS (tables per dataset, default 3) and HUNT_OUT_SEED (default 1) make a longer hunt.
import { parse as parseCSV } from 'csv-parse/sync';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import fc from 'fast-check';
import JSZip from 'jszip';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { chartToSVG, openDataset, tabbook, writeTabbook, tableChart, tableStatistics, tablesToPPTX, tableToCSV, tableToHTML, tableToJSON, tableToText, tableToXLSX, type Dataset, type StatName, type TableResult, type TableStatistics } from '../../src/index.js';
import { displayedStats } from '../../src/report/display.js';
import { makeDataset } from '../support/make-dataset.js';

const RUNS = Number(process.env.HUNT_OUT_RUNS ?? 3);
const SEED = Number(process.env.HUNT_OUT_SEED ?? 1);
const STATS: StatName[] = ['vpct', 'hpct', 'tpct', 'index', 'se', 'moe', 'sig', 'ebase', 'deff'];
const dir = mkdtempSync(join(tmpdir(), 'crosstab-outputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let written = 0;
/** What the hunt covered, printed per dataset: tables and books compared, cells, refusals. */
const covered = { tables: 0, books: 0, cells: 0, refused: 0, empty: 0 };

/** Labels a spreadsheet, a CSV reader or an XML writer could get wrong. */
const ODD_LABELS = [
  '=HYPERLINK("http://x.example","y")',
  '+1+1',
  '-2',
  "'=quoted",
  '@SUM(A1)',
  'say "hi", then; go',
  'two\nlines',
  'a=b',
  'naïve 日本語 🙂',
  'x'.repeat(300),
  ' padded ',
  '<b>&amp;</b>',
  'bell\u0007 esc\u001b[2J nul\u0000 \uFFFE',
];

/** The generated dataset: odd variable names and labels, a multi-response variable, weights at the edges. */
async function oddDataset(): Promise<Dataset> {
  const rows = 240;
  const columns: Record<string, string[]> = { 'a b': [], 'x=1': [], 'é,q': [], m1: [], m2: [], m3: [], AND: [] };
  const weights: number[] = [];
  const edge = [4.5e15, 1e-300, 3.5, 0, 1.25e-5, 7e15, 1];
  for (let i = 0; i < rows; i++) {
    columns['a b']!.push(String((i % 3) + 1));
    columns['x=1']!.push(i % 7 === 0 ? '' : String(i % 2));
    columns['é,q']!.push(['=1+1', '@x', 'é "q", ;\nline', '-3', 'plain'][i % 5]!);
    columns.m1!.push(i % 2 === 0 ? '1' : '0');
    columns.m2!.push(i % 3 === 0 ? '1' : '0');
    columns.m3!.push(i % 11 === 0 ? '' : i % 5 === 0 ? '1' : '0');
    columns.AND!.push(String(i % 4));
    weights.push(edge[i % edge.length]!);
  }
  const codebook = {
    variables: {
      'a b': { label: '=cmd|"/c calc"!A0', values: { '1': ODD_LABELS[0]!, '2': ODD_LABELS[4]!, '3': ODD_LABELS[7]! } },
      'x=1': { label: ODD_LABELS[12]!, values: { '0': ODD_LABELS[12]!, '1': ODD_LABELS[11]! } },
      AND: { label: ODD_LABELS[5]!, values: { '0': ODD_LABELS[1]!, '1': ODD_LABELS[2]!, '2': ODD_LABELS[3]!, '3': ODD_LABELS[8]! } },
    },
    codes: [],
    multi: [{ name: 'multi @ pick', columns: ['m1', 'm2', 'm3'], counted: '1', label: ODD_LABELS[9]! }],
  };
  return makeDataset(columns, weights, codebook as never);
}

interface Axis {
  variable?: string;
  expr?: string;
  label?: string;
}
interface Spec {
  base: string;
  rows: Axis[];
  columns: Axis[];
  stats: StatName[];
  missing: 'show' | 'hide';
}

/** A random table of `ds`: 1-2 row and 1-3 column entries (variables with at most 12 values, their values as expressions, odd labels), a base, statistics. */
function specArb(ds: Dataset): fc.Arbitrary<Spec> {
  const variables = ds.info.variables.filter((variable) => variable.values !== undefined && variable.values.length <= 12 && variable.values.length >= 1);
  const valueExpr = fc.constantFrom(...variables).chain((variable) => fc.constantFrom(...variable.values!).map((value) => ({ variable, value })));
  // The grammar's quoting (README): double quotes, a backslash before a quote or a backslash; a line break as it is.
  const quoted = (text: string) => `"${text.replace(/["\\]/g, '\\$&')}"`;
  const nameOf = (name: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !/^(AND|OR|NOT)$/i.test(name) ? name : quoted(name));
  const valueText = (value: string) => (/^-?\d+(\.\d+)?$/.test(value) ? value : quoted(value));
  const exprOf = ({ variable, value }: { variable: { name: string }; value: { value: string } }) => `${nameOf(variable.name)}=${valueText(value.value)}`;
  const axis: fc.Arbitrary<Axis> = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...variables).map((variable) => ({ variable: variable.name })) },
    { weight: 1, arbitrary: fc.tuple(valueExpr, fc.option(fc.constantFrom(...ODD_LABELS), { nil: undefined })).map(([picked, label]) => (label === undefined ? { expr: exprOf(picked) } : { expr: exprOf(picked), label })) },
    { weight: 1, arbitrary: fc.tuple(valueExpr, valueExpr).map(([a, b]) => ({ expr: `${exprOf(a)} OR NOT ${exprOf(b)}` })) },
  );
  // Everyone, all but one value's respondents, or no one (an empty table).
  const base = fc.oneof(
    { weight: 2, arbitrary: fc.constant('*') },
    { weight: 2, arbitrary: valueExpr.map((picked) => `NOT ${exprOf(picked)}`) },
    { weight: 1, arbitrary: valueExpr.map((picked) => `${exprOf(picked)} AND NOT ${exprOf(picked)}`) },
  );
  return fc.record({
    base,
    rows: fc.array(axis, { minLength: 1, maxLength: 2 }),
    columns: fc.array(axis, { minLength: 1, maxLength: 3 }),
    stats: fc.subarray(STATS, { minLength: 0 }),
    missing: fc.constantFrom('show' as const, 'hide' as const),
  });
}

/** A text as an XML document holds it: without the characters XML 1.0 has no place for (control characters but tab, CR, LF; U+FFFE, U+FFFF). */
function inXML(text: string): string {
  return [...text].filter((char) => /[\t\n\r]/.test(char) || (char >= ' ' && char !== '\uFFFE' && char !== '\uFFFF' && !/^[\uD800-\uDFFF]$/.test(char))).join('');
}

/** A well-formed XML document holding only characters XML 1.0 allows (the validator lets U+FFFE through). */
function expectXML(text: string, where: string): void {
  expect(XMLValidator.validate(text), `${where} is not well-formed XML`).toBe(true);
  expect(inXML(text) === text, `${where} holds a character XML cannot hold`).toBe(true);
}

/** What the CSV's formula guard (a leading ' before 's and then =, +, -, @, tab or CR, not a plain number) adds, taken off. */
function unguard(text: string): string {
  return /^'+[=+\-@\t\r]/.test(text) && !/^'+[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? text.slice(1) : text;
}

/** No figure of a human-readable output is NaN, Infinity or -0. */
function expectNoNonFigures(text: string, format: string): void {
  expect(text, `${format}: NaN shown`).not.toMatch(/\bNaN\b/);
  expect(text, `${format}: Infinity shown`).not.toMatch(/Infinity/);
  expect(text, `${format}: -0 shown`).not.toMatch(/(^|[^\w.\-])-0(\.0+)?%?(?![\w.])/m);
}

/** Same figure: equal, or both undefined (NaN in the engine, empty/null/– in an output). */
function sameFigure(shown: unknown, value: number, where: string): void {
  if (!Number.isFinite(value)) {
    expect(shown === null || shown === '' || shown === '–' || shown === undefined, `${where}: undefined figure shown as ${String(shown)}`).toBe(true);
    return;
  }
  expect(typeof shown === 'number' ? shown : Number(shown), where).toBe(value === 0 ? 0 : value);
}

/** The figures of the requested statistics by CSV/JSON field. */
function figureFields(statistics: TableStatistics): Array<{ field: string; label: string; values: Float64Array }> {
  return displayedStats(statistics).map((stat) => ({ field: stat.figure.field, label: stat.label, values: stat.values }));
}

async function checkTable(ds: Dataset, spec: Spec, name: string): Promise<void> {
  const query = { base: spec.base, rows: spec.rows.map(toItem), columns: spec.columns.map(toItem), missing: spec.missing };
  let result: TableResult;
  try {
    result = await ds.table(query);
  } catch (error) {
    // A refusal names its field: never a crash. (A column of a variable none of the base has, for instance.)
    expect((error as { code?: string }).code, `${name}: ${(error as Error).message}`).toBeTypeOf('string');
    covered.refused++;
    if (process.env.HUNT_OUT_VERBOSE) console.log(`refused: ${(error as Error).message}`);
    return;
  }
  covered.tables++;
  covered.cells += result.rows.length * result.columns.length;
  if (result.total.respondents === 0) covered.empty++;
  const statistics = tableStatistics(result, { stats: spec.stats });
  const width = result.columns.length;
  const where = (r: number, c: number) => `${name} cell (${r}, ${c}) ${JSON.stringify(result.rows[r]!.expr)} x ${JSON.stringify(result.columns[c]!.expr)}`;

  // The expressions parse back to the same respondents: crosstab() on each with the table's base.
  const targets = [...result.rows.map((row) => row.expr), ...result.columns.map((column) => column.expr)];
  for (const row of result.rows) for (const column of result.columns) targets.push(`(${row.expr}) AND (${column.expr})`);
  const answer = await ds.crosstab({ base: spec.base, targets });
  expect(answer.base.respondents).toBe(result.total.respondents);
  expect(answer.base.weighted).toBe(result.total.weighted);
  const sameCell = (got: { weighted: number; respondents: number }, cell: { weighted: number; respondents: number }, at: string) => {
    expect(got.respondents, at).toBe(cell.respondents);
    // Summed in another order (crosstab() a target's respondents, table() a cell's): equal but for the last bits of a double.
    expect(Math.abs(got.weighted - cell.weighted), at).toBeLessThanOrEqual(Math.abs(cell.weighted) * 1e-12);
  };
  result.rows.forEach((row, r) => {
    if (!row.net) sameCell(answer.targets[r]!, result.rowTotals[r]!, `${name} row ${r} ${row.expr}`);
  });
  result.columns.forEach((column, c) => sameCell(answer.targets[result.rows.length + c]!, result.columnTotals[c]!, `${name} column ${c} ${column.expr}`));
  let k = result.rows.length + width;
  for (let r = 0; r < result.rows.length; r++) for (let c = 0; c < width; c++) sameCell(answer.targets[k++]!, result.cell(r, c), where(r, c));

  // CSV: every field back as the engine's figure; labels and expressions as written.
  const figures = figureFields(statistics);
  const csv = tableToCSV(result, statistics);
  const records = parseCSV(csv, { columns: true, relax_quotes: false }) as Record<string, string>[];
  expect(records).toHaveLength(result.rows.length * width);
  for (const record of records) {
    const r = Number(record.row);
    const c = Number(record.column);
    const cell = result.cell(r, c);
    const at = `${where(r, c)} (CSV)`;
    expect(unguard(record.rowLabel!), at).toBe(result.rows[r]!.label);
    expect(unguard(record.rowExpr!), at).toBe(result.rows[r]!.expr);
    expect(unguard(record.columnLabel!), at).toBe(result.columns[c]!.label);
    expect(unguard(record.columnExpr!), at).toBe(result.columns[c]!.expr);
    expect(Number(record.weighted), at).toBe(cell.weighted);
    expect(Number(record.respondents), at).toBe(cell.respondents);
    expect(Number(record.sumSqWeights), at).toBe(cell.sumSqWeights);
    expect(record.stability, at).toBe(cell.stability);
    for (const figure of figures) sameFigure(record[figure.field], figure.values[r * width + c]!, `${at} ${figure.field}`);
    if (statistics.letters) expect(record.letters, at).toBe(statistics.letters[r * width + c]);
  }

  // JSON, through its text.
  const json = JSON.parse(JSON.stringify(tableToJSON(result, statistics))) as {
    rows: Array<{ label: string; expr: string }>;
    columns: Array<{ label: string; expr: string }>;
    cells: Array<Array<Record<string, unknown> & { weighted: number; respondents: number; sumSqWeights: number; stability: string; letters?: string }>>;
    rowTotals: Array<{ weighted: number; respondents: number }>;
    columnTotals: Array<{ weighted: number; respondents: number }>;
    total: { weighted: number; respondents: number };
  };
  expect(json.rows.map((row) => [row.label, row.expr])).toEqual(result.rows.map((row) => [row.label, row.expr]));
  expect(json.columns.map((column) => [column.label, column.expr])).toEqual(result.columns.map((column) => [column.label, column.expr]));
  expect(json.cells).toHaveLength(result.rows.length);
  expect(json.total).toMatchObject({ weighted: result.total.weighted, respondents: result.total.respondents });
  json.rowTotals.forEach((cell, r) => expect(cell).toMatchObject({ weighted: result.rowTotals[r]!.weighted, respondents: result.rowTotals[r]!.respondents }));
  json.columnTotals.forEach((cell, c) => expect(cell).toMatchObject({ weighted: result.columnTotals[c]!.weighted, respondents: result.columnTotals[c]!.respondents }));
  json.cells.forEach((line, r) => {
    expect(line).toHaveLength(width);
    line.forEach((cell, c) => {
      const at = `${where(r, c)} (JSON)`;
      const engine = result.cell(r, c);
      expect([cell.weighted, cell.respondents, cell.sumSqWeights, cell.stability], at).toEqual([engine.weighted, engine.respondents, engine.sumSqWeights, engine.stability]);
      for (const figure of figures) sameFigure(cell[figure.field], figure.values[r * width + c]!, `${at} ${figure.field}`);
      if (statistics.letters) expect(cell.letters ?? '', at).toBe(statistics.letters[r * width + c]);
    });
  });

  // XLSX read back with exceljs: labels, counts, every figure line.
  const xlsxPath = join(dir, `table-${++written}.xlsx`);
  writeFileSync(xlsxPath, await tableToXLSX(result, statistics));
  const sheet = await readFirstSheet(xlsxPath);
  let baseRow = 1;
  while (valueAt(sheet, baseRow, 1) !== 'Base') baseRow++;
  const columnLabels = Array.from({ length: width }, (_, c) => valueAt(sheet, baseRow - (statistics.letters ? 2 : 1), 4 + c));
  expect(columnLabels, `${name} XLSX column labels`).toEqual(result.columns.map((column) => inXML(column.label)));
  for (let c = 0; c < width; c++) {
    expect(valueAt(sheet, baseRow, 4 + c)).toBe(result.columnTotals[c]!.weighted / result.units);
    expect(valueAt(sheet, baseRow + 1, 4 + c)).toBe(result.columnTotals[c]!.respondents);
  }
  let line = baseRow + 2;
  const byLabel = new Map(figures.map((figure) => [figure.label.charAt(0).toUpperCase() + figure.label.slice(1), figure]));
  for (let r = 0; r < result.rows.length; r++) {
    // A heading line (in A only) where a row variable's entries start.
    if (result.rows[r]!.variable !== undefined && result.rows[r]!.variable !== result.rows[r - 1]?.variable) {
      expect(String(valueAt(sheet, line, 1) ?? ''), `${name} XLSX heading before row ${r}`).not.toBe('');
      expect(Array.from({ length: width + 2 }, (_, k) => valueAt(sheet, line, 2 + k)), `${name} XLSX heading line before row ${r}`).toEqual(Array.from({ length: width + 2 }, () => null));
      line++;
    }
    expect(valueAt(sheet, line, 1), `${name} XLSX row ${r} label`).toBe(inXML(result.rows[r]!.label));
    for (let c = 0; c < width; c++) {
      const cell = result.cell(r, c);
      expect(valueAt(sheet, line, 4 + c), `${where(r, c)} XLSX weighted`).toBe(cell.weighted / result.units);
      expect(valueAt(sheet, line + 1, 4 + c), `${where(r, c)} XLSX respondents`).toBe(cell.respondents);
    }
    line += 2;
    while (valueAt(sheet, line, 1) === null && valueAt(sheet, line, 2) !== null && valueAt(sheet, line, 2) !== 'Weighted') {
      const figureName = String(valueAt(sheet, line, 2));
      for (let c = 0; c < width; c++) {
        const shown = valueAt(sheet, line, 4 + c);
        if (figureName === 'Significance') expect(shown ?? '', `${where(r, c)} XLSX letters`).toBe(statistics.letters![r * width + c]);
        else sameFigure(shown, byLabel.get(figureName)!.values[r * width + c]!, `${where(r, c)} XLSX ${figureName}`);
      }
      line++;
    }
  }

  // Text and HTML: no NaN, Infinity or -0 where a figure goes.
  expectNoNonFigures(tableToText(result, statistics), `${name} text`);
  expectNoNonFigures(tableToHTML(result, statistics).replace(/<[^>]*>/g, ' '), `${name} HTML`);

  // The chart (SVG) and the deck: well-formed XML, bars and chart data = the vertical %.
  const withPct = tableStatistics(result, { stats: [...new Set<StatName>([...spec.stats, 'vpct'])] });
  const svg = chartToSVG(tableChart(result, withPct));
  expectXML(svg, `${name} SVG`);
  for (const match of svg.matchAll(/data-row="(\d+)" data-column="(\d+)" data-value="([^"]*)"/g)) {
    const value = withPct.columnPct![Number(match[1]) * width + Number(match[2])]!;
    expect(match[3], `${name} SVG bar ${match[1]},${match[2]}`).toBe(Number.isFinite(value) ? String(value) : 'NaN');
  }
  const deck = await JSZip.loadAsync(await tablesToPPTX([{ result, statistics: withPct }]));
  for (const part of Object.keys(deck.files).filter((file) => file.endsWith('.xml'))) {
    expectXML(await deck.file(part)!.async('string'), `${name} PPTX part ${part}`);
  }
  // Each chart's data sheet, a workbook inside the deck.
  for (const embedded of Object.keys(deck.files).filter((file) => file.endsWith('.xlsx'))) {
    const book = await JSZip.loadAsync(await deck.file(embedded)!.async('uint8array'));
    for (const part of Object.keys(book.files).filter((file) => file.endsWith('.xml'))) {
      expectXML(await book.file(part)!.async('string'), `${name} PPTX ${embedded} part ${part}`);
    }
  }
  const chartValues: number[] = [];
  const parser = new XMLParser({ ignoreAttributes: false });
  for (const part of Object.keys(deck.files).filter((file) => /^ppt\/charts\/chart\d+\.xml$/.test(file))) {
    const text = await deck.file(part)!.async('string');
    for (const match of text.matchAll(/<c:val><c:numRef>[\s\S]*?<\/c:numRef><\/c:val>/g)) {
      for (const point of match[0].matchAll(/<c:pt idx="\d+"><c:v>([^<]*)<\/c:v><\/c:pt>/g)) chartValues.push(Number(point[1]));
    }
    parser.parse(text);
  }
  const expected = new Set(Array.from(withPct.columnPct!).filter(Number.isFinite));
  for (const value of chartValues) expect(expected.has(value) || value === 0, `${name} PPTX chart value ${value} is no vertical % of the table`).toBe(true);
}

/**
 * The first sheet's cells as the file holds them (numbers as numbers, text as text), read from
 * its XML: exceljs's reader decodes entities twice (a label `&amp;` comes back as `&`).
 */
async function readFirstSheet(path: string): Promise<Map<string, string | number>> {
  const zip = await JSZip.loadAsync(readFileSync(path));
  for (const part of Object.keys(zip.files).filter((file) => file.endsWith('.xml'))) expectXML(await zip.file(part)!.async('string'), `XLSX part ${part}`);
  const parser = new XMLParser({ ignoreAttributes: false, parseTagValue: false, trimValues: false, isArray: (name) => ['row', 'c', 'si', 'r'].includes(name) });
  const shared: string[] = [];
  const sst = zip.file('xl/sharedStrings.xml');
  if (sst) {
    const doc = parser.parse(await sst.async('string')) as { sst: { si?: Array<{ t?: unknown; r?: Array<{ t: unknown }> }> } };
    for (const si of doc.sst.si ?? []) shared.push(si.t !== undefined ? textOf(si.t) : (si.r ?? []).map((run) => textOf(run.t)).join(''));
  }
  const doc = parser.parse(await zip.file('xl/worksheets/sheet1.xml')!.async('string')) as { worksheet: { sheetData: { row?: Array<{ c?: Array<Record<string, unknown>> }> } } };
  const cells = new Map<string, string | number>();
  for (const row of doc.worksheet.sheetData.row ?? []) {
    for (const c of row.c ?? []) {
      const ref = String(c['@_r']);
      const type = c['@_t'];
      if (type === 'inlineStr') {
        const is = c.is as { t?: unknown; r?: Array<{ t: unknown }> };
        cells.set(ref, is.t !== undefined ? textOf(is.t) : (is.r ?? []).map((run) => textOf(run.t)).join(''));
      }
      else if (c.v === undefined) continue;
      else if (type === 's') cells.set(ref, shared[Number(textOf(c.v))]!);
      else if (type === 'str') cells.set(ref, textOf(c.v));
      else cells.set(ref, Number(textOf(c.v)));
    }
  }
  return cells;
}

function textOf(node: unknown): string {
  if (typeof node === 'string') return node;
  if (node && typeof node === 'object' && '#text' in node) return String((node as { '#text': unknown })['#text']);
  return '';
}

/** A cell of a sheet read by readFirstSheet (1-based row and column); null when empty. */
function valueAt(sheet: Map<string, string | number>, row: number, column: number): string | number | null {
  let letters = '';
  for (let n = column; n > 0; n = Math.floor((n - 1) / 26)) letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return sheet.get(`${letters}${row}`) ?? null;
}

/**
 * A tab book of a random banner and stubs, written as CSV and JSON and read back: every line
 * of every table is the engine's cell (crosstab() on its row AND column with the book's base),
 * labels and expressions as written (the CSV's formula guard aside).
 */
async function checkTabbook(ds: Dataset, spec: Spec, name: string): Promise<void> {
  const stubs = [...new Set(spec.rows.flatMap((axis) => (axis.variable === undefined ? [] : [axis.variable])))];
  if (stubs.length === 0) return;
  const banner = spec.columns.map((axis) => (axis.variable !== undefined ? axis.variable : axis.label === undefined ? axis.expr! : { expr: axis.expr!, label: axis.label }));
  let book;
  try {
    book = await tabbook(ds, { banner, stubs, base: spec.base, stats: spec.stats, missing: spec.missing });
  } catch (error) {
    expect((error as { code?: string }).code, `${name} tab book: ${(error as Error).message}`).toBeTypeOf('string');
    return;
  }
  const csvPath = join(dir, `book-${++written}.csv`);
  const jsonPath = join(dir, `book-${written}.json`);
  await writeTabbook(book, csvPath);
  await writeTabbook(book, jsonPath);
  const records = parseCSV(readFileSync(csvPath, 'utf8'), { columns: true }) as Record<string, string>[];
  const json = JSON.parse(readFileSync(jsonPath, 'utf8')) as { base: string; tables: Array<{ stub: string; table: { rows: Array<{ label: string; expr: string }>; columns: Array<{ label: string; expr: string }>; cells: Array<Array<{ weighted: number; respondents: number }>> } }> };
  expect(json.base).toBe(spec.base);
  expect(json.tables.map((table) => table.stub)).toEqual(stubs);
  const targets: string[] = [];
  for (const table of json.tables) for (const row of table.table.rows) for (const column of table.table.columns) targets.push(`(${row.expr}) AND (${column.expr})`);
  const answer = await ds.crosstab({ base: spec.base, targets });
  let k = 0;
  let line = 0;
  for (const [t, table] of json.tables.entries()) {
    table.table.rows.forEach((row, r) =>
      table.table.columns.forEach((column, c) => {
        const at = `${name} tab book table ${t + 1} cell (${r}, ${c})`;
        const cell = table.table.cells[r]![c]!;
        const engine = answer.targets[k++]!;
        expect(cell.respondents, at).toBe(engine.respondents);
        expect(Math.abs(cell.weighted - engine.weighted), at).toBeLessThanOrEqual(Math.abs(engine.weighted) * 1e-12);
        const record = records[line++]!;
        expect([record.table, record.stub, unguard(record.rowLabel!), unguard(record.rowExpr!), unguard(record.columnLabel!), unguard(record.columnExpr!)], `${at} (CSV)`).toEqual([String(t + 1), table.stub, row.label, row.expr, column.label, column.expr]);
        expect([Number(record.weighted), Number(record.respondents)], `${at} (CSV)`).toEqual([cell.weighted, cell.respondents]);
      }),
    );
  }
  expect(records).toHaveLength(line);
  covered.books++;
}

function toItem(axis: Axis) {
  if (axis.variable !== undefined) return { variable: axis.variable };
  return axis.label === undefined ? { expr: axis.expr! } : { expr: axis.expr!, label: axis.label };
}

describe('every output format holds the engine figures, labels and expressions', () => {
  const datasets: Record<string, Dataset> = {};
  beforeAll(async () => {
    datasets.gss = await openDataset(inject('testDatasets').gss);
    datasets.nhanes = await openDataset(inject('testDatasets').nhanes);
    datasets.odd = await oddDataset();
  });
  afterAll(async () => {
    for (const ds of Object.values(datasets)) await ds.close();
  });

  it.each(['odd', 'gss', 'nhanes'])('%s: random tables in CSV, JSON, XLSX, SVG, PPTX, text and HTML', { timeout: 60_000 + RUNS * 20_000 }, async (key) => {
    const ds = datasets[key]!;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(specArb(ds), async (spec) => {
        const name = `${key}#${run++} ${JSON.stringify(spec)}`;
        await checkTable(ds, spec, name);
        await checkTabbook(ds, spec, name);
      }),
      { seed: SEED + key.length, numRuns: RUNS, endOnFailure: true },
    );
    console.log(`${key} (seed ${SEED + key.length}): ${JSON.stringify(covered)} so far`);
  });
});

describe('labels XML cannot hold', () => {
  it('are left out of the XLSX, PPTX, SVG and a tab book sheet name cut inside a surrogate pair, which stay well-formed XML', async () => {
    // A stub whose sheet name `T1 xxx…🙂` is cut at 31 UTF-16 units between the halves of the emoji.
    const stub = `${'x'.repeat(27)}🙂`;
    const label = 'bell\u0007 esc\u001b[2J nul\u0000 \uFFFE end';
    const ds = await makeDataset({ [stub]: ['1', '2', '1', '2'], g: ['a', 'b', 'b', 'a'] }, [1, 2, 3, 4], { variables: { g: { label, values: { a: label, b: 'b\u0001' } } }, codes: [] } as never);
    try {
      const result = await ds.table({ base: '*', rows: [{ variable: 'g' }, { expr: 'g="a"', label }], columns: [{ variable: 'g' }, { expr: 'g="b"', label }] });
      const statistics = tableStatistics(result, { stats: ['vpct', 'sig'] });
      const shown = 'bell esc[2J nul  end';
      const xlsxPath = join(dir, 'control.xlsx');
      writeFileSync(xlsxPath, await tableToXLSX(result, statistics));
      const sheet = await readFirstSheet(xlsxPath);
      // The row label, the column label, and the variable's label over its columns.
      const labels = [...sheet.values()].filter((value) => typeof value === 'string' && value.startsWith('bell'));
      expect(labels.length).toBeGreaterThanOrEqual(3);
      expect(new Set(labels)).toEqual(new Set([shown]));
      const svg = chartToSVG(tableChart(result, statistics));
      expectXML(svg, 'SVG');
      expect(svg).toContain(`>${shown}<`);
      const deck = await JSZip.loadAsync(await tablesToPPTX([{ result, statistics }]));
      for (const part of Object.keys(deck.files).filter((file) => file.endsWith('.xml'))) expectXML(await deck.file(part)!.async('string'), `PPTX part ${part}`);
      expect(await deck.file('ppt/slides/slide1.xml')!.async('string')).toContain(shown);
      // CSV and JSON keep the label as it is.
      expect(tableToCSV(result, statistics)).toContain(label);
      expect(tableToJSON(result, statistics).rows[0]!.label).toBe(label);

      const book = await tabbook(ds, { banner: ['g'], stubs: [stub] });
      const bookPath = join(dir, 'control-book.xlsx');
      await writeTabbook(book, bookPath);
      const zip = await JSZip.loadAsync(readFileSync(bookPath));
      for (const part of Object.keys(zip.files).filter((file) => file.endsWith('.xml'))) expectXML(await zip.file(part)!.async('string'), `tab book part ${part}`);
      expect(await zip.file('xl/workbook.xml')!.async('string')).toContain(`name="T1 ${'x'.repeat(27)}"`);
    } finally {
      await ds.close();
    }
  });
});

describe('LibreOffice', () => {
  const soffice = spawnSync('sh', ['-c', 'command -v soffice'], { encoding: 'utf8' }).stdout.trim();
  const required = process.env.CI === 'true';
  it.skipIf(!required && soffice === '')('opens the XLSX with every odd label as the engine wrote it, and every figure (soffice --headless, to CSV)', { timeout: 180_000 }, async () => {
    expect(soffice, 'soffice (Debian libreoffice-calc-nogui) is required').not.toBe('');
    const ds = await openDataset(inject('testDatasets').gss);
    try {
      const result = await ds.table({ base: 'year=2024', rows: [...ODD_LABELS, '_x0041_'].map((label) => ({ expr: 'sex=2', label })), columns: [{ variable: 'sex' }, { expr: 'degree=3,4', label: '=SUM(1,2)' }] });
      const statistics = tableStatistics(result, { stats: ['vpct'] });
      const out = join(dir, 'libreoffice');
      mkdirSync(out);
      writeFileSync(join(out, 'odd.xlsx'), await tableToXLSX(result, statistics));
      const converted = spawnSync(soffice, [`-env:UserInstallation=file://${join(out, 'profile')}`, '--headless', '--convert-to', 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false', '--outdir', out, join(out, 'odd.xlsx')], { encoding: 'utf8', timeout: 150_000 });
      expect(converted.status, converted.stderr).toBe(0);
      const rows = parseCSV(readFileSync(join(out, 'odd.csv'), 'utf8'), { relax_column_count: true }) as string[][];
      const shown = rows.map((row) => row[0]);
      for (const entry of result.rows) expect(shown, JSON.stringify(entry.label)).toContain(inXML(entry.label));
      expect(shown).toContain(' padded ');
      // The column labels as text (not run as formulas), and the weighted counts as the engine's figures.
      expect(rows.some((row) => row.includes('=SUM(1,2)'))).toBe(true);
      const first = rows.findIndex((row) => row[0] === inXML(result.rows[0]!.label));
      expect(Number(rows[first]![3]), 'weighted, first column').toBeCloseTo(result.cell(0, 0).weighted / result.units, 6);
    } finally {
      await ds.close();
    }
  });
});
