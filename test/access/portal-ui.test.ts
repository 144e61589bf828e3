// The developer portal's look and accessibility in headless Chromium (playwright-core):
// contrast of the focus ring and input borders (from computed styles), the keys table at a
// 390 px viewport, unique names of the key action buttons, confirmations after a password
// change and a sign-out, the icon, and the API reference page rendered from GET /v1/docs.
// Screenshots at 1280 and 390 px are written to $PORTAL_SCREENSHOTS (default: a temporary folder).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tempDir } from '../http/support.js';
import { startPortalInBrowser, type PortalInBrowser } from './portal-in-browser.js';
import { contrast, OVERFLOW } from '../support/page-checks.js';

const paths = inject('testDatasets');
const PASSWORD = 'correct horse battery staple 42';

/** The browser globals the page-side functions use (the tests compile without the DOM library). */
interface PageNode {
  parentElement: PageNode | null;
}
interface PageStyle {
  backgroundColor: string;
  outlineStyle: string;
  getPropertyValue(name: string): string;
}
type PageWindow = { getComputedStyle(node: PageNode): PageStyle };

/** An element's own computed style property and the first opaque background behind it. */
function colours(locator: Locator, property: string): Promise<{ own: string; background: string }> {
  return locator.evaluate((target, name) => {
    const getComputedStyle = (node: PageNode): PageStyle => (globalThis as unknown as PageWindow).getComputedStyle(node);
    const element = target as unknown as PageNode;
    let node: PageNode | null = element.parentElement;
    let background = 'rgb(255, 255, 255)';
    while (node) {
      const color = getComputedStyle(node).backgroundColor;
      if (color !== 'transparent' && !/rgba\(.*, 0\)$/.test(color)) {
        background = color;
        break;
      }
      node = node.parentElement;
    }
    return { own: getComputedStyle(element).getPropertyValue(name), background };
  }, property);
}

describe('developer portal: contrast, small screens, names, confirmations, icon, API reference', () => {
  let portal: PortalInBrowser | undefined;
  let origin: string;
  let page: Page;
  let oneTimePassword: string;
  const shots = process.env['PORTAL_SCREENSHOTS'] ?? tempDir('crosstab-portal-ui-shots-');

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    portal = await startPortalInBrowser({ dataset: paths.gss, prefix: 'crosstab-portal-ui-', exampleBody: '{}', acceptDialogs: true });
    ({ origin, page } = portal);
    oneTimePassword = portal.passwords.get('analyst@acme.example') as string;
  });

  afterAll(() => portal?.close());

  const shot = async (name: string) => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: join(shots, `${name}-${width}.png`), fullPage: true });
      await page.screenshot({ path: join(shots, `${name}-${width}-top.png`) });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  };

  it('serves an icon at /favicon.ico and links one from every page', async () => {
    const favicon = await fetch(`${origin}/favicon.ico`);
    expect(favicon.status).toBe(200);
    expect(favicon.headers.get('content-type')).toMatch(/^image\//);
    expect(await favicon.text()).toMatch(/^<svg /);
    await page.goto(`${origin}/portal/sign-in`);
    const href = await page.locator('link[rel="icon"]').getAttribute('href');
    const linked = await fetch(new URL(href as string, page.url()));
    expect(linked.status).toBe(200);
    expect(linked.headers.get('content-type')).toMatch(/^image\//);
    await shot('sign-in');
  });

  it('confirms a password change on the next page', async () => {
    await page.goto(`${origin}/portal/sign-in`);
    await page.getByLabel('E-mail address').fill('analyst@acme.example');
    await page.getByLabel('Password', { exact: true }).fill(oneTimePassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${origin}/portal/password`);
    await page.getByLabel('One-time password').fill(oneTimePassword);
    await page.getByLabel(/^New password/).fill(PASSWORD);
    await page.getByLabel('Repeat the new password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.waitForURL(/\/portal\/keys/);
    expect(await page.getByRole('status').first().textContent()).toMatch(/Your password is changed/);
    // Each form still carries its CSRF token.
    for (const form of await page.locator('main form, header form').all()) expect(await form.locator('input[name="csrf"]').count()).toBe(1);
  });

  it('input borders and the focus ring have at least 3:1 contrast against their background', async () => {
    const input = page.getByLabel('Environment');
    const border = await colours(input, 'border-top-color');
    expect(contrast(border.own, border.background)).toBeGreaterThanOrEqual(3);
    await input.focus();
    const ring = await colours(input, 'outline-color');
    expect(await input.evaluate((element) => (globalThis as unknown as PageWindow).getComputedStyle(element as unknown as PageNode).outlineStyle)).not.toBe('none');
    expect(contrast(ring.own, ring.background)).toBeGreaterThanOrEqual(3);
    const button = page.getByRole('button', { name: 'Create key' });
    await button.focus();
    const buttonRing = await colours(button, 'outline-color');
    expect(contrast(buttonRing.own, buttonRing.background)).toBeGreaterThanOrEqual(3);
    // In the dark header too.
    const usage = page.getByRole('link', { name: 'Usage' });
    await usage.focus();
    const headerRing = await colours(usage, 'outline-color');
    expect(contrast(headerRing.own, headerRing.background)).toBeGreaterThanOrEqual(3);
  });

  it('names each Rotate and Revoke button after its key', async () => {
    for (const name of ['production', 'staging', 'development']) {
      await page.getByLabel('Environment').fill(name);
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.waitForLoadState();
      await page.goto(`${origin}/portal/keys`);
    }
    const actions = page.getByRole('region', { name: 'Your keys' }).getByRole('button', { name: /^(Rotate|Revoke)/ });
    expect(await actions.count()).toBe(6);
    const names = await actions.evaluateAll((buttons) => buttons.map((button) => button.getAttribute('aria-label') ?? button.textContent ?? ''));
    expect(new Set(names).size).toBe(6);
    for (const key of ['production', 'staging', 'development']) {
      for (const verb of ['Rotate', 'Revoke']) {
        const matching = names.filter((name) => name.startsWith(`${verb} key ${key} `));
        expect(matching).toHaveLength(1);
        expect(await page.getByRole('button', { name: matching[0], exact: true }).count()).toBe(1);
      }
    }
  });

  it('keeps every key action on screen at 390 px, without a page-level horizontal scroll', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${origin}/portal/keys`);
    const actions = page.getByRole('region', { name: 'Your keys' }).getByRole('button', { name: /^(Rotate|Revoke)/ });
    expect(await actions.count()).toBe(6);
    for (const button of await actions.all()) {
      const box = await button.boundingBox();
      expect(box).not.toBeNull();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width).toBeLessThanOrEqual(await page.evaluate<number>('document.documentElement.clientWidth'));
    }
    expect(await page.evaluate<string>(OVERFLOW)).toBe('');
    await page.setViewportSize({ width: 1280, height: 900 });
    await shot('keys');
  });

  it('renders the API reference from GET /v1/docs as a portal page listing every path', async () => {
    const openapi = (await (await fetch(`${origin}/v1/docs`)).json()) as { paths: Record<string, Record<string, unknown>> };
    await page.goto(`${origin}/portal/keys`);
    await page.getByRole('link', { name: 'API reference' }).click();
    await page.waitForURL(`${origin}/portal/api`);
    expect(await page.title()).toMatch(/^API reference/);
    expect(Object.keys(openapi.paths).length).toBeGreaterThan(0);
    for (const [path, operations] of Object.entries(openapi.paths)) {
      const region = page.getByRole('region', { name: path, exact: true });
      expect(await region.count()).toBe(1);
      // Path-level `parameters` is not an operation.
      for (const method of Object.keys(operations).filter((key) => key !== 'parameters')) expect(await region.getByRole('heading', { name: `${method.toUpperCase()} ${path}`, exact: true }).count()).toBe(1);
    }
    const errors = await page.getByRole('region', { name: 'Error codes' }).textContent();
    expect(errors).toMatch(/401.*unauthorized/s);
    expect(await page.evaluate<string>(OVERFLOW)).toBe('');
    await shot('api-reference');
    await page.locator('article.op').nth(1).screenshot({ path: join(shots, 'api-reference-operation-1280.png') });
    await page.getByRole('region', { name: 'Error codes' }).screenshot({ path: join(shots, 'api-reference-errors-1280.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate<string>(OVERFLOW)).toBe('');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('confirms a sign-out on the sign-in page', async () => {
    await page.goto(`${origin}/portal/keys`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/portal\/sign-in/);
    expect(await page.getByRole('status').first().textContent()).toMatch(/You are signed out/);
    // An unknown flag shows nothing, and nothing of the query is echoed.
    await page.goto(`${origin}/portal/sign-in?done=%3Cb%3Ehi`);
    expect(await page.getByRole('status').count()).toBe(0);
  });
});
