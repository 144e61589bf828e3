// The portal's Tables page in headless Chromium (playwright-core): sign in, browse the survey,
// type a base (checked as it is typed), build a 3 x 2 table (GSS, base year=2024, rows race,
// columns sex), compare its cells with `crosstab table` on the same spec, download the XLSX
// and read it back with exceljs, see the calls on the Usage page; the shaded cells' text
// contrast, the focus ring, and no page-level horizontal scroll at 390 px. Screenshots at
// 1280 and 390 px are written to $PORTAL_SCREENSHOTS (default: a temporary folder).
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Dataset, TableJson } from '../../src/index.js';
import { repoRoot } from '../support/paths.js';
import { tempDir } from '../http/support.js';
import { startPortalInBrowser, type PortalInBrowser } from './portal-in-browser.js';
import { contrast, OVERFLOW } from '../support/page-checks.js';

const paths = inject('testDatasets');

/** Page-side: each vertical % cell's text colour and background (the white card where it is not shaded). */
const CELL_COLOURS = `[...document.querySelectorAll('#result-table tr[data-line="vpct"] td[data-column]')].map((cell) => { const style = getComputedStyle(cell); return { color: style.color, background: style.backgroundColor === 'rgba(0, 0, 0, 0)' ? 'rgb(255, 255, 255)' : style.backgroundColor }; })`;

describe('portal Tables page in headless Chromium', () => {
  let portal: PortalInBrowser | undefined;
  let dataset: Dataset;
  let origin: string;
  let page: Page;
  const shots = process.env['PORTAL_SCREENSHOTS'] ?? tempDir('crosstab-portal-tables-shots-');

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    portal = await startPortalInBrowser({ dataset: paths.gss, prefix: 'crosstab-portal-tables-ui-', mustChangePassword: false });
    ({ dataset, origin, page } = portal);
  });

  afterAll(() => portal?.close());

  const shot = async (name: string) => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: join(shots, `${name}-${width}.png`), fullPage: true });
      if (width === 390) expect(await page.evaluate<string>(OVERFLOW), `${name} at 390 px`).toBe('');
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  };

  it('signs in and browses the survey', async () => {
    await (portal as PortalInBrowser).signIn('analyst@acme.example');
    await page.waitForURL(/\/portal\/keys/);
    await page.getByRole('link', { name: 'Surveys' }).click();
    await page.getByRole('link', { name: /\(GSS\)/ }).click();
    expect(await page.textContent('main')).toContain('race');
    await page.getByRole('link', { name: 'Tables' }).click();
    await page.waitForURL(`${origin}/portal/tables`);
    await shot('tables-empty');
  });

  it('checks the base as it is typed, with the engine\'s message', async () => {
    const base = page.getByLabel(/^Base/);
    await base.fill('year=');
    await expect.poll(() => page.locator('#base-check').getAttribute('class')).toBe('check-status invalid');
    expect(await base.getAttribute('aria-invalid')).toBe('true');
    let engine = '';
    try {
      dataset.groupsOf('year=');
    } catch (error) {
      engine = (error as Error).message;
    }
    expect(await page.locator('#base-check').textContent()).toBe(engine);
    await base.fill('year=2024');
    await expect.poll(() => page.locator('#base-check').textContent()).toBe('Valid expression.');
    expect(await base.getAttribute('aria-invalid')).toBeNull();
    // The focus ring and the field's border stand out 3:1 from the white card.
    await base.focus();
    const ring = await base.evaluate((element) => {
      const style = (globalThis as unknown as { getComputedStyle(node: unknown): { outlineColor: string; outlineStyle: string; borderTopColor: string } }).getComputedStyle(element);
      return { outline: style.outlineColor, outlineStyle: style.outlineStyle, border: style.borderTopColor };
    });
    expect(ring.outlineStyle).not.toBe('none');
    expect(contrast(ring.outline, 'rgb(255, 255, 255)')).toBeGreaterThanOrEqual(3);
    expect(contrast(ring.border, 'rgb(255, 255, 255)')).toBeGreaterThanOrEqual(3);
  });

  it('builds the 3 x 2 table, with the cells `crosstab table` gives for the same spec', async () => {
    await page.getByLabel(/^Rows/).fill('race');
    await page.getByLabel(/^Columns/).fill('sex');
    await page.getByLabel('Significance letters').check();
    await page.getByLabel('Hide them').check();
    await page.getByRole('button', { name: 'Compute table' }).click();
    await page.waitForLoadState();
    expect(await page.getByRole('alert').count()).toBe(0);

    const cli = JSON.parse(
      execFileSync(process.execPath, [join(repoRoot, 'dist/cli/main.js'), 'table', paths.gss, '--base', 'year=2024', '--rows', 'race', '--columns', 'sex', '--missing', 'hide', '--stats', 'vpct,sig', '--format', 'json'], { encoding: 'utf8' }),
    ) as TableJson;
    expect(cli.rows).toHaveLength(3);
    expect(cli.columns).toHaveLength(2);
    const rows = await page.locator('#result-table tbody.category').all();
    expect(rows).toHaveLength(3);
    for (const [r, row] of rows.entries()) {
      expect(await row.locator('tr.category th').textContent()).toBe(cli.rows[r]!.label);
      const cells = await row.locator('tr[data-line="vpct"] td[data-column]').all();
      const counts = await row.locator('tr[data-line="respondents"] td[data-column]').allTextContents();
      expect(cells).toHaveLength(2);
      for (const [c, cell] of cells.entries()) {
        const want = cli.cells[r]![c]!;
        const mark = want.stability === 'very-unstable' ? '**' : want.stability === 'caution' ? '*' : '';
        expect(await cell.evaluate((td) => td.firstChild?.textContent)).toBe(`${((want.columnPct as number) * 100).toFixed(1)}%${mark}`);
        expect(await cell.locator('.letters').textContent()).toBe(want.letters ?? '');
        expect(counts[c]).toBe(`${want.respondents.toLocaleString('en-US')}${mark}`);
      }
    }
    // Every cell's figures are readable on its shade (WCAG AA for text: 4.5:1).
    for (const { color, background } of await page.evaluate<Array<{ color: string; background: string }>>(CELL_COLOURS)) expect(contrast(color, background)).toBeGreaterThanOrEqual(4.5);
    expect(await page.locator('.legend').first().textContent()).toMatch(/significantly higher/);
    await shot('tables-result');
    await page.locator('#result-table').screenshot({ path: join(shots, 'tables-banner-1280.png') });

    // The XLSX of the same table, read back.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download XLSX' }).click()]);
    expect(download.suggestedFilename()).toBe('table-GSS.xlsx');
    const file = join(tempDir('crosstab-portal-xlsx-'), 'table.xlsx');
    await download.saveAs(file);
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(file);
    const numbers: number[] = [];
    const texts: string[] = [];
    book.eachSheet((sheet) => sheet.eachRow((row) => row.eachCell((cell) => (typeof cell.value === 'number' ? numbers.push(cell.value) : texts.push(String(cell.value))))));
    for (const entry of [...cli.rows, ...cli.columns]) expect(texts.join('\n')).toContain(entry.label);
    for (const row of cli.cells) {
      for (const cell of row) {
        expect(numbers.some((value) => Math.abs(value - (cell.columnPct as number)) < 1e-12 || Math.abs(value - (cell.columnPct as number) * 100) < 1e-9), `column % ${cell.columnPct} in the workbook`).toBe(true);
        expect(numbers).toContain(cell.respondents);
      }
    }
  });

  it('saves the table, shared with the account, and reopens it from the list by keyboard', async () => {
    await page.getByLabel('Save as').fill('Race by sex, 2024');
    await page.getByLabel('Share with my account').check();
    await page.getByRole('button', { name: 'Compute and save' }).click();
    await page.waitForURL(/\/portal\/tables\/saved\/tbl_[0-9a-f]{16}\?done=saved/);
    expect(await page.getByRole('status').first().textContent()).toMatch(/Saved as Race by sex, 2024, shared with your account/);
    await page.goto(`${origin}/portal/tables`);
    const link = page.getByRole('link', { name: 'Race by sex, 2024' });
    await link.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/portal\/tables\/saved\/tbl_/);
    expect(await page.locator('main').textContent()).toMatch(/opening it was not billed/);
    expect(await page.locator('#result-table tr[data-line="vpct"] td[data-column]').count()).toBe(6);
    await shot('tables-saved');
  });

  it('shows the calls on the Usage page with their operation', async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL(/\/portal\/usage/);
    const perOperation = page.getByRole('region', { name: 'Calls per operation' });
    // The table computed on the page, its XLSX and the saved one: three computations, three billed calls (reopening bills none).
    expect(await perOperation.locator('tbody tr').allTextContents()).toEqual(['table3']);
    expect(await page.getByRole('region', { name: 'Calls per key' }).textContent()).toContain('Tables page, analyst@acme.example');
    await shot('usage-with-tables');
  });

  it('shows significance letters in the cells and on the lettered columns', async () => {
    await page.goto(`${origin}/portal/tables`);
    await page.getByLabel(/^Base/).fill('*');
    await page.getByLabel(/^Rows/).fill('degree');
    await page.getByLabel(/^Columns/).fill('sex\nrace');
    await page.getByLabel('Hide them').check();
    await page.getByRole('button', { name: 'Compute table' }).click();
    await page.waitForLoadState();
    expect(await page.locator('#result-table .letters:not(:empty)').count()).toBeGreaterThan(0);
    expect(await page.locator('#result-table thead .letter').allTextContents()).toEqual(['(A)', '(B)', '(A)', '(B)', '(C)']);
    for (const { color, background } of await page.evaluate<Array<{ color: string; background: string }>>(CELL_COLOURS)) expect(contrast(color, background)).toBeGreaterThanOrEqual(4.5);
    await shot('tables-letters');
  });

  it('shows the Rao-Scott tests the API gives when Chi-square is ticked', async () => {
    await page.goto(`${origin}/portal/tables`);
    await page.getByLabel(/^Base/).fill('year=2024');
    await page.getByLabel(/^Rows/).fill('degree');
    await page.getByLabel(/^Columns/).fill('sex\nrace');
    await page.getByLabel('Chi-square (Rao–Scott)').check();
    await page.getByRole('button', { name: 'Compute table' }).click();
    await page.waitForLoadState();
    expect(await page.getByRole('alert').count()).toBe(0);
    const cli = JSON.parse(
      execFileSync(process.execPath, [join(repoRoot, 'dist/cli/main.js'), 'table', paths.gss, '--base', 'year=2024', '--rows', 'degree', '--columns', 'sex', '--columns', 'race', '--stats', 'vpct,chisq', '--format', 'json'], { encoding: 'utf8' }),
    ) as TableJson;
    expect(cli.raoScott).toHaveLength(2);
    const shown = await page.locator('#rao-scott li').allTextContents();
    expect(shown).toHaveLength(2);
    for (const [i, test] of cli.raoScott!.entries()) {
      expect(shown[i]).toContain(`${test.rowVariable} x ${test.columnVariable}`);
      expect(shown[i]).toContain(`F = ${test.statistic!.toFixed(3)}`);
      expect(shown[i]).toContain(`p = ${test.pValue!.toPrecision(3)}`);
    }
    await shot('tables-rao-scott');
  });
});
