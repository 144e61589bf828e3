// The portal's audiences in headless Chromium (playwright-core): from the Tables page, save the
// base as an audience (shared), see it listed, check and compute a table whose base is
// @women-25-40 (the same cells as with its expression), edit its expression (the next table
// follows it), and delete it (a table that uses it is refused, naming it).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { listAudiences, type Database } from '../../src/access/index.js';
import { tempDir } from '../http/support.js';
import { startPortalInBrowser, type PortalInBrowser } from './portal-in-browser.js';

const paths = inject('testDatasets');
const WOMEN = 'sex=2 AND age=25..40';

describe('portal audiences in headless Chromium', () => {
  let portal: PortalInBrowser | undefined;
  let db: Database;
  let origin: string;
  let page: Page;
  let account = '';

  beforeAll(async () => {
    portal = await startPortalInBrowser({ dataset: paths.gss, prefix: 'crosstab-portal-audiences-', mustChangePassword: false, audiences: true });
    ({ db, origin, page, accountId: account } = portal);
  });

  afterAll(() => portal?.close());

  /** The cells of the table computed with `base` (rows degree, columns race=1, race=2). */
  async function cells(base: string): Promise<string[]> {
    await page.goto(`${origin}/portal/tables`);
    await page.getByLabel(/^Base/).fill(base);
    await page.getByLabel(/^Rows/).fill('degree');
    await page.getByLabel(/^Columns/).fill('race=1\nrace=2');
    await page.getByRole('button', { name: 'Compute table' }).click();
    await page.waitForLoadState();
    const alerts = await page.getByRole('alert').allTextContents();
    if (alerts.length > 0) return alerts;
    return page.locator('#result-table td').allTextContents();
  }

  it('saves the base of the Tables page as a shared audience, and lists it', async () => {
    await (portal as PortalInBrowser).signIn('analyst@acme.example');
    await page.waitForURL(/\/portal\/keys/);
    await page.getByRole('link', { name: 'Tables' }).click();
    await page.getByLabel(/^Base/).fill(WOMEN);
    await page.getByLabel(/^Rows/).fill('degree');
    await page.getByLabel(/^Columns/).fill('race=1');
    await page.getByRole('button', { name: 'Save base as audience' }).click();
    await page.waitForURL(/\/portal\/audiences/);
    expect(await page.getByLabel('Expression', { exact: true }).inputValue()).toBe(WOMEN);
    await page.getByLabel(/^Name/).fill('Women 25-40');
    await page.getByRole('button', { name: 'Save audience' }).click();
    // The API's own check of the name, shown on the form with what was typed kept.
    expect(await page.getByRole('alert').textContent()).toContain('women-25-40');
    await page.getByLabel(/^Name/).fill('women-25-40');
    await page.getByLabel('Label', { exact: true }).fill('Women 25-40');
    await page.getByLabel('Share with everyone in my account').check();
    await page.getByRole('button', { name: 'Save audience' }).click();
    await page.waitForURL(/done=saved/);
    const row = page.locator('#audiences tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain('@women-25-40');
    expect(await row.textContent()).toContain(WOMEN);
    expect((await listAudiences(db, { accountId: account }, 'GSS')).map((audience) => [audience.name, audience.expression, audience.shared])).toEqual([['women-25-40', WOMEN, true]]);
  });

  it('checks and computes a table whose base is the audience: the cells of its expression', async () => {
    await page.goto(`${origin}/portal/tables`);
    await page.getByLabel(/^Base/).fill('@women-25-40');
    await expect.poll(() => page.locator('#base-check').textContent()).toBe('Valid expression (with its saved audiences).');
    await page.getByLabel(/^Base/).fill('@nobody');
    await expect.poll(() => page.locator('#base-check').textContent()).toContain('@nobody');
    const byName = await cells('@women-25-40');
    expect(byName.length).toBeGreaterThan(4);
    expect(byName).toEqual(await cells(WOMEN));
  });

  it('edits the audience (the next table follows it) and deletes it', async () => {
    await page.goto(`${origin}/portal/audiences`);
    await page.locator('#audiences summary').click();
    await page.locator('#audiences input[name="expression"]').fill('sex=1 AND age=25..40');
    await page.getByRole('button', { name: 'Save @women-25-40' }).click();
    await page.waitForURL(/done=edited/);
    expect(await page.locator('#audiences tbody tr').textContent()).toContain('sex=1 AND age=25..40');
    expect(await cells('@women-25-40')).toEqual(await cells('sex=1 AND age=25..40'));
    await page.goto(`${origin}/portal/audiences`);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete @women-25-40' }).click();
    await page.waitForURL(/done=deleted/);
    expect(await page.locator('#audiences').count()).toBe(0);
    const refused = await cells('@women-25-40');
    expect(refused.join(' ')).toContain('@women-25-40');
    expect(await listAudiences(db, { accountId: account }, 'GSS')).toEqual([]);
  });
});
