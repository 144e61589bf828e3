// The HTML table in a real browser: headless Chromium loads the self-contained page, the heat-map
// cells have the colours of their index, labels, markers and the legend are there, and nothing
// is fetched from elsewhere. Chromium is required (CI installs it: apt-get install -y chromium).
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type TableResult } from '../../src/index.js';
import { LEGEND_INDEXES, indexColour, tableStatistics, tableToHTML, type TableStatistics } from '../../src/report/index.js';
import { chromiumMissing, findChromium } from '../support/chromium.js';

// Runs inside the page (the test's tsconfig has no DOM lib).
declare const getComputedStyle: (element: unknown) => { backgroundColor: string };

const CHROMIUM = findChromium() ?? 'chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

describe('HTML heat map in headless Chromium', () => {
  let dir: string;
  let browser: Browser;
  let page: Page;
  let result: TableResult;
  let statistics: TableStatistics;
  const requests: string[] = [];

  beforeAll(async () => {
    expect(findChromium(), chromiumMissing()).toBeDefined();
    // Under the suite's temp dir (removed after the run); set CROSSTAB_SCREENSHOT_DIR to keep the page and screenshot.
    dir = process.env['CROSSTAB_SCREENSHOT_DIR'] ?? join(inject('testDatasets').dir, 'html-table');
    mkdirSync(dir, { recursive: true });
    const ds = await openDataset(inject('testDatasets').gss);
    try {
      result = await ds.table({ base: 'year=2024', rows: [{ variable: 'degree' }, { variable: 'relig' }], columns: [{ variable: 'sex' }, { variable: 'race' }, 'degree=3..4'] });
    } finally {
      ds.close();
    }
    statistics = tableStatistics(result, { stats: ['vpct', 'index', 'se', 'sig'] });
    const file = join(dir, 'table.html');
    writeFileSync(file, tableToHTML(result, statistics, { title: 'GSS 2024: degree and religion by sex and race', variableLabels: { sex: 'Sex', race: 'Race', degree: 'Highest degree', relig: 'Religious preference' } }));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(pathToFileURL(file).href);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('colours every cell by its index (white at 100, blue below, red above)', async () => {
    const cells = await page.$$eval('td.cell', (tds) =>
      tds.map((td) => ({
        row: Number(td.getAttribute('data-row')),
        column: Number(td.getAttribute('data-column')),
        background: getComputedStyle(td).backgroundColor,
        text: td.textContent ?? '',
      })),
    );
    const width = result.columns.length;
    expect(cells.length).toBe(result.rows.length * width);
    for (const cell of cells) {
      const value = statistics.index![cell.row * width + cell.column]!;
      expect(cell.background, `cell ${cell.row},${cell.column} index ${value}`).toBe(indexColour(value));
      const [red, , blue] = cell.background.match(/\d+/g)!.map(Number);
      if (value > 105) expect(red!).toBeGreaterThan(blue!);
      if (value < 95) expect(blue!).toBeGreaterThan(red!);
    }
    expect(indexColour(100)).toBe('rgb(255, 255, 255)');
    // Less than high school among women: 12.4%, index 121, higher than men (A).
    const women = cells.find((cell) => cell.row === 0 && cell.column === 1)!;
    expect(women.text).toContain('12.4%');
    expect(women.text).toContain('121');
    expect(women.text).toContain('A');
  });

  it('shows labels, banners, letters, markers and the legend', async () => {
    const headers = await page.$$eval('thead th', (ths) => ths.map((th) => th.textContent?.trim()));
    // Each variable's "No answer" column sits under its banner, with no key letter.
    expect(headers).toEqual(['', 'Total', 'Sex', 'Race', '', 'Male (A)', 'Female (B)', 'No answer', 'White (A)', 'Black (B)', 'Other (C)', 'No answer', 'degree=3..4']);
    const rowLabels = await page.$$eval('tbody th', (ths) => ths.map((th) => th.textContent?.trim()));
    expect(rowLabels).toContain('Highest degree');
    expect(rowLabels).toContain('Religious preference');
    expect(rowLabels).toContain('Less than high school');
    expect(rowLabels).toContain('Muslim');
    const width = result.columns.length;
    const markers = await page.$$eval('td.cell', (tds) => tds.map((td) => td.querySelector('.marker')?.textContent ?? ''));
    markers.forEach((marker, at) => {
      const stability = result.cell(Math.floor(at / width), at % width).stability;
      expect(marker).toBe(stability === 'very-unstable' ? '**' : stability === 'caution' ? '*' : '');
    });
    expect(markers).toContain('*');
    expect(markers).toContain('**');
    const legend = await page.$eval('.legend', (div) => div.textContent ?? '');
    expect(legend).toContain('31–60 respondents');
    expect(legend).toContain('30 or fewer');
    expect(legend).toContain('significantly higher');
    const swatches = await page.$$eval('.swatch', (spans) => spans.map((span) => [span.textContent, getComputedStyle(span).backgroundColor]));
    expect(swatches).toEqual(LEGEND_INDEXES.map((value, i) => [`${i === 0 ? '≤' : i === LEGEND_INDEXES.length - 1 ? '≥' : ''}${value}`, indexColour(value)]));
  });

  it('is self-contained and renders: one request, a screenshot', async () => {
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatch(/^file:/);
    const shot = join(dir, 'table.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(20_000);
    console.log(`HTML table screenshot: ${shot}`);
  });
});
