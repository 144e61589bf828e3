// `crosstab table --chart svg` and `crosstab table --format pptx`: the SVG parsed and the
// deck's chart XML read back hold exactly the vertical % that `crosstab table --format json`
// prints for the same spec; LibreOffice Impress opens the deck and prints it to PNG.
// Spawns dist/cli/main.js: run `npm run build:ts` first.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TableJson } from '../src/report/index.js';
import { requireBuiltCli, runTable } from './report/support.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-chart-cli-'));
const gss = () => inject('testDatasets').gss;
beforeAll(() => requireBuiltCli());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function tableJson(args: string[]): Promise<TableJson> {
  const { code, stdout, stderr } = await runTable([...args, '--format', 'json']);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return JSON.parse(stdout.toString()) as TableJson;
}

type Node = Record<string, unknown>;
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', isArray: (_name: string, _path: string, _leaf: boolean, attribute: boolean) => !attribute, parseAttributeValue: false, parseTagValue: false });

/** Every element named `name` under `node`, depth first. */
function elements(node: unknown, name: string, found: Node[] = []): Node[] {
  if (Array.isArray(node)) for (const child of node) elements(child, name, found);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node as Node)) {
      if (key.startsWith('@')) continue;
      if (key === name) for (const child of value as Node[]) found.push(child);
      elements(value, name, found);
    }
  }
  return found;
}
/** An element's text: the parser gives a text-only element as its string. */
const text = (node: Node | string): string => {
  if (typeof node === 'string') return node;
  const value = node['#text'] as string | string[] | undefined;
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
};
const percent = (value: number) => `${(100 * value).toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })}%`;

describe('crosstab table --chart svg', () => {
  // Two banner variables: grouped bars, one per banner column for each row category.
  const grouped = () => ['--base', 'year=2024', '--rows', 'degree', '--columns', 'sex', '--columns', 'race', '--missing', 'hide'];
  it('draws a bar per row category and banner column holding the table vertical %, with its value as text, title and desc', async () => {
    const json = await tableJson([gss(), ...grouped()]);
    const run = await runTable([gss(), ...grouped(), '--chart', 'svg']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const svg = parser.parse(run.stdout.toString()) as Node;
    const root = elements(svg, 'svg')[0]!;
    expect(root['@role']).toBe('img');
    expect(root['@aria-labelledby']).toBe('chart-title chart-desc');
    // The title is the heading drawn on the chart (the dataset's name).
    expect(text(elements(root, 'title')[0]!).length).toBeGreaterThan(0);
    expect(text(elements(root, 'title')[0]!)).toBe(text(elements(root, 'text')[0]!));
    expect(text(elements(root, 'desc')[0]!)).toContain('grouped bars of the vertical %');
    const bars = elements(root, 'rect').filter((rect) => rect['@data-value'] !== undefined);
    expect(bars).toHaveLength(json.rows.length * json.columns.length);
    for (const bar of bars) {
      const row = Number(bar['@data-row']);
      const column = Number(bar['@data-column']);
      const figure = json.cells[row]![column]!.columnPct!;
      expect(Number(bar['@data-value'])).toBe(figure);
      expect(bar['@aria-label']).toBe(`${json.rows[row]!.label}, ${json.columns[column]!.label}${markerOf(json, column)}: ${percent(figure)}`);
    }
    // Each bar's value as text beside it.
    const labels = elements(root, 'text').filter((node) => node['@data-row'] !== undefined);
    expect(labels).toHaveLength(bars.length);
    for (const label of labels) expect(text(label)).toBe(percent(json.cells[Number(label['@data-row'])]![Number(label['@data-column'])]!.columnPct!) + markerOf(json, Number(label['@data-column'])));
    // The legend names each banner column with its base.
    const legend = elements(root, 'g').filter((g) => g['@aria-label'] === 'legend')[0]!;
    expect(elements(legend, 'text').map(text)).toEqual(json.columns.map((column, index) => `${column.label}${markerOf(json, index)} (n=${json.columnTotals[index]!.respondents.toLocaleString('en-US')})`));
    expect(elements(root, 'text').map(text)).toContain(`Base: year=2024 · ${json.total.respondents.toLocaleString('en-US')} respondents · weighted ${json.total.weighted.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })}`);
  });

  it('marks a banner column of 30 respondents or fewer with ** and draws its bars pale, one of 31-60 with *', async () => {
    const args = [gss(), '--base', 'year=2024', '--rows', 'polviews', '--missing', 'hide', '--column', 'degree=4 and race=3 and sex=1', '--column', 'degree=0 and race=3', '--column', 'degree=1'];
    const json = await tableJson(args);
    expect(json.columnTotals.map((total) => total.stability)).toEqual(['very-unstable', 'caution', 'stable']);
    const run = await runTable([...args, '--chart', 'svg']);
    expect(run.code).toBe(0);
    const root = parser.parse(run.stdout.toString()) as Node;
    const bars = elements(root, 'rect').filter((rect) => rect['@data-value'] !== undefined);
    expect(bars.filter((bar) => bar['@data-column'] === '0').every((bar) => bar['@fill-opacity'] === '0.4' && String(bar['@aria-label']).includes('**'))).toBe(true);
    expect(bars.filter((bar) => bar['@data-column'] === '1').every((bar) => bar['@fill-opacity'] === undefined && /\* \(|\*:/.test(String(bar['@aria-label'])) && !String(bar['@aria-label']).includes('**'))).toBe(true);
    expect(bars.filter((bar) => bar['@data-column'] === '2').every((bar) => bar['@fill-opacity'] === undefined && !String(bar['@aria-label']).includes('*'))).toBe(true);
    expect(elements(root, 'text').map(text)).toContain('* use with caution: 31–60 respondents; ** very unstable: 30 or fewer');
  });

  it('stacks the categories of each banner column when the banner is one variable', async () => {
    const args = [gss(), '--base', 'year=2024', '--rows', 'degree', '--columns', 'sex'];
    const json = await tableJson(args);
    const run = await runTable([...args, '--chart', 'svg']);
    expect(run.code).toBe(0);
    const root = parser.parse(run.stdout.toString()) as Node;
    expect(text(elements(root, 'desc')[0]!)).toContain('stacked bars');
    const bars = elements(root, 'rect').filter((rect) => rect['@data-value'] !== undefined);
    expect(bars).toHaveLength(json.rows.length * json.columns.length);
    for (const bar of bars) expect(Number(bar['@data-value'])).toBe(json.cells[Number(bar['@data-row'])]![Number(bar['@data-column'])]!.columnPct);
    // A column's segments cover the whole bar: its categories add up to the column.
    for (let column = 0; column < json.columns.length; column++) {
      const widths = bars.filter((bar) => Number(bar['@data-column']) === column).map((bar) => Number(bar['@width']));
      expect(widths.reduce((sum, width) => sum + width, 0)).toBeCloseTo(440, 0);
    }
  });

  it('refuses --chart with another --format, and an unknown chart kind, naming the flag', async () => {
    const both = await runTable([gss(), '--rows', 'degree', '--columns', 'sex', '--chart', 'svg', '--format', 'csv']);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain('--chart svg writes the chart');
    const unknown = await runTable([gss(), '--rows', 'degree', '--columns', 'sex', '--chart', 'png']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('--chart must be svg');
  });
});

function markerOf(json: TableJson, column: number): string {
  const stability = json.columnTotals[column]!.stability;
  return stability === 'very-unstable' ? '**' : stability === 'caution' ? '*' : '';
}

/** The cached values of each series of each chart of a deck: chart file → series → values (null for an empty point). */
async function chartValues(path: string): Promise<Map<string, { name: string; categories: string[]; values: (number | null)[] }[]>> {
  const zip = await JSZip.loadAsync(readFileSync(path));
  const charts = Object.keys(zip.files)
    .filter((name) => /^ppt\/charts\/chart\d+\.xml$/.test(name))
    .sort((a, b) => Number(/(\d+)\.xml$/.exec(a)![1]) - Number(/(\d+)\.xml$/.exec(b)![1]));
  const found = new Map<string, { name: string; categories: string[]; values: (number | null)[] }[]>();
  for (const name of charts) {
    const xml = parser.parse(await zip.file(name)!.async('string')) as Node;
    found.set(
      name,
      elements(xml, 'c:ser').map((series) => {
        const points = (cache: Node) => {
          const count = Number(elements(cache, 'c:ptCount')[0]!['@val']);
          const out: (string | null)[] = new Array(count).fill(null);
          for (const point of elements(cache, 'c:pt')) out[Number(point['@idx'])] = text(elements(point, 'c:v')[0]!);
          return out;
        };
        const title = elements(elements(series, 'c:tx')[0]!, 'c:v')[0]!;
        return {
          name: text(title),
          // pptxgenjs writes the category labels as a one-level multiLvlStrCache.
          categories: points(elements(elements(series, 'c:cat')[0]!, 'c:multiLvlStrCache')[0]!).map(String),
          values: points(elements(elements(series, 'c:val')[0]!, 'c:numCache')[0]!).map((value) => (value === null || value === '' ? null : Number(value))),
        };
      }),
    );
  }
  return found;
}

describe('crosstab table --format pptx', () => {
  const args = () => [gss(), '--base', 'year=2024', '--rows', 'degree', '--rows', 'polviews', '--columns', 'sex', '--columns', 'race', '--stats', 'vpct,sig', '--missing', 'hide'];

  it('puts a slide per row variable whose native chart data holds exactly the table vertical %', async () => {
    const json = await tableJson(args());
    const out = join(dir, 'table.pptx');
    const run = await runTable([...args(), '--format', 'pptx', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`wrote ${out} (pptx`);
    const zip = await JSZip.loadAsync(readFileSync(out));
    const slides = Object.keys(zip.files).filter((name) => /^ppt\/slides\/slide\d+\.xml$/.test(name));
    expect(slides).toHaveLength(2);
    const charts = [...(await chartValues(out)).values()];
    expect(charts).toHaveLength(2);
    const variables = ['degree', 'polviews'];
    let checked = 0;
    for (const [index, series] of charts.entries()) {
      const rows = json.rows.flatMap((entry, row) => (entry.variable === variables[index] ? [row] : []));
      // Grouped: a series per banner column over the row variable's categories.
      expect(series).toHaveLength(json.columns.length);
      for (const [column, one] of series.entries()) {
        expect(one.name.startsWith(`${json.columns[column]!.label}`)).toBe(true);
        expect(one.categories).toEqual(rows.map((row) => json.rows[row]!.label));
        expect(one.values).toEqual(rows.map((row) => json.cells[row]![column]!.columnPct));
        checked += one.values.length;
      }
    }
    expect(checked).toBe(json.rows.length * json.columns.length);
    // The native table: every vertical % with its letters, as the text output shows it.
    const slide = await zip.file('ppt/slides/slide1.xml')!.async('string');
    expect(slide).toContain('<a:tbl>');
    const cellTexts = [...slide.matchAll(/<a:t>([^<]*)<\/a:t>/g)].map((match) => match[1]);
    for (const row of json.rows.flatMap((entry, at) => (entry.variable === 'degree' ? [at] : []))) {
      for (let column = 0; column < json.columns.length; column++) {
        const cell = json.cells[row]![column]!;
        expect(cellTexts).toContain(`${percent(cell.columnPct!)}${markerOf(json, column)}${cell.letters ? ` ${cell.letters}` : ''}`);
      }
    }
    expect(slide).toContain(`Base: year=2024 · ${json.total.respondents.toLocaleString('en-US')} respondents`);
  });

  it('stacks a single banner variable: a series per row category over the banner columns', async () => {
    const stackedArgs = [gss(), '--base', 'year=2024', '--rows', 'degree', '--columns', 'sex'];
    const json = await tableJson(stackedArgs);
    const out = join(dir, 'stacked.pptx');
    const run = await runTable([...stackedArgs, '--format', 'pptx', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const [series] = [...(await chartValues(out)).values()];
    expect(series!.map((one) => one.name)).toEqual(json.rows.map((row) => row.label));
    for (const [row, one] of series!.entries()) expect(one.values).toEqual(json.columns.map((_, column) => json.cells[row]![column]!.columnPct));
    const zip = await JSZip.loadAsync(readFileSync(out));
    expect(await zip.file('ppt/charts/chart1.xml')!.async('string')).toContain('<c:grouping val="stacked"/>');
  });

  it('refuses --format pptx without --out', async () => {
    const run = await runTable([gss(), '--rows', 'degree', '--columns', 'sex', '--format', 'pptx']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('--format pptx writes a PowerPoint file');
  });
});

describe('crosstab tabbook --format pptx', () => {
  it('puts a slide per stub whose chart data holds exactly the vertical % of crosstab table for that stub', async () => {
    const out = join(dir, 'book.pptx');
    const made = spawnSync(process.execPath, [join(process.cwd(), 'dist', 'cli', 'main.js'), 'tabbook', gss(), '--banner', 'sex,race', '--stubs', 'relig,fefam', '--base', 'year=2024', '--stats', 'vpct,sig', '--out', out], { encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
    expect(made.stderr).toContain(`wrote ${out} (pptx, 2 tables)`);
    const charts = [...(await chartValues(out)).values()];
    expect(charts).toHaveLength(2);
    for (const [index, stub] of ['relig', 'fefam'].entries()) {
      // The pool, as tabbook uses: the same plan sums in the same order, to the last bit.
      const json = await tableJson([gss(), '--execution', 'pool', '--base', 'year=2024', '--rows', stub, '--columns', 'sex', '--columns', 'race', '--stats', 'vpct,sig']);
      const series = charts[index]!;
      expect(series).toHaveLength(json.columns.length);
      for (const [column, one] of series.entries()) {
        expect(one.categories).toEqual(json.rows.map((row) => row.label));
        expect(one.values).toEqual(json.rows.map((_, row) => json.cells[row]![column]!.columnPct));
      }
    }
  });
});

/** A system tool: its path, or a failing test under CI=true when it is missing. */
function tool(name: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  return found === '' ? undefined : found;
}

describe('LibreOffice Impress', () => {
  const soffice = tool('soffice');
  const rasterizer = tool('pdftoppm');
  const required = process.env.CI === 'true';
  it.skipIf(!required && (!soffice || !rasterizer))('opens the deck and prints its slides to PDF and PNG (soffice --headless)', () => {
    expect(soffice, 'soffice (Debian libreoffice-impress-nogui) is required').toBeDefined();
    expect(rasterizer, 'pdftoppm (Debian poppler-utils) is required').toBeDefined();
    const out = join(dir, 'print');
    mkdirSync(out);
    const deck = join(out, 'deck.pptx');
    const made = spawnSync(process.execPath, [join(process.cwd(), 'dist', 'cli', 'main.js'), 'table', gss(), '--base', 'year=2024', '--rows', 'degree', '--rows', 'polviews', '--columns', 'sex', '--columns', 'race', '--stats', 'vpct,sig', '--missing', 'hide', '--format', 'pptx', '--out', deck]);
    expect(made.status, made.stderr?.toString()).toBe(0);
    const profile = `file://${join(out, 'profile')}`;
    const converted = spawnSync(soffice!, [`-env:UserInstallation=${profile}`, '--headless', '--convert-to', 'pdf', '--outdir', out, deck], { encoding: 'utf8', timeout: 180_000 });
    expect(converted.status, converted.stderr).toBe(0);
    const pdf = join(out, 'deck.pdf');
    expect(statSync(pdf).size).toBeGreaterThan(10_000);
    const raster = spawnSync(rasterizer!, ['-png', '-r', '60', pdf, join(out, 'slide')]);
    expect(raster.status).toBe(0);
    // Impress printed one page per slide.
    const images = readdirSync(out).filter((name) => name.startsWith('slide') && name.endsWith('.png'));
    expect(images).toHaveLength(2);
    for (const image of images) expect(statSync(join(out, image)).size).toBeGreaterThan(20_000);
    if (process.env['CROSSTAB_KEEP_SLIDES']) for (const image of images) spawnSync('cp', [join(out, image), process.env['CROSSTAB_KEEP_SLIDES']]);
  });
});
