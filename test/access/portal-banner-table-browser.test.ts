// The Tables page's banner table, chart and deck in headless Chromium (playwright-core): GSS
// degree by sex and race (base year=2024, vertical %, index, letters, Rao-Scott). The page's
// Total column and banner headers, base lines, one line per figure, letters beside the
// vertical %, Rao-Scott lines, the chart's SVG values and the downloaded deck's chart values
// are each compared with `crosstab table` on the same spec (JSON, XLSX and text outputs); the
// shading (index or column %, never on a cell of 30 respondents or fewer) and the row labels
// that stay in view when the table scrolls sideways at 390 px are checked in the page. The
// deck is printed by LibreOffice Impress. Screenshots at 1280 and 390 px and the deck's
// slides go to $PORTAL_SCREENSHOTS (default: a temporary folder).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Dataset, TableJson } from '../../src/index.js';
import { repoRoot } from '../support/paths.js';
import { tempDir } from '../http/support.js';
import { startPortalInBrowser, type PortalInBrowser } from './portal-in-browser.js';
import { contrast, OVERFLOW } from '../support/page-checks.js';

const paths = inject('testDatasets');
const SPEC = ['--base', 'year=2024', '--rows', 'degree', '--columns', 'sex', '--columns', 'race', '--stats', 'vpct,index,sig,chisq'];
const cli = (args: string[]): string => execFileSync(process.execPath, [join(repoRoot, 'dist/cli/main.js'), 'table', paths.gss, ...args], { encoding: 'utf8' });
const count = (value: number, digits: number) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const percent = (value: number) => `${count(100 * value, 1)}%`;
const marker = (stability: string) => (stability === 'very-unstable' ? '**' : stability === 'caution' ? '*' : '');

/** A system tool's path, or undefined. */
function tool(name: string): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  return found === '' ? undefined : found;
}

describe('the Tables page as a banner table, chart and deck', () => {
  let portal: PortalInBrowser | undefined;
  let dataset: Dataset;
  let origin: string;
  let page: Page;
  let json: TableJson;
  const shots = process.env['PORTAL_SCREENSHOTS'] ?? tempDir('crosstab-banner-shots-');
  const work = tempDir('crosstab-banner-work-');

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    portal = await startPortalInBrowser({ dataset: paths.gss, prefix: 'crosstab-banner-db-', mustChangePassword: false });
    ({ dataset, origin, page } = portal);
    await portal.signIn('analyst@acme.example');
    await page.waitForURL(/\/portal\/keys/);
    json = JSON.parse(cli([...SPEC, '--format', 'json'])) as TableJson;
  });

  afterAll(async () => {
    await portal?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('lays the table out as the tab book: Total, banner labels, base lines, one line per figure, letters beside the vertical %', async () => {
    await page.goto(`${origin}/portal/tables`);
    await page.getByLabel(/^Base/).fill('year=2024');
    await page.getByLabel(/^Rows/).fill('degree');
    await page.getByLabel(/^Columns/).fill('sex\nrace');
    await page.getByLabel('Index', { exact: true }).check();
    await page.getByLabel('Significance letters').check();
    await page.getByLabel('Chi-square (Rao–Scott)').check();
    await page.getByRole('button', { name: 'Compute table' }).click();
    await page.waitForLoadState();
    expect(await page.getByRole('alert').count()).toBe(0);
    const table = page.locator('#result-table');

    // Headers: Total over two header lines, each banner variable's label over its columns, the columns with their letters.
    expect(await table.locator('thead tr.banners th.total').textContent()).toBe('Total');
    const labelOf = (name: string) => dataset.info.variables.find((variable) => variable.name === name)?.label ?? name;
    const groups = await table.locator('thead th.banner-label').evaluateAll((cells) => cells.map((cell) => ({ text: cell.textContent, span: Number(cell.getAttribute('colspan')) })));
    const columnsOf = (variable: string) => json.columns.filter((column) => column.variable === variable).length;
    expect(groups).toEqual([
      { text: labelOf('sex'), span: columnsOf('sex') },
      { text: labelOf('race'), span: columnsOf('race') },
    ]);
    const heads = await table.locator('thead th.column').allTextContents();
    expect(heads).toEqual(json.columns.map((column) => `${column.label}${column.letter ? ` (${column.letter})` : ''}`));

    // Base lines: weighted (report units) and respondents, Total then every column.
    const baseLine = async (name: string) => table.locator(`tbody.bases tr[data-line="${name}"] td`).allTextContents();
    expect(await baseLine('weighted')).toEqual([json.total, ...json.columnTotals].map((cell) => count(cell.weighted / json.units, 1) + marker(cell.stability)));
    expect(await baseLine('respondents')).toEqual([json.total, ...json.columnTotals].map((cell) => count(cell.respondents, 0) + marker(cell.stability)));

    // The CLI's workbook of the same spec: its Total column per row and line.
    const xlsx = join(work, 'cli.xlsx');
    cli([...SPEC, '--format', 'xlsx', '--out', xlsx]);
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(xlsx);
    const totals = new Map<string, unknown>();
    let current = '';
    book.worksheets[0]!.eachRow((row) => {
      const label = row.getCell(1).value;
      if (typeof label === 'string' && row.getCell(2).value === 'Weighted') current = label;
      if (typeof row.getCell(2).value === 'string') totals.set(`${current}|${String(row.getCell(2).value)}`, row.getCell(3).value);
    });

    // Per row category: one line per figure, in the XLSX's order; each figure equal to the CLI's.
    const categories = await table.locator('tbody.category').all();
    expect(categories).toHaveLength(json.rows.length);
    for (const [r, category] of categories.entries()) {
      expect(await category.locator('tr.category th').textContent()).toBe(json.rows[r]!.label);
      expect(await category.locator('tr.line').evaluateAll((lines) => lines.map((line) => line.getAttribute('data-line')))).toEqual(['weighted', 'respondents', 'vpct', 'index']);
      expect(await category.locator('tr.line th').allTextContents()).toEqual(['Weighted', 'Respondents', 'Vertical %', 'Index']);
      const vpct = category.locator('tr[data-line="vpct"] td');
      const cells = json.cells[r]!;
      expect(Number(await vpct.first().getAttribute('data-value'))).toBe(totals.get(`${json.rows[r]!.label}|Vertical %`));
      const values = await vpct.evaluateAll((tds) => tds.slice(1).map((td) => ({ value: td.getAttribute('data-value'), text: td.firstChild?.textContent ?? '', letters: td.querySelector('.letters')?.textContent ?? '' })));
      expect(values.map((value) => Number(value.value))).toEqual(cells.map((cell) => cell.columnPct));
      expect(values.map((value) => value.text)).toEqual(cells.map((cell) => percent(cell.columnPct!) + marker(cell.stability)));
      expect(values.map((value) => value.letters)).toEqual(cells.map((cell) => cell.letters ?? ''));
      const index = await category.locator('tr[data-line="index"] td').evaluateAll((tds) => tds.map((td) => td.getAttribute('data-value')));
      expect(Number(index[0])).toBe(totals.get(`${json.rows[r]!.label}|Index`));
      expect(index.slice(1).map((value) => (value === 'NaN' ? null : Number(value)))).toEqual(cells.map((cell) => cell.index));
      const respondents = await category.locator('tr[data-line="respondents"] td').allTextContents();
      expect(respondents).toEqual([json.rowTotals[r]!, ...cells].map((cell) => count(cell.respondents, 0) + marker(cell.stability)));
    }

    // Rao-Scott: the lines the CLI prints.
    const printed = cli([...SPEC, '--format', 'text'])
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith('Rao-Scott chi-square'));
    expect(printed).toHaveLength(2);
    expect((await page.locator('#rao-scott li').allTextContents()).map((line) => line.replace(/\.$/, ''))).toEqual(printed);
  });

  it('shades the vertical % by index or column %, with a legend, never a strong colour on 30 respondents or fewer', async () => {
    // Unshaded: the white card shows through.
    const backgrounds = () =>
      page.evaluate<Array<{ background: string; color: string; low: boolean }>>(
        `[...document.querySelectorAll('#result-table tr[data-line="vpct"] td[data-column]')].map((td) => { const style = getComputedStyle(td); return { background: style.backgroundColor === 'rgba(0, 0, 0, 0)' ? 'rgb(255, 255, 255)' : style.backgroundColor, color: style.color, low: td.classList.contains('low') }; })`,
      );
    const respondents = json.cells.flat().map((cell) => cell.respondents);
    expect(respondents.some((n) => n <= 30)).toBe(true);
    for (const mode of ['Index', 'Column %', 'None'] as const) {
      await page.getByRole('radio', { name: mode, exact: true }).check();
      const shown = await backgrounds();
      expect(shown.map((cell) => cell.low)).toEqual(respondents.map((n) => n <= 30));
      for (const cell of shown) {
        expect(contrast(cell.color, cell.background), `${mode}: ${cell.color} on ${cell.background}`).toBeGreaterThanOrEqual(4.5);
        // Grey for a low base: red, green and blue within a few steps of each other.
        if (cell.low) {
          const [r, g, b] = cell.background.match(/\d+/g)!.map(Number) as [number, number, number];
          expect(Math.max(r, g, b) - Math.min(r, g, b)).toBeLessThanOrEqual(8);
        }
      }
      const coloured = new Set(shown.filter((cell) => !cell.low).map((cell) => cell.background));
      expect(coloured.size > 1, mode).toBe(mode !== 'None');
      expect(await page.locator('.legend-index').first().isVisible()).toBe(mode === 'Index');
      expect(await page.locator('.legend-pct').first().isVisible()).toBe(mode === 'Column %');
    }
    await page.getByRole('radio', { name: 'Index', exact: true }).check();
  });

  it('keeps the row labels in view when the table scrolls sideways at 390 px; screenshots at 1280 and 390 px', async () => {
    await page.screenshot({ path: join(shots, 'banner-table-1280.png'), fullPage: true });
    await page.locator('#result-table').screenshot({ path: join(shots, 'banner-table-only-1280.png') });
    await page.setViewportSize({ width: 390, height: 900 });
    expect(await page.evaluate<string>(OVERFLOW)).toBe('');
    const wrap = page.locator('.banner-wrap');
    expect(await wrap.evaluate((element) => element.scrollWidth > element.clientWidth)).toBe(true);
    await wrap.evaluate((element) => (element.scrollLeft = 400));
    const positions = await page.evaluate<{ left: number; stubs: number[]; firstColumn: number }>(
      `(() => ({ left: document.querySelector('.banner-wrap').getBoundingClientRect().left, stubs: [...document.querySelectorAll('#result-table th.stub')].map((stub) => stub.getBoundingClientRect().left), firstColumn: document.querySelector('#result-table thead th.column').getBoundingClientRect().left }))()`,
    );
    expect(positions.firstColumn).toBeLessThan(positions.left);
    for (const left of positions.stubs) expect(Math.abs(left - positions.left)).toBeLessThanOrEqual(1);
    await page.locator('#result-table').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(shots, 'banner-table-scrolled-390.png') });
    await wrap.evaluate((element) => (element.scrollLeft = 0));
    await page.screenshot({ path: join(shots, 'banner-table-390.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('draws the chart of the table as an accessible SVG whose bars hold the table figures', async () => {
    const svg = page.locator('#result-chart svg');
    expect(await svg.getAttribute('role')).toBe('img');
    expect(await svg.getAttribute('aria-labelledby')).toBe('chart-title chart-desc');
    expect(await svg.locator('title#chart-title').textContent()).toBe(dataset.info.name === dataset.info.survey ? dataset.info.name : `${dataset.info.name} (${dataset.info.survey})`);
    expect(await svg.locator('desc').textContent()).toContain('grouped bars of the vertical %');
    const bars = await svg.locator('rect[data-value]').evaluateAll((rects) => rects.map((rect) => ({ row: Number(rect.getAttribute('data-row')), column: Number(rect.getAttribute('data-column')), value: rect.getAttribute('data-value'), label: rect.getAttribute('aria-label') })));
    expect(bars).toHaveLength(json.rows.length * json.columns.length);
    for (const bar of bars) {
      const cell = json.cells[bar.row]![bar.column]!;
      expect(Number(bar.value)).toBe(cell.columnPct);
      expect(bar.label).toBe(`${json.rows[bar.row]!.label}, ${json.columns[bar.column]!.label}${marker(json.columnTotals[bar.column]!.stability)}: ${percent(cell.columnPct!)}`);
      // The page's table shows the same figure for the same cell.
      const shown = await page.locator(`#result-table tbody.category[data-row="${bar.row}"] tr[data-line="vpct"] td[data-column="${bar.column}"]`).getAttribute('data-value');
      expect(Number(shown)).toBe(Number(bar.value));
    }
    const legend = await svg.locator('g[aria-label="legend"] text').allTextContents();
    expect(legend).toEqual(json.columns.map((column, c) => `${column.label}${marker(json.columnTotals[c]!.stability)} (n=${count(json.columnTotals[c]!.respondents, 0)})`));
    expect(await svg.locator('text').allTextContents()).toContain(`Base: year=2024 · ${count(json.total.respondents, 0)} respondents · weighted ${count(json.total.weighted / json.units, 1)}`);
    await page.locator('#result-chart').screenshot({ path: join(shots, 'banner-chart-1280.png') });
  });

  it('downloads the deck: a native chart whose values are the table figures, and a Total column; LibreOffice prints it', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PPTX' }).click()]);
    expect(download.suggestedFilename()).toBe('table-GSS.pptx');
    const deck = join(work, 'table.pptx');
    await download.saveAs(deck);
    const zip = await JSZip.loadAsync(readFileSync(deck));
    const charts = Object.keys(zip.files).filter((name) => /^ppt\/charts\/chart\d+\.xml$/.test(name));
    expect(charts).toHaveLength(1);
    const xml = await zip.file(charts[0]!)!.async('string');
    const series = [...xml.matchAll(/<c:ser>([\s\S]*?)<\/c:ser>/g)].map((match) => {
      const values = /<c:val>[\s\S]*?<\/c:val>/.exec(match[1]!)![0];
      return [...values.matchAll(/<c:pt idx="(\d+)">\s*<c:v>([^<]*)<\/c:v>/g)].map((point) => ({ idx: Number(point[1]), value: Number(point[2]) }));
    });
    // Grouped: a series per banner column over the categories; every value the table's.
    expect(series).toHaveLength(json.columns.length);
    for (const [column, points] of series.entries()) {
      expect(points.map((point) => point.idx)).toEqual(json.rows.map((_, r) => r));
      expect(points.map((point) => point.value)).toEqual(json.rows.map((_, r) => json.cells[r]![column]!.columnPct));
    }
    const slide = await zip.file('ppt/slides/slide1.xml')!.async('string');
    const texts = [...slide.matchAll(/<a:t>([^<]*)<\/a:t>/g)].map((match) => match[1]);
    expect(texts).toContain('Total');
    for (const [r] of json.rows.entries()) expect(texts).toContain(percent(json.rowTotals[r]!.weighted / json.total.weighted) + marker(json.rowTotals[r]!.stability));
    // The deck in Impress: printed to PDF, then PNG, for a look.
    const soffice = tool('soffice');
    const rasterizer = tool('pdftoppm');
    if (process.env.CI !== 'true' && (soffice === undefined || rasterizer === undefined)) return;
    expect(soffice, 'soffice (Debian libreoffice-impress-nogui) is required').toBeDefined();
    expect(rasterizer, 'pdftoppm (Debian poppler-utils) is required').toBeDefined();
    const converted = spawnSync(soffice!, [`-env:UserInstallation=file://${join(work, 'profile')}`, '--headless', '--convert-to', 'pdf', '--outdir', work, deck], { encoding: 'utf8', timeout: 180_000 });
    expect(converted.status, converted.stderr).toBe(0);
    expect(statSync(join(work, 'table.pdf')).size).toBeGreaterThan(10_000);
    expect(spawnSync(rasterizer!, ['-png', '-r', '80', join(work, 'table.pdf'), join(shots, 'banner-deck')]).status).toBe(0);
    const images = readdirSync(shots).filter((name) => name.startsWith('banner-deck') && name.endsWith('.png'));
    expect(images).toHaveLength(1);
  });
});
