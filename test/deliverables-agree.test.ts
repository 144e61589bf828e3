// The deliverables an analyst hands over hold the engine's figures and labels: seeded random
// tables over GSS, NHANES and a made dataset with odd names and values (a variable name in
// quotes, a grammar word, an empty column, negative and exponent codes, long labels, a
// multi-response variable, zero bases), each written as PowerPoint (the slide's table, the
// native chart's XML and the workbook embedded under it), as text, and as a tab book of its
// row variables under its columns (XLSX in both layouts, PowerPoint). Every figure and label is
// read back out of the file and checked against the engine's table: counts as they are,
// percentages recomputed from the counts and printed as the output says it rounds (one decimal,
// half away from zero, as toLocaleString('en-US')), low-base markers from the respondents and
// the dataset's thresholds, significance letters from the JSON's comparisons.
//
// DELIVERABLES_RUNS (tables per dataset, default 4) and DELIVERABLES_SEED (default 1) make a longer hunt.
import ExcelJS from 'exceljs';
import { XMLParser } from 'fast-xml-parser';
import JSZip from 'jszip';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bannerLayout, buildDataset, openDataset, tabbook, tableFromJson, type BannerLayout, type TableJson, tableStatistics, tablesToPPTX, tableToJSON, tableToText, writeTabbook, type Dataset, type StatName, type TableResult, type TableStatistics } from '../src/index.js';
import { FIGURES } from '../src/report/statistics.js';
import { createCrosstabHandler } from '../src/http/index.js';
import { makeKeyFile, shims, tempDir } from './http/support.js';
import { requireBuiltCli, runTable } from './report/support.js';
import { spawnSync } from 'node:child_process';
import { seededRandom } from './support/large-dataset.js';

const RUNS = Number(process.env.DELIVERABLES_RUNS ?? 4);
const SEED = Number(process.env.DELIVERABLES_SEED ?? 1);
const STATS: StatName[] = ['vpct', 'hpct', 'tpct', 'index', 'ebase', 'deff', 'se', 'moe', 'sig'];
const dir = mkdtempSync(join(tmpdir(), 'crosstab-deliverables-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const covered = { tables: 0, refused: 0, slides: 0, charts: 0, books: 0, sheets: 0, figures: 0 };

/** A figure as the human formats print it: `digits` decimals, half away from zero, commas (toLocaleString('en-US')); `–` undefined. */
function shown(value: number, digits: number): string {
  if (!Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: true });
}
const percent = (proportion: number, digits = 1) => (Number.isFinite(proportion) ? `${shown(100 * proportion, digits)}%` : '–');
const marker = (stability: string) => (stability === 'very-unstable' ? '**' : stability === 'caution' ? '*' : '');
/** A text as the XML formats hold it: control characters (but tab, CR, LF) and U+FFFE/U+FFFF left out. */
const inXML = (text: string) => [...text].filter((char) => /[\t\n\r]/.test(char) || (char >= ' ' && char !== '\uFFFE' && char !== '\uFFFF' && !/^[\uD800-\uDFFF]$/.test(char))).join('');

/** The vertical % recomputed from the counts: the cell's Σw over its column's (valid: over the answered rows of its variable). */
function verticalFromCounts(result: TableResult, r: number, c: number): number {
  const row = result.rows[r]!;
  const cell = result.cell(r, c).weighted;
  if (result.percentBase === 'valid' && row.variable !== undefined) {
    if (row.missing) return Number.NaN;
    let of = 0;
    result.rows.forEach((other, o) => {
      if (other.variable === row.variable && !other.missing && !other.net) of += result.cell(o, c).weighted;
    });
    return of === 0 ? Number.NaN : cell / of;
  }
  const of = result.columnTotals[c]!.weighted;
  return of === 0 ? Number.NaN : cell / of;
}

/** The engine's vertical % agrees with the one recomputed from its counts (to the last bits of a double), and is what the deliverable must show. */
function vertical(result: TableResult, statistics: TableStatistics, r: number, c: number, where: string): number {
  const engine = statistics.columnPct![r * result.columns.length + c]!;
  const counted = verticalFromCounts(result, r, c);
  if (Number.isFinite(counted)) expect(Math.abs(engine - counted), `${where}: vertical % ${engine} is not the counts' ${counted}`).toBeLessThanOrEqual(1e-12);
  else expect(engine, `${where}: vertical % of no base`).toBeNaN();
  return engine;
}

/** A cell's letters from the JSON's comparisons: the columns of its group it is significantly higher than, alphabetically. */
function lettersFromComparisons(json: ReturnType<typeof tableToJSON>, r: number, c: number): string {
  const letterOf = (column: number) => json.columns[column]!.letter!;
  const higher: string[] = [];
  for (const pair of json.comparisons ?? []) {
    if (pair.row !== r || !pair.significant) continue;
    if (pair.columnA === c && pair.difference! > 0) higher.push(letterOf(pair.columnB));
    if (pair.columnB === c && pair.difference! < 0) higher.push(letterOf(pair.columnA));
  }
  return higher.sort((a, b) => a.length - b.length || (a < b ? -1 : 1)).join('');
}

// ——— the made dataset ———

/** Built from a CSV with a codebook, as `crosstab build` builds: odd names, codes and labels, an empty column, two multi-response variables. */
async function oddDataset(): Promise<Dataset> {
  const rows = 300;
  const csvField = (text: string) => (/[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);
  const header = ['w', 'say "hi"', 'OR', 'empty', 'signed', 'm1', 'm2', 'm3', 'long', 'brands'];
  const lines = [header.map(csvField).join(',')];
  for (let i = 0; i < rows; i++) {
    lines.push([
      String([0.5, 1e-3, 2.25, 0, 7, 1.5e3][i % 6]),
      ['a "b"', 'NOT', 'c, d'][i % 3]!,
      i % 9 === 0 ? '' : String(i % 2),
      '',
      ['-3', '1e5', '2.5E-3', '-0.5'][i % 4]!,
      i % 2 === 0 ? '1' : '0',
      i % 3 === 0 ? '1' : '0',
      i % 13 === 0 ? '' : i % 5 === 0 ? '1' : '0',
      String(i % 40 === 0 ? 3 : i % 2),
      i % 11 === 0 ? '' : [1, 2, 3].filter((code) => (i * code) % 4 < 2).join(';') || ';',
    ].map(csvField).join(','));
  }
  const csv = join(dir, 'odd.csv');
  writeFileSync(csv, `${lines.join('\n')}\n`);
  const codebook = join(dir, 'odd.codebook.json');
  writeFileSync(codebook, JSON.stringify({
    variables: {
      OR: { label: 'A variable named "OR"', values: { '0': 'No, "never"', '1': 'Yes; always' } },
      long: { label: 'L'.repeat(200), values: { '0': 'zero '.repeat(40), '1': '  padded  ', '3': 'three <b>' } },
      brands: { label: 'Brands', values: { '1': 'Brand "one"', '2': 'X-Axis' } },
      // A label XML cannot hold a character of: empty in every XML format.
      signed: { label: 'Signed', values: { '-3': '\u0007' } },
    },
    multi: { name: 'picks', columns: ['m1', 'm2', 'm3'], counted: '1', label: 'Which picks "these"' },
  }));
  const out = join(dir, 'odd.arrow');
  await buildDataset(csv, { weights: ['w'], survey: 'ODD', out, codebook, multi: [{ column: 'brands' }], threads: 0 });
  return openDataset(out);
}

// ——— random specs ———

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
  percentBase: 'total' | 'valid';
}

const quoted = (text: string) => `"${text.replace(/["\\]/g, '\\$&')}"`;
const nameOf = (name: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !/^(AND|OR|NOT)$/i.test(name) ? name : quoted(name));
const valueText = (value: string) => (/^-?\d+(\.\d+)?$/.test(value) ? value : quoted(value));

function makeSpec(ds: Dataset, next: () => number): Spec {
  const pick = <T,>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const variables = ds.info.variables.filter((variable) => variable.values !== undefined && variable.values.length <= 10);
  const valued = variables.filter((variable) => variable.values!.length >= 1);
  const valueExpr = () => {
    const variable = pick(valued);
    return `${nameOf(variable.name)}=${valueText(pick(variable.values!).value)}`;
  };
  const axis = (): Axis => {
    const kind = next();
    if (kind < 0.6) return { variable: pick(variables).name };
    if (kind < 0.8) return { expr: valueExpr(), label: pick(['"quoted", label', 'x'.repeat(120), 'Total', 'NOT', '(A)']) };
    return { expr: `${valueExpr()} OR NOT ${valueExpr()}` };
  };
  const baseKind = next();
  const base = baseKind < 0.4 ? '*' : baseKind < 0.85 ? `NOT ${valueExpr()}` : (() => { const e = valueExpr(); return `${e} AND NOT ${e}`; })();
  return {
    base,
    rows: Array.from({ length: 1 + Math.floor(next() * 2) }, axis),
    columns: Array.from({ length: 1 + Math.floor(next() * 3) }, axis),
    stats: STATS.filter(() => next() < 0.5),
    missing: next() < 0.7 ? 'show' : 'hide',
    percentBase: next() < 0.8 ? 'total' : 'valid',
  };
}

const toItem = (axis: Axis) => (axis.variable !== undefined ? { variable: axis.variable } : axis.label === undefined ? { expr: axis.expr! } : { expr: axis.expr!, label: axis.label });

// ——— PowerPoint ———

const xml = new XMLParser({ ignoreAttributes: false, parseTagValue: false, trimValues: false, isArray: (name) => ['c:ser', 'c:pt', 'a:tr', 'a:tc', 'a:r', 'a:p', 'row', 'c', 'si', 'r', 'c:lvl'].includes(name) });
type Node = Record<string, unknown>;
const textOf = (node: unknown): string => (typeof node === 'string' ? node : node && typeof node === 'object' && '#text' in node ? String((node as Node)['#text']) : '');
const points = (cache: Node | undefined): string[] => {
  const out: string[] = [];
  for (const pt of (cache?.['c:pt'] as Node[] | undefined) ?? []) out[Number(pt['@_idx'])] = textOf(pt['c:v']);
  return out;
};

interface ChartSeries {
  name: string;
  categories: string[];
  values: string[];
}

function chartSeries(chartXml: string): ChartSeries[] {
  const doc = xml.parse(chartXml) as Node;
  const find = (node: unknown): Node[] => {
    if (!node || typeof node !== 'object') return [];
    if (Array.isArray(node)) return node.flatMap(find);
    const here = (node as Node)['c:ser'] as Node[] | undefined;
    return here ?? Object.values(node as Node).flatMap(find);
  };
  return find(doc).map((ser) => {
    const tx = (ser['c:tx'] as Node)['c:strRef'] as Node;
    const cat = ser['c:cat'] as Node;
    const multi = cat['c:multiLvlStrRef'] as Node | undefined;
    const categories = multi ? points(((multi['c:multiLvlStrCache'] as Node)['c:lvl'] as Node[])[0]) : points((cat['c:strRef'] as Node)['c:strCache'] as Node);
    return { name: points(tx['c:strCache'] as Node)[0]!, categories, values: points(((ser['c:val'] as Node)['c:numRef'] as Node)['c:numCache'] as Node) };
  });
}

/** The embedded workbook's one sheet as text by cell reference (shared strings resolved; a number as written; an empty <v> as ''). */
async function embeddedSheet(bytes: Uint8Array): Promise<Map<string, string>> {
  const book = await JSZip.loadAsync(bytes);
  const sst = xml.parse(await book.file('xl/sharedStrings.xml')!.async('string')) as { sst: { si?: Array<{ t?: unknown }> } };
  const shared = (sst.sst.si ?? []).map((si) => textOf(si.t));
  const doc = xml.parse(await book.file('xl/worksheets/sheet1.xml')!.async('string')) as { worksheet: { sheetData: { row?: Array<{ c?: Node[] }> } } };
  const cells = new Map<string, string>();
  for (const row of doc.worksheet.sheetData.row ?? []) {
    for (const c of row.c ?? []) cells.set(String(c['@_r']), c['@_t'] === 's' ? (shared[Number(textOf(c.v))] ?? `<no shared string ${textOf(c.v)}>`) : textOf(c.v));
  }
  return cells;
}

const column = (n: number) => (n <= 26 ? String.fromCharCode(64 + n) : String.fromCharCode(64 + Math.floor((n - 1) / 26)) + String.fromCharCode(65 + ((n - 1) % 26)));

/** The slide's table as rows of cell texts (a merged-over cell left out). */
function slideTable(slideXml: string): string[][] {
  const doc = xml.parse(slideXml) as Node;
  const find = (node: unknown): Node | undefined => {
    if (!node || typeof node !== 'object') return undefined;
    if (Array.isArray(node)) return node.map(find).find((found) => found !== undefined);
    if ('a:tbl' in (node as Node)) return (node as Node)['a:tbl'] as Node;
    return Object.values(node as Node).map(find).find((found) => found !== undefined);
  };
  const table = find(doc)!;
  return ((table['a:tr'] as Node[]) ?? []).map((tr) =>
    ((tr['a:tc'] as Node[]) ?? [])
      .filter((tc) => tc['@_hMerge'] === undefined)
      .map((tc) => (((tc['a:txBody'] as Node | undefined)?.['a:p'] as Node[] | undefined) ?? []).map((p) => ((p['a:r'] as Node[] | undefined) ?? []).map((run) => textOf(run['a:t'])).join('')).join('\n')),
  );
}

/** Row panels as the deck makes them: a run of rows of one variable, the expression rows together. */
function panels(result: TableResult): number[][] {
  const out: number[][] = [];
  result.rows.forEach((row, r) => {
    if (r > 0 && result.rows[r - 1]!.variable === row.variable) out.at(-1)!.push(r);
    else out.push([r]);
  });
  return out;
}

/** Every slide, chart and embedded workbook of a deck made of `tables`, against the engine's tables. */
async function checkDeck(bytes: Uint8Array, tables: Array<{ result: TableResult; statistics: TableStatistics }>, name: string): Promise<void> {
  const deck = await JSZip.loadAsync(bytes);
  let slide = 0;
  for (const { result, statistics } of tables) {
    const json = tableToJSON(result, statistics);
    const width = result.columns.length;
    const oneBanner = result.columns.every((entry) => entry.variable !== undefined && entry.variable === result.columns[0]!.variable);
    const seriesName = (c: number) => inXML(`${result.columns[c]!.label}${marker(result.columnTotals[c]!.stability)} (n=${shown(result.columnTotals[c]!.respondents, 0)})`);
    for (const rows of panels(result)) {
      slide++;
      const where = `${name} slide ${slide}`;
      const figure = (r: number, c: number) => vertical(result, statistics, r, c, `${where} cell (${r}, ${c})`);
      // The chart: a series per banner column over the categories, or (stacked) a series per category over the columns.
      const slideRels = await deck.file(`ppt/slides/_rels/slide${slide}.xml.rels`)!.async('string');
      const chartFile = /Target="(?:\.\.|\/ppt)\/charts\/(chart\d+\.xml)"/.exec(slideRels)![1]!;
      const chartPart = `ppt/charts/${chartFile}`;
      const series = chartSeries(await deck.file(chartPart)!.async('string'));
      const stacked = oneBanner && result.rows[rows[0]!]!.variable !== undefined && !rows.some((r) => result.rows[r]!.multi);
      const expected: ChartSeries[] = stacked
        ? rows.map((r) => ({ name: inXML(result.rows[r]!.label), categories: result.columns.map((_, c) => seriesName(c)), values: result.columns.map((_, c) => chartText(figure(r, c))) }))
        : result.columns.map((_, c) => ({ name: seriesName(c), categories: rows.map((r) => inXML(result.rows[r]!.label)), values: rows.map((r) => chartText(figure(r, c))) }));
      expect(series, `${where} chart`).toEqual(expected);
      covered.charts++;
      // The chart's data sheet (what PowerPoint shows and re-reads on "Edit Data"): the same labels and figures.
      const rels = await deck.file(`ppt/charts/_rels/${chartFile}.rels`)!.async('string');
      const embedded = /Target="(?:\.\.|\/ppt)\/embeddings\/([^"]+\.xlsx)"/.exec(rels)![1]!;
      const sheet = await embeddedSheet(await deck.file(`ppt/embeddings/${embedded}`)!.async('uint8array'));
      expected.forEach((one, s) => {
        expect(sheet.get(`${column(s + 2)}1`), `${where} data sheet series ${s} name`).toBe(one.name);
        one.categories.forEach((category, k) => {
          if (s === 0) expect(sheet.get(`A${k + 2}`), `${where} data sheet category ${k}`).toBe(category);
          const value = sheet.get(`${column(s + 2)}${k + 2}`) ?? '';
          expect(value === '' ? '' : String(Number(value)), `${where} data sheet ${one.name} x ${category}`).toBe(one.values[k]);
        });
      });
      // The slide's table: banner, column labels with key letters, bases, the vertical % with markers and letters.
      const lines = slideTable(await deck.file(`ppt/slides/slide${slide}.xml`)!.async('string'));
      const first = result.columns.some((entry) => entry.variable !== undefined) ? 1 : 0;
      const letter = (c: number) => (statistics.columnLetters[c] ? ` (${statistics.columnLetters[c]})` : '');
      expect(lines[first]!.slice(1), `${where} table column labels`).toEqual(['Total', ...result.columns.map((entry, c) => inXML(`${entry.label}${letter(c)}`))]);
      expect(lines[first + 1], `${where} table base`).toEqual(['Base (respondents)', shown(result.total.respondents, 0) + marker(result.total.stability), ...result.columnTotals.map((total) => shown(total.respondents, 0) + marker(total.stability))]);
      expect(lines[first + 2], `${where} table weighted base`).toEqual(['Base (weighted)', shown(result.total.weighted / result.units, 1), ...result.columnTotals.map((total) => shown(total.weighted / result.units, 1))]);
      rows.forEach((r, k) => {
        const share = result.percentBase === 'total' ? (result.total.weighted === 0 ? Number.NaN : result.rowTotals[r]!.weighted / result.total.weighted) : statistics.rowShare[r]!;
        const cells = result.columns.map((_, c) => {
          const letters = statistics.letters ? lettersFromComparisons(json, r, c) : '';
          if (statistics.letters) expect(statistics.letters[r * width + c], `${where} letters (${r}, ${c})`).toBe(letters);
          return `${percent(figure(r, c))}${marker(result.columnTotals[c]!.stability)}${letters ? ` ${letters}` : ''}`;
        });
        expect(lines[first + 3 + k], `${where} table row ${r}`).toEqual([inXML(result.rows[r]!.label), `${percent(share)}${marker(result.rowTotals[r]!.stability)}`, ...cells]);
        covered.figures += width + 1;
      });
      expect(lines).toHaveLength(first + 3 + rows.length);
      covered.slides++;
    }
  }
  expect(Object.keys(deck.files).filter((file) => /^ppt\/slides\/slide\d+\.xml$/.test(file)), `${name} slides`).toHaveLength(slide);
}

/** A chart value as the chart's XML holds it: the proportion's shortest form, '' when undefined. */
function chartText(value: number): string {
  return Number.isFinite(value) ? String(value) : '';
}

// ——— text ———

/** Every figure line of the text table, read back by the right edges of its figure columns, against the engine. */
function checkText(result: TableResult, statistics: TableStatistics, name: string, text = tableToText(result, statistics)): void {
  const lines = text.split('\n');
  const width = result.columns.length;
  const rule = lines.findIndex((line) => line.includes('┼'));
  const body = lines.slice(rule + 1).filter((line) => line.includes(' │ '));
  // The figures' right edges, from the base's respondents line (every column has one).
  const figuresOf = (line: string) => line.slice(line.indexOf(' │ '));
  const edges: number[] = [];
  for (const match of figuresOf(body[1]!).matchAll(/[\d,]+(?= {3}| \*\*|  \*|$)/g)) edges.push(match.index + match[0].length);
  expect(edges, `${name} text: a figure per column in the base's respondents line`).toHaveLength(width + 1);
  const read = (line: string) =>
    edges.map((edge) => {
      const part = figuresOf(line).padEnd(edge + 3);
      const figure = /(\S+)$/.exec(part.slice(0, edge))?.[1] ?? '';
      return (part.charAt(edge - 1) === ' ' || part.charAt(edge - 1) === '│' ? '' : figure) + part.slice(edge, edge + 3).trim();
    });
  const stats = FIGURES.filter((figure) => statistics.stats.includes(figure.stat));
  let at = 0;
  const expectLine = (values: string[], what: string) => {
    expect(read(body[at]!), `${name} text ${what}`).toEqual(values);
    at++;
  };
  const mark = (text: string, stability: string) => text + marker(stability);
  expectLine([mark(shown(result.total.weighted / result.units, 1), result.total.stability), ...result.columnTotals.map((total) => mark(shown(total.weighted / result.units, 1), total.stability))], 'base weighted');
  expectLine([mark(shown(result.total.respondents, 0), result.total.stability), ...result.columnTotals.map((total) => mark(shown(total.respondents, 0), total.stability))], 'base respondents');
  const json = tableToJSON(result, statistics);
  result.rows.forEach((row, r) => {
    const total = result.rowTotals[r]!;
    const cells = result.columns.map((_, c) => result.cell(r, c));
    expectLine([mark(shown(total.weighted / result.units, 1), total.stability), ...cells.map((cell) => mark(shown(cell.weighted / result.units, 1), cell.stability))], `row ${r} weighted`);
    expectLine([mark(shown(total.respondents, 0), total.stability), ...cells.map((cell) => mark(shown(cell.respondents, 0), cell.stability))], `row ${r} respondents`);
    for (const figure of stats) {
      const values = statistics[figure.field] as Float64Array;
      const inTotal = totalFigure(figure.field, result, statistics, r);
      const totalText = inTotal === undefined ? '' : mark(figureText(figure, inTotal), total.stability);
      const shownValue = (c: number) => (figure.field === 'columnPct' ? vertical(result, statistics, r, c, `${name} text cell (${r}, ${c})`) : values[r * width + c]!);
      expectLine([totalText, ...cells.map((cell, c) => mark(figureText(figure, shownValue(c)), cell.stability))], `row ${r} ${figure.label}`);
      covered.figures += width;
    }
    if (statistics.letters) expectLine(['', ...cells.map((_, c) => lettersFromComparisons(json, r, c))], `row ${r} significance`);
  });
  expect(at, `${name} text: lines read`).toBe(body.length);
}

// ——— banner table (the portal's) ———

/** The expected Total-column figure of a row: the row's share of the base for vertical and table %, 100 % / 100 for horizontal % and index; none for the rest. */
function totalFigure(field: string, result: TableResult, statistics: TableStatistics, r: number): number | undefined {
  const total = result.rowTotals[r]!;
  if (field === 'columnPct' || field === 'tablePct') {
    const share = result.percentBase === 'total' ? (result.total.weighted === 0 ? Number.NaN : total.weighted / result.total.weighted) : statistics.rowShare[r]!;
    if (Number.isFinite(share)) expect(Math.abs(statistics.rowShare[r]! - share), `row ${r} share`).toBeLessThanOrEqual(1e-12);
    else expect(statistics.rowShare[r]).toBeNaN();
    return statistics.rowShare[r]!;
  }
  if (field === 'rowPct') return total.weighted === 0 ? Number.NaN : 1;
  if (field === 'index') return total.weighted === 0 || Number.isNaN(statistics.rowShare[r]) ? Number.NaN : 100;
  return undefined;
}

/** A figure as text and HTML print it, with its low-base marker ('–' unmarked in the banner table). */
function figureText(figure: (typeof FIGURES)[number], value: number): string {
  const plain = figure.shown.percent ? percent(value, figure.shown.digits) : shown(value, figure.shown.digits);
  return 'plusMinus' in figure.shown && figure.shown.plusMinus && Number.isFinite(value) ? `±${plain}` : plain;
}

/** The portal's banner table: every line's values, texts, markers and letters against the engine. */
function checkBanner(layout: BannerLayout, result: TableResult, statistics: TableStatistics, name: string): void {
  const width = result.columns.length;
  const json = tableToJSON(result, statistics);
  const marked = (text: string, stability: string) => (text === '–' ? text : text + marker(stability));
  expect(layout.columns.map((entry) => [entry.label, entry.expr, entry.letter]), `${name} columns`).toEqual(result.columns.map((entry, c) => [entry.label, entry.expr, statistics.columnLetters[c] ?? null]));
  const counts = (line: BannerLayout['bases'][number], total: { weighted: number; respondents: number; stability: string }, cells: Array<{ weighted: number; respondents: number; stability: string }>, what: string) => {
    const expected = (cell: typeof total) => (line.kind === 'weighted' ? { value: cell.weighted / result.units, text: marked(shown(cell.weighted / result.units, 1), cell.stability) } : { value: cell.respondents, text: marked(shown(cell.respondents, 0), cell.stability) });
    expect([line.total, ...line.cells].map((figure) => ({ value: figure!.value, text: figure!.text })), `${name} ${what} ${line.kind}`).toEqual([total, ...cells].map(expected));
  };
  layout.bases.forEach((line) => counts(line, result.total, result.columnTotals, 'base'));
  expect(layout.rows.map((row) => [row.label, row.expr]), `${name} rows`).toEqual(result.rows.map((row) => [row.label, row.expr]));
  for (const row of layout.rows) {
    const r = row.row;
    const cells = result.columns.map((_, c) => result.cell(r, c));
    const figures = FIGURES.filter((figure) => statistics.stats.includes(figure.stat));
    expect(row.lines.map((line) => line.name), `${name} row ${r} lines`).toEqual(['Weighted', 'Respondents', ...figures.map((figure) => figure.label.charAt(0).toUpperCase() + figure.label.slice(1))]);
    counts(row.lines[0]!, result.rowTotals[r]!, cells, `row ${r}`);
    counts(row.lines[1]!, result.rowTotals[r]!, cells, `row ${r}`);
    figures.forEach((figure, k) => {
      const line = row.lines[2 + k]!;
      const values = statistics[figure.field] as Float64Array;
      const value = (c: number) => (figure.field === 'columnPct' ? vertical(result, statistics, r, c, `${name} cell (${r}, ${c})`) : values[r * width + c]!);
      const total = totalFigure(figure.field, result, statistics, r);
      if (total === undefined) expect(line.total, `${name} row ${r} ${figure.label} total`).toBeUndefined();
      else expect([line.total!.value, line.total!.text], `${name} row ${r} ${figure.label} total`).toEqual([total, marked(figureText(figure, total), result.rowTotals[r]!.stability)]);
      line.cells.forEach((cell, c) => {
        const at = `${name} cell (${r}, ${c}) ${figure.label}`;
        if (Number.isNaN(value(c))) expect(cell.value, at).toBeNaN();
        else expect(cell.value, at).toBe(value(c));
        expect(cell.text, at).toBe(marked(figureText(figure, value(c)), cells[c]!.stability));
        expect([cell.respondents, cell.stability], at).toEqual([cells[c]!.respondents, cells[c]!.stability]);
        if (figure.field === 'columnPct') expect(cell.letters ?? '', `${at} letters`).toBe(lettersFromComparisons(json, r, c));
      });
      covered.figures += width;
    });
  }
}

/**
 * The table a JSON document describes (tableFromJson), after checking it holds the library's
 * table: the same entries and respondents, and Σw equal but for the last bits of a double.
 */
function sameTable(json: TableJson, result: TableResult, name: string): { result: TableResult; statistics: TableStatistics } {
  const again = tableFromJson(json);
  expect(again.result.rows.map((row) => [row.label, row.expr]), `${name} rows`).toEqual(result.rows.map((row) => [row.label, row.expr]));
  expect(again.result.columns.map((column) => [column.label, column.expr]), `${name} columns`).toEqual(result.columns.map((column) => [column.label, column.expr]));
  const near = (a: { weighted: number; respondents: number }, b: { weighted: number; respondents: number }, at: string) => {
    expect(a.respondents, at).toBe(b.respondents);
    expect(Math.abs(a.weighted - b.weighted), at).toBeLessThanOrEqual(Math.abs(b.weighted) * 1e-12);
  };
  near(again.result.total, result.total, `${name} total`);
  result.rows.forEach((_, r) => near(again.result.rowTotals[r]!, result.rowTotals[r]!, `${name} row total ${r}`));
  result.columns.forEach((_, c) => near(again.result.columnTotals[c]!, result.columnTotals[c]!, `${name} column total ${c}`));
  result.rows.forEach((_, r) => result.columns.forEach((_c, c) => near(again.result.cell(r, c), result.cell(r, c), `${name} cell (${r}, ${c})`)));
  return { result: again.result, statistics: again.statistics! };
}

// ——— tab book XLSX ———

/** Every table of a tab book's workbook (both layouts) against the engine's tables for its stubs. */
async function checkBookXLSX(path: string, tables: Array<{ stub: string; result: TableResult; statistics: TableStatistics }>, layout: 'sheets' | 'long' | 'table', name: string): Promise<void> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(path);
  // A table's workbook has its one sheet and no index: the sheet stands in for both.
  const sheets = layout === 'table' ? [workbook.worksheets[0]!, ...workbook.worksheets] : workbook.worksheets;
  const index = sheets[0]!;
  const indexRows: Array<[unknown, unknown, unknown, unknown]> = [];
  index.eachRow((row) => {
    if (/^Table \d+$/.test(String((row.getCell(1).value as { text?: string })?.text ?? row.getCell(1).value))) indexRows.push([row.getCell(1).value, row.getCell(2).value, row.getCell(3).value, row.getCell(4).value]);
  });
  if (layout !== 'table') expect(indexRows.map((row) => row[3]), `${name} index rows per table`).toEqual(tables.map((table) => table.result.rows.length));
  let sheetAt = 1;
  let line = 0;
  const sheetOf = () => sheets[sheetAt]!;
  const value = (row: number, col: number) => {
    const cell = sheetOf().getCell(row, col);
    // A text with leading or trailing spaces is written as rich text (xml:space="preserve"): its runs joined.
    const raw = cell.value as unknown;
    const text = raw && typeof raw === 'object' && 'richText' in raw ? (raw as { richText: Array<{ text: string }> }).richText.map((run) => run.text).join('') : raw;
    return { value: text as ExcelJS.CellValue, format: cell.numFmt ?? '' };
  };
  if (layout === 'long') line = 1;
  for (const [t, { result, statistics }] of tables.entries()) {
    const where = `${name} ${layout} table ${t + 1}`;
    const width = result.columns.length;
    const json = tableToJSON(result, statistics);
    if (layout !== 'long') {
      sheetAt = 1 + t;
      line = 1;
    }
    // The title, then (sheets) the banner heading over each table; (long) once at the top.
    while (layout !== 'table' && !String(value(line, 1).value ?? '').startsWith(`Table ${t + 1}: `)) line++;
    let baseRow = line;
    while (value(baseRow, 1).value !== 'Base') baseRow++;
    // Rows 1-2 the title and base, then the banner, the column labels and (with sig) the key letters: over each table's sheet, or once over the long sheet.
    const labelsRow = 4;
    const header = labelsRow + (statistics.letters ? 2 : 1);
    if (layout !== 'long') expect(baseRow, `${where} base row`).toBe(header);
    expect(Array.from({ length: width }, (_, c) => value(labelsRow, 4 + c).value), `${where} column labels`).toEqual(result.columns.map((entry) => inXML(entry.label) || null));
    if (statistics.letters) expect(Array.from({ length: width }, (_, c) => value(header - 1, 4 + c).value ?? ''), `${where} key letters`).toEqual(statistics.columnLetters.map((letter) => (letter ? `(${letter})` : '')));
    line = baseRow;
    /** A figure line: its name in B, the Total in C and the columns from D, each number under a format marking the cell's stability. */
    const expectFigures = (figureName: string, label: string | null, numbers: Array<{ value: number | string; stability: string }>, what: string) => {
      expect([value(line, 1).value ?? null, value(line, 2).value], `${where} ${what} line`).toEqual([label, figureName]);
      numbers.forEach((expected, k) => {
        const got = value(line, 3 + k);
        if (typeof expected.value === 'string') expect(got.value ?? '', `${where} ${what} column ${k - 1}`).toBe(expected.value);
        else {
          expect(got.value, `${where} ${what} column ${k - 1}`).toBe(expected.value);
          const marked = /"(\*{1,2})"/.exec(got.format)?.[1] ?? '';
          expect(marked, `${where} ${what} column ${k - 1} marker (format ${got.format})`).toBe(marker(expected.stability));
        }
        covered.figures++;
      });
      line++;
    };
    const numberOrDash = (figure: number) => (Number.isFinite(figure) ? figure : '–');
    expectFigures('Weighted', 'Base', [result.total, ...result.columnTotals].map((cell) => ({ value: cell.weighted / result.units, stability: cell.stability })), 'base weighted');
    expectFigures('Respondents', null, [result.total, ...result.columnTotals].map((cell) => ({ value: cell.respondents, stability: cell.stability })), 'base respondents');
    result.rows.forEach((row, r) => {
      // A single table heads each row variable's entries with a line of its own (its heading in A only); a tab book's table, titled by its stub, does not.
      if (layout === 'table' && row.variable !== undefined && row.variable !== result.rows[r - 1]?.variable) {
        expect(String(value(line, 1).value ?? ''), `${where} heading before row ${r}`).not.toBe('');
        expect(Array.from({ length: width + 2 }, (_, k) => value(line, 2 + k).value ?? null), `${where} heading line before row ${r}`).toEqual(Array.from({ length: width + 2 }, () => null));
        line++;
      }
      const total = result.rowTotals[r]!;
      const cells = result.columns.map((_, c) => result.cell(r, c));
      expectFigures('Weighted', inXML(row.label) || null, [total, ...cells].map((cell) => ({ value: cell.weighted / result.units, stability: cell.stability })), `row ${r} weighted`);
      expectFigures('Respondents', null, [total, ...cells].map((cell) => ({ value: cell.respondents, stability: cell.stability })), `row ${r} respondents`);
      for (const figure of FIGURES.filter((one) => statistics.stats.includes(one.stat))) {
        const values = statistics[figure.field] as Float64Array;
        const inTotal = totalFigure(figure.field, result, statistics, r);
        const totalShown = { value: inTotal === undefined ? '' : numberOrDash(inTotal), stability: total.stability };
        const label = figure.label.charAt(0).toUpperCase() + figure.label.slice(1);
        expectFigures(label, null, [totalShown, ...cells.map((cell, c) => ({ value: numberOrDash(figure.field === 'columnPct' ? vertical(result, statistics, r, c, `${where} cell (${r}, ${c})`) : values[r * width + c]!), stability: cell.stability }))], `row ${r} ${figure.label}`);
      }
      if (statistics.letters) expectFigures('Significance', null, [{ value: '', stability: '' }, ...cells.map((_, c) => ({ value: lettersFromComparisons(json, r, c), stability: '' }))], `row ${r} significance`);
    });
    covered.sheets++;
  }
}

async function checkBook(ds: Dataset, spec: Spec, name: string): Promise<void> {
  const stubs = [...new Set(spec.rows.flatMap((axis) => (axis.variable === undefined ? [] : [axis.variable])))];
  if (stubs.length === 0) return;
  const banner = spec.columns.map((axis) => (axis.variable !== undefined ? axis.variable : axis.label === undefined ? axis.expr! : { expr: axis.expr!, label: axis.label }));
  const stats = spec.stats;
  let book;
  try {
    book = await tabbook(ds, { banner, stubs, base: spec.base, stats, missing: spec.missing });
  } catch (error) {
    expect((error as { code?: string }).code, `${name} tab book: ${(error as Error).message}`).toBeTypeOf('string');
    return;
  }
  // Each table is the engine's own table of the stub under the banner.
  const tables = [];
  for (const [t, stub] of stubs.entries()) {
    const result = await ds.table({ base: spec.base, rows: [{ variable: stub }], columns: banner.map((item) => (typeof item === 'string' ? (ds.info.variables.some((variable) => variable.name === item) ? { variable: item } : { expr: item }) : item)), missing: spec.missing });
    const bookTable = book.tables[t]!;
    expect(bookTable.result.rows.map((row) => [row.label, row.expr]), `${name} book table ${t + 1} rows`).toEqual(result.rows.map((row) => [row.label, row.expr]));
    expect(bookTable.result.columns.map((entry) => [entry.label, entry.expr]), `${name} book table ${t + 1} columns`).toEqual(result.columns.map((entry) => [entry.label, entry.expr]));
    result.rows.forEach((_, r) => result.columns.forEach((_c, c) => expect([bookTable.result.cell(r, c).respondents, bookTable.result.cell(r, c).weighted], `${name} book table ${t + 1} cell (${r}, ${c})`).toEqual([result.cell(r, c).respondents, result.cell(r, c).weighted])));
    tables.push({ stub, result: bookTable.result, statistics: bookTable.statistics });
  }
  for (const layout of ['sheets', 'long'] as const) {
    const path = join(dir, `book-${covered.books}-${layout}.xlsx`);
    await writeTabbook(book, path, { layout });
    await checkBookXLSX(path, tables, layout, `${name} book`);
  }
  // A deck needs the vertical % (the command adds vpct to --stats for one); without it the library refuses, naming stats.
  const deckPath = join(dir, `book-${covered.books}.pptx`);
  if (!stats.includes('vpct')) {
    await expect(writeTabbook(book, deckPath)).rejects.toMatchObject({ code: 'invalid_option', details: { field: 'stats' } });
    book = await tabbook(ds, { banner, stubs, base: spec.base, stats: [...stats, 'vpct'], missing: spec.missing });
  }
  await writeTabbook(book, deckPath);
  await checkDeck(readFileSync(deckPath), book.tables.map(({ result, statistics }) => ({ result, statistics })), `${name} book deck`);
  covered.books++;
}

async function checkSpec(ds: Dataset, spec: Spec, name: string): Promise<void> {
  let result: TableResult;
  let statistics: TableStatistics;
  try {
    result = await ds.table({ base: spec.base, rows: spec.rows.map(toItem), columns: spec.columns.map(toItem), missing: spec.missing, percentBase: spec.percentBase });
    statistics = tableStatistics(result, { stats: [...new Set<StatName>(['vpct', ...spec.stats])] });
  } catch (error) {
    // A refusal names its field (valid percentages with a multi-response variable, for one): never a crash.
    expect((error as { code?: string }).code, `${name}: ${(error as Error).message}`).toBeTypeOf('string');
    covered.refused++;
    return;
  }
  covered.tables++;
  checkText(result, statistics, name);
  await checkDeck(await tablesToPPTX([{ result, statistics }]), [{ result, statistics }], name);
  // The portal and POST /tables write a deck and a banner table again from the JSON answer (tableFromJson): the same figures.
  const again = tableFromJson(JSON.parse(JSON.stringify(tableToJSON(result, statistics))) as TableJson);
  await checkDeck(await tablesToPPTX([{ result: again.result, statistics: again.statistics! }]), [{ result, statistics }], `${name} (from JSON)`);
  checkBanner(bannerLayout(again.result, again.statistics), result, statistics, `${name} banner (from JSON)`);
  checkBanner(bannerLayout(result, statistics), result, statistics, `${name} banner`);
  if (spec.percentBase === 'total') await checkBook(ds, spec, name);
}

describe('every deliverable reads back as the engine table', () => {
  const datasets: Record<string, Dataset> = {};
  beforeAll(async () => {
    datasets.gss = await openDataset(inject('testDatasets').gss);
    datasets.nhanes = await openDataset(inject('testDatasets').nhanes);
    datasets.odd = await oddDataset();
  });
  afterAll(async () => {
    for (const ds of Object.values(datasets)) await ds.close();
  });

  it.each(['odd', 'gss', 'nhanes'])('%s: random tables as text and PowerPoint, and as tab books in XLSX (both layouts) and PowerPoint', { timeout: 60_000 + RUNS * 15_000 }, async (key) => {
    const ds = datasets[key]!;
    const next = seededRandom(SEED * 1000 + key.length);
    for (let run = 0; run < RUNS; run++) {
      const spec = makeSpec(ds, next);
      await checkSpec(ds, spec, `${key}#${run} ${JSON.stringify(spec)}`);
    }
    console.log(`${key} (seed ${SEED}, ${RUNS} runs): ${JSON.stringify(covered)} so far`);
  });
});

describe('PowerPoint chart data sheet', () => {
  it('holds the series names and category labels the chart shows: "X-Axis", an empty label, spaces at the ends, and a 0 % as 0', async () => {
    const ds = await openDataset(inject('testDatasets').gss);
    try {
      const result = await ds.table({
        base: 'year=2024',
        rows: [{ expr: 'sex=1', label: 'X-Axis' }, { expr: 'sex=2', label: '\u0007' }, { expr: 'degree=3,4', label: '  padded  ' }, { expr: 'sex=1 AND NOT sex=1', label: 'nobody' }],
        columns: [{ variable: 'race' }, { expr: 'sex=1', label: 'X-Axis' }],
      });
      const statistics = tableStatistics(result, { stats: ['vpct', 'sig'] });
      await checkDeck(await tablesToPPTX([{ result, statistics }]), [{ result, statistics }], 'labels');
    } finally {
      await ds.close();
    }
  });
});

describe('POST /v1/tables (JSON, XLSX, PPTX) and POST /v1/tabbooks over HTTP hold the engine table', () => {
  it.each(['odd', 'gss', 'nhanes'])('%s: random tables', { timeout: 60_000 + RUNS * 15_000 }, async (key) => {
    const ds = key === 'odd' ? await oddDataset() : await openDataset(inject('testDatasets')[key as 'gss' | 'nhanes']);
    const folder = tempDir();
    const keys = await makeKeyFile(folder);
    const handler = await createCrosstabHandler({ datasets: [ds], keys: keys.path, usage: join(folder, 'usage.ndjson') });
    const server = await shims[0]!.start(handler);
    try {
      const next = seededRandom(SEED * 7000 + key.length);
      for (let run = 0; run < RUNS; run++) {
        const spec = makeSpec(ds, next);
        const name = `HTTP ${key}#${run} ${JSON.stringify(spec)}`;
        const stats = [...new Set<StatName>(['vpct', ...spec.stats])];
        const axis = (item: Axis) => (item.variable !== undefined ? { Variable: item.variable } : item.label === undefined ? { Expression: item.expr! } : { Expression: item.expr!, Label: item.label });
        const body = { SurveyCode: ds.info.survey, PopulationBaseCode: spec.base, Rows: spec.rows.map(axis), Columns: spec.columns.map(axis), Statistics: stats, Missing: spec.missing, PercentBase: spec.percentBase };
        const post = (accept: string) => fetch(`${server.origin}/v1/tables`, { method: 'POST', headers: { 'service-engine-authorizer': keys.all, 'content-type': 'application/json', accept }, body: JSON.stringify(body) });
        let result: TableResult;
        let statistics: TableStatistics;
        try {
          result = await ds.table({ base: spec.base, rows: spec.rows.map(toItem), columns: spec.columns.map(toItem), missing: spec.missing, percentBase: spec.percentBase });
          statistics = tableStatistics(result, { stats });
        } catch (error) {
          // The service refuses what the library refuses, with a 400 naming a field: never a 500.
          const reply = await post('application/json');
          const answer = (await reply.json()) as { error?: { code: string; field?: string; message: string } };
          expect(reply.status, `${name}: ${(error as Error).message} / ${JSON.stringify(answer)}`).toBe(400);
          covered.refused++;
          continue;
        }
        const reply = await post('application/json');
        const answer = (await reply.json()) as { Table: TableJson };
        expect(reply.status, `${name}: ${JSON.stringify(answer).slice(0, 300)}`).toBe(200);
        expect(answer.Table, `${name} JSON`).toEqual(JSON.parse(JSON.stringify(tableToJSON(result, statistics))));
        const xlsx = await post('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
        expect(xlsx.status, name).toBe(200);
        const xlsxPath = join(dir, `http-${key}-${run}.xlsx`);
        writeFileSync(xlsxPath, new Uint8Array(await xlsx.arrayBuffer()));
        await checkBookXLSX(xlsxPath, [{ stub: '', result, statistics }], 'table', `${name} XLSX`);
        const deck = await post('application/vnd.openxmlformats-officedocument.presentationml.presentation');
        expect(deck.status, name).toBe(200);
        await checkDeck(new Uint8Array(await deck.arrayBuffer()), [{ result, statistics }], `${name} PPTX`);
        covered.tables++;
        // POST /v1/tabbooks: the spec's row variables as stubs under its columns as banner (an expression with a comma in parentheses).
        const stubs = [...new Set(spec.rows.flatMap((item) => (item.variable === undefined ? [] : [item.variable])))];
        if (stubs.length === 0) continue;
        const banner = spec.columns.map((item) => item.variable ?? (item.expr!.includes(',') ? `(${item.expr})` : item.expr!));
        const bookReply = await fetch(`${server.origin}/v1/tabbooks`, {
          method: 'POST',
          headers: { 'service-engine-authorizer': keys.all, 'content-type': 'application/json', accept: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' },
          body: JSON.stringify({ SurveyCode: ds.info.survey, Banner: banner, Stubs: stubs, PopulationBaseCode: spec.base, Statistics: stats, Missing: spec.missing }),
        });
        let book;
        try {
          book = await tabbook(ds, { banner, stubs, base: spec.base, stats, missing: spec.missing });
        } catch (error) {
          expect(bookReply.status, `${name} tab book: ${(error as Error).message} / ${await bookReply.text()}`).toBe(400);
          continue;
        }
        expect(bookReply.status, `${name} tab book`).toBe(200);
        const bookPath = join(dir, `http-${key}-${run}-book.xlsx`);
        writeFileSync(bookPath, new Uint8Array(await bookReply.arrayBuffer()));
        await checkBookXLSX(bookPath, book.tables.map((table) => ({ stub: table.stub, result: table.result, statistics: table.statistics })), 'sheets', `${name} tab book`);
        covered.books++;
      }
    } finally {
      await server.close();
      await handler.close();
      await ds.close();
    }
    console.log(`HTTP ${key} (seed ${SEED}, ${RUNS} runs): ${JSON.stringify(covered)} so far`);
  });
});

describe('crosstab table and crosstab tabbook (the command, spawned): text, PPTX and the tab book XLSX hold the engine table', () => {
  beforeAll(() => requireBuiltCli());
  it.each(['odd', 'gss', 'nhanes'])('%s: random tables', { timeout: 60_000 + RUNS * 20_000 }, async (key) => {
    const ds = key === 'odd' ? await oddDataset() : await openDataset(inject('testDatasets')[key as 'gss' | 'nhanes']);
    const path = key === 'odd' ? join(dir, 'odd.arrow') : inject('testDatasets')[key as 'gss' | 'nhanes'];
    try {
      const next = seededRandom(SEED * 9000 + key.length);
      for (let run = 0; run < Math.ceil(RUNS / 4); run++) {
        // The command takes no label for an expression: its label is the expression.
        const generated = makeSpec(ds, next);
        const spec: Spec = { ...generated, rows: generated.rows.map(({ label: _label, ...axis }) => axis), columns: generated.columns.map(({ label: _label, ...axis }) => axis) };
        const name = `CLI ${key}#${run} ${JSON.stringify(spec)}`;
        const stats = [...new Set<StatName>(['vpct', ...spec.stats])];
        const axisFlags = (axes: Axis[], one: string, whole: string) => axes.flatMap((axis) => (axis.variable !== undefined ? [whole, axis.variable] : [one, axis.expr!]));
        const args = [path, '--base', spec.base, ...axisFlags(spec.rows, '--row', '--rows'), ...axisFlags(spec.columns, '--column', '--columns'), '--stats', stats.join(','), '--missing', spec.missing, '--percent-base', spec.percentBase];
        let result: TableResult;
        let statistics: TableStatistics;
        try {
          result = await ds.table({ base: spec.base, rows: spec.rows.map(toItem), columns: spec.columns.map(toItem), missing: spec.missing, percentBase: spec.percentBase });
          statistics = tableStatistics(result, { stats });
        } catch {
          const refused = await runTable(args);
          expect([refused.code, refused.stdout.length], `${name}: ${refused.stderr}`).toEqual([1, 0]);
          covered.refused++;
          continue;
        }
        // The command computes in its own process, where sums may be taken in another order (the last bits of a
        // double): its deliverables are checked against its own JSON, and that JSON against the library's table.
        const jsonRun = await runTable([...args, '--format', 'json']);
        expect([jsonRun.code, jsonRun.stderr], name).toEqual([0, '']);
        ({ result, statistics } = sameTable(JSON.parse(jsonRun.stdout.toString()) as TableJson, result, `${name} JSON`));
        const text = await runTable(args);
        expect([text.code, text.stderr], name).toEqual([0, '']);
        checkText(result, statistics, `${name} text`, text.stdout.toString());
        const deckPath = join(dir, `cli-${key}-${run}.pptx`);
        const deck = await runTable([...args, '--format', 'pptx', '--out', deckPath]);
        expect(deck.code, `${name}: ${deck.stderr}`).toBe(0);
        await checkDeck(readFileSync(deckPath), [{ result, statistics }], `${name} PPTX`);
        covered.tables++;
        // The same spec as a tab book: its row variables as stubs under its columns as banner (an expression with a comma in parentheses).
        const stubs = [...new Set(spec.rows.flatMap((axis) => (axis.variable === undefined ? [] : [axis.variable])))];
        if (stubs.length === 0 || spec.percentBase === 'valid' || stubs.some((stub) => stub.includes(','))) continue;
        const banner = spec.columns.map((axis) => (axis.variable ?? (axis.expr!.includes(',') ? `(${axis.expr})` : axis.expr!)));
        if (banner.some((item) => item.includes(',') && !item.startsWith('('))) continue;
        const bookPath = join(dir, `cli-${key}-${run}.xlsx`);
        const bookArgs = [join(process.cwd(), 'dist', 'cli', 'main.js'), 'tabbook', path, '--banner', banner.join(','), '--stubs', stubs.join(','), '--base', spec.base, '--stats', stats.join(','), '--missing', spec.missing, '--execution', 'inline'];
        const made = spawnSync(process.execPath, [...bookArgs, '--out', bookPath], { encoding: 'utf8' });
        const bookJsonPath = join(dir, `cli-${key}-${run}.json`);
        const madeJson = spawnSync(process.execPath, [...bookArgs, '--out', bookJsonPath], { encoding: 'utf8' });
        let book;
        try {
          book = await tabbook(ds, { banner, stubs, base: spec.base, stats, missing: spec.missing });
        } catch {
          expect(made.status, `${name} tab book: ${made.stderr}`).toBe(1);
          continue;
        }
        expect([made.status, madeJson.status], `${name} tab book: ${made.stderr}`).toEqual([0, 0]);
        const bookJson = JSON.parse(readFileSync(bookJsonPath, 'utf8')) as { tables: Array<{ stub: string; table: TableJson }> };
        const tables = bookJson.tables.map((table, t) => ({ stub: table.stub, ...sameTable(table.table, book.tables[t]!.result, `${name} tab book JSON table ${t + 1}`) }));
        await checkBookXLSX(bookPath, tables, 'sheets', `${name} tab book`);
        covered.books++;
      }
    } finally {
      await ds.close();
    }
    console.log(`CLI ${key} (seed ${SEED}, ${Math.ceil(RUNS / 4)} runs): ${JSON.stringify(covered)} so far`);
  });
});
