// The developer portal in a real browser (Debian's Chromium, playwright-core), served with
// the API by one node:http server on the embedded database: sign in with the one-time
// password, choose a password, create a key, call the API with it, see the call in the
// usage page and its CSV, revoke the key, rotate one, sign out; wrong passwords, lockout,
// CSRF and the API's refusal of the session cookie. Screenshots of each page are written to
// $PORTAL_SCREENSHOTS (default: a temporary folder).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findAccount, listKeys, usageReport, type Database } from '../../src/access/index.js';
import { MAX_FAILED_SIGN_INS } from '../../src/portal/index.js';
import { tempDir } from '../http/support.js';
import { startPortalInBrowser, type PortalInBrowser } from './portal-in-browser.js';

const paths = inject('testDatasets');
const BODY = { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2'] };
const NEW_PASSWORD = 'correct horse battery staple 42';

describe('developer portal in headless Chromium', () => {
  let portal: PortalInBrowser | undefined;
  let db: Database;
  let origin: string;
  let page: Page;
  let oneTimePassword: string;
  let otherUserPassword: string;
  const shots = process.env['PORTAL_SCREENSHOTS'] ?? tempDir('crosstab-portal-shots-');

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    portal = await startPortalInBrowser({
      dataset: paths.gss,
      prefix: 'crosstab-portal-',
      licences: [['GSS', 'NHANES'], ['GSS:_ALL_', 'NHANES:demographics']],
      rateLimitPerMinute: 600,
      users: ['analyst@acme.example', 'intern@acme.example'],
      exampleBody: JSON.stringify(BODY),
      viewport: { width: 1180, height: 860 },
      acceptDialogs: true,
    });
    ({ db, origin, page } = portal);
    oneTimePassword = portal.passwords.get('analyst@acme.example') as string;
    otherUserPassword = portal.passwords.get('intern@acme.example') as string;
  });

  afterAll(() => portal?.close());

  const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  const callApi = async (apiKey: string, extra: Record<string, string> = {}) =>
    (await fetch(`${origin}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey, ...extra }, body: JSON.stringify(BODY) })).status;

  async function sessionCookie(): Promise<string> {
    const cookie = (await page.context().cookies(`${origin}/portal/keys`)).find((item) => item.name === 'crosstab_portal');
    return `crosstab_portal=${cookie?.value}`;
  }

  const signIn = (email: string, password: string): Promise<void> => (portal as PortalInBrowser).signIn(email, password);

  it('refuses a wrong password with a clear message', async () => {
    await page.goto(`${origin}/portal`);
    expect(page.url()).toBe(`${origin}/portal/sign-in`);
    await shot('1-sign-in');
    await signIn('analyst@acme.example', 'not the password');
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^Wrong e-mail address or password\. After 5 failed sign-ins in a row a user is locked for 15 minutes/);
    const wrongPassword = await page.getByRole('alert').textContent();
    await shot('2-sign-in-wrong-password');
    // An unknown e-mail reads the same: the page does not tell which addresses have a user.
    await signIn('nobody@acme.example', 'whatever');
    expect(await page.getByRole('alert').textContent()).toBe(wrongPassword);
  });

  it('the one-time password forces a new password, then shows licences and permissions', async () => {
    await signIn('analyst@acme.example', oneTimePassword);
    expect(page.url()).toBe(`${origin}/portal/password`);
    await shot('3-choose-password');
    // Other pages stay closed until the password is changed.
    await page.goto(`${origin}/portal/keys`);
    expect(page.url()).toBe(`${origin}/portal/password`);
    await page.getByLabel('One-time password').fill(oneTimePassword);
    await page.getByLabel(/^New password/).fill('short');
    await page.getByLabel('Repeat the new password').fill('short');
    // Past the browser's own minlength check, to see the server's message.
    await page.evaluate("document.querySelectorAll('input').forEach((input) => input.removeAttribute('minlength'))");
    await page.getByRole('button', { name: 'Save password' }).click();
    expect(await page.getByRole('alert').textContent()).toMatch(/at least 12 characters/);
    await page.getByLabel('One-time password').fill(oneTimePassword);
    await page.getByLabel(/^New password/).fill(NEW_PASSWORD);
    await page.getByLabel('Repeat the new password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.waitForURL(`${origin}/portal/keys?done=password`);
    expect(await page.getByRole('status').first().textContent()).toMatch(/Your password is changed/);
    const licences = await page.getByRole('region', { name: 'Licensed surveys and permissions' }).textContent();
    expect(licences).toMatch(/GSS\s*every group \(_ALL_\)/);
    expect(licences).toMatch(/NHANES\s*demographics/);
    expect(await page.textContent('main')).toMatch(/Rate limit: 600 calls per minute/);
    await shot('4-keys-empty');
  });

  let apiKey = '';
  it('creates a key shown once with a copy button and a curl that works; the cookie alone gets 401', async () => {
    await page.getByLabel('Environment').fill('production');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.waitForLoadState();
    apiKey = await page.getByLabel('API key').inputValue();
    expect(apiKey).toMatch(/^ctk_[A-Za-z0-9_-]{43}$/);
    const curl = (await page.locator('#curl').textContent()) as string;
    expect(curl).toContain(`Service-Engine-Authorizer: ${apiKey}`);
    expect(curl).toContain(`${origin}/v1/crosstab`);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await expect.poll(() => page.locator('#copy-status').textContent()).toMatch(/Copied|copy it/);
    await shot('5-new-key');
    expect(await callApi(apiKey)).toBe(200);
    const cookies = await page.context().cookies(`${origin}/portal/keys`);
    const session = cookies.find((cookie) => cookie.name === 'crosstab_portal');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/portal' });
    const cookieOnly = await fetch(`${origin}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', cookie: `crosstab_portal=${session?.value}` }, body: JSON.stringify(BODY) });
    expect(cookieOnly.status).toBe(401);
    // Back on the keys page the key is listed, never shown again.
    await page.goto(`${origin}/portal/keys`);
    expect(await page.content()).not.toContain(apiKey);
    expect(await page.getByRole('region', { name: 'Your keys' }).textContent()).toMatch(/production.*active/s);
  });

  it('shows the call in the usage page (chart, tables) and its CSV', async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL(/\/portal\/usage/);
    const today = new Date().toISOString().slice(0, 10);
    expect(await page.textContent('main')).toMatch(/acme.*: 1 from/s);
    expect(await page.getByRole('region', { name: 'Calls per day' }).textContent()).toMatch(new RegExp(`${today}\\s*1`));
    expect(await page.getByRole('region', { name: 'Calls per key' }).textContent()).toMatch(/production.*1/s);
    expect(await page.getByRole('img', { name: /Billed calls per day/ }).count()).toBe(1);
    await shot('6-usage');
    // The pages' Content-Security-Policy forbids scripts to fetch, so the download is fetched here with the session cookie.
    const csv = await (await fetch(`${origin}/portal/usage.csv?from=${today}&to=${today}`, { headers: { cookie: await sessionCookie() } })).text();
    expect(csv).toMatch(new RegExp(`^day,key,name,survey,calls\\r\\n${today},key_[0-9a-f]{16},production,GSS,1\\r\\n$`));
    expect((await usageReport(db, { account: 'acme' })).calls).toBe(1);
  });

  it('refuses a form without its CSRF token', async () => {
    const post = async (body: string) =>
      (await fetch(`${origin}/portal/keys`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: await sessionCookie() }, body })).status;
    expect(await post('name=sneaky')).toBe(403);
    expect(await post('name=sneaky&csrf=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).toBe(403);
    // With the token, bad input gets the form back with a clear message and creates nothing.
    await page.goto(`${origin}/portal/keys`);
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const bad = await fetch(`${origin}/portal/keys`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: await sessionCookie() }, body: new URLSearchParams({ csrf, name: 'my key!' }) });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/role="alert">Environment must be a key name \(the environment, e\.g\. production or staging\)/);
    const past = await fetch(`${origin}/portal/keys`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: await sessionCookie() }, body: new URLSearchParams({ csrf, name: 'staging', expires: '2001-01-01' }) });
    expect(await past.text()).toMatch(/Expires is in the past/);
    expect(JSON.stringify(await listKeys(db, (await findAccount(db, 'acme')).id))).not.toContain('staging');
    // The page's own scripts may not fetch at all (Content-Security-Policy connect-src 'none').
    const fromPage = await page.evaluate(async (url) => fetch(url, { method: 'POST', body: 'name=sneaky' }).then((r) => r.status, () => 'blocked'), `${origin}/portal/keys`);
    expect(fromPage).toBe('blocked');
    await page.goto(`${origin}/portal/keys`);
    expect(await page.content()).not.toContain('sneaky');
  });

  it('rotates a key (the old one stops now) and revokes a key: the next call is 401', async () => {
    await page.getByRole('button', { name: 'Rotate' }).click();
    await page.waitForLoadState();
    const rotated = await page.getByLabel('API key').inputValue();
    expect(await page.getByRole('status').first().textContent()).toMatch(/rotated/);
    expect(await callApi(apiKey)).toBe(401);
    expect(await callApi(rotated)).toBe(200);
    await page.goto(`${origin}/portal/keys`);
    await shot('7-keys-after-rotation');
    await page.getByRole('button', { name: /^Revoke key production/ }).click();
    await page.waitForLoadState();
    expect(await page.getByRole('status').first().textContent()).toMatch(/is revoked/);
    await shot('8-keys-revoked');
    expect(await callApi(rotated)).toBe(401);
  });

  it('signs out: the session is revoked on the server', async () => {
    const before = await sessionCookie();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${origin}/portal/sign-in?done=signed-out`);
    expect(await page.getByRole('status').first().textContent()).toMatch(/You are signed out/);
    const reused = await fetch(`${origin}/portal/keys`, { headers: { cookie: before }, redirect: 'manual' });
    expect(reused.status).toBe(401);
    expect(await reused.text()).toMatch(/Sign in to continue/);
  });

  it(`locks a user out after ${MAX_FAILED_SIGN_INS} failed sign-ins, even with the right password`, async () => {
    for (let i = 0; i < MAX_FAILED_SIGN_INS; i++) await signIn('intern@acme.example', `wrong ${i}`);
    const wrong = await page.getByRole('alert').textContent();
    expect(wrong).toMatch(/^Wrong e-mail address or password\. After 5 failed sign-ins in a row a user is locked for 15 minutes/);
    // Locked: the right password gets the same answer as a wrong one, and no session.
    await signIn('intern@acme.example', otherUserPassword);
    expect(page.url()).toBe(`${origin}/portal/sign-in`);
    expect(await page.getByRole('alert').textContent()).toBe(wrong);
    await shot('9-locked-out');
  });
});
