// The portal of portal-server.ts with headless Chromium (playwright-core) on a page: what
// every portal browser test starts from. Each test says only what differs (licences, users,
// whether the first password must be changed, audiences, the viewport).
import type { Page } from 'playwright-core';
import { startChromiumPage, type ChromiumPage } from '../support/chromium.js';
import { startPortalServer, type PortalServer, type PortalServerOptions } from './portal-server.js';

export interface PortalInBrowserOptions extends Omit<PortalServerOptions, 'datasets'> {
  /** The dataset served (GSS in every test). */
  dataset: string;
  viewport?: { width: number; height: number };
  /** Accept every dialog (confirm() of a revoke or a delete). */
  acceptDialogs?: boolean;
}

export interface PortalInBrowser extends Omit<PortalServer, 'close'> {
  chromium: ChromiumPage;
  page: Page;
  /** Signs in on the page (the form's submit, then the page's load). */
  signIn(email: string, password?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startPortalInBrowser(options: PortalInBrowserOptions): Promise<PortalInBrowser> {
  const { dataset, viewport, acceptDialogs, ...rest } = options;
  const served = await startPortalServer({ ...rest, datasets: [dataset] });
  let chromium: ChromiumPage;
  try {
    chromium = await startChromiumPage(viewport ?? { width: 1280, height: 900 });
  } catch (error) {
    await served.close();
    throw error;
  }
  const { page } = chromium;
  const { origin, passwords } = served;
  if (acceptDialogs) page.on('dialog', (dialog) => void dialog.accept());
  return {
    ...served,
    chromium,
    page,
    async signIn(email, password = passwords.get(email)) {
      await page.goto(`${origin}/portal/sign-in`);
      await page.getByLabel('E-mail address').fill(email);
      await page.getByLabel('Password', { exact: true }).fill(password ?? '');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForLoadState();
    },
    async close() {
      await chromium.close();
      await served.close();
    },
  };
}
