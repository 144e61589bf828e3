// The portal and the API served by one node:http server on the embedded database, with an
// account, its users and headless Chromium (playwright-core) on a page: what every portal
// browser test starts from. Each test says only what differs (licences, users, whether the
// first password must be changed, audiences, the viewport).
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addUser, DbAudienceStore, DbKeyStore, DbUsageSink, openDatabase, parseLicences, type Database } from '../../src/access/index.js';
import { createPortal, mountPortal } from '../../src/portal/index.js';
import { startChromiumPage, type ChromiumPage } from '../support/chromium.js';
import { tempDir } from '../http/support.js';

export interface PortalInBrowserOptions {
  /** The dataset served (GSS in every test). */
  dataset: string;
  /** The temporary folder's prefix, e.g. 'crosstab-portal-ui-'. */
  prefix: string;
  /** The account's surveys and entitlement groups (parseLicences' arguments); GSS, all of it, by default. */
  licences?: [string[], string[]];
  rateLimitPerMinute?: number;
  /** The account's users, by e-mail address. */
  users?: string[];
  /** Whether each user must choose a password at first sign-in (true: the portal's own default). */
  mustChangePassword?: boolean;
  /** Saved audiences in the access database. */
  audiences?: boolean;
  /** The portal's example body; with one, the API's address is the server's own, else a fixed one and the portal lists the survey. */
  exampleBody?: string;
  viewport?: { width: number; height: number };
  /** Accept every dialog (confirm() of a revoke or a delete). */
  acceptDialogs?: boolean;
}

export interface PortalInBrowser {
  db: Database;
  dataset: Dataset;
  server: RunningServer;
  /** The server's address without /v1. */
  origin: string;
  chromium: ChromiumPage;
  page: Page;
  accountId: string;
  /** Each user's one-time password, by e-mail address. */
  passwords: Map<string, string>;
  /** Signs in on the page (the form's submit, then the page's load). */
  signIn(email: string, password?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startPortalInBrowser(options: PortalInBrowserOptions): Promise<PortalInBrowser> {
  const [surveys, groups] = options.licences ?? [['GSS'], ['GSS:_ALL_']];
  const db = await openDatabase(join(tempDir(options.prefix), 'db'));
  const accountId = (await addAccount(db, 'acme', parseLicences(surveys, groups), options.rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute: options.rateLimitPerMinute })).id;
  const passwords = new Map<string, string>();
  for (const email of options.users ?? ['analyst@acme.example']) {
    const added = await addUser(db, 'acme', email);
    passwords.set(email, added.oneTimePassword);
    if (options.mustChangePassword === false) await db.query('UPDATE users SET must_change_password = false WHERE id = $1', [added.user.id]);
  }
  const dataset = await openDataset(options.dataset);
  const keys = new DbKeyStore(db);
  const api = await createCrosstabHandler({ datasets: [dataset], keys, usage: new DbUsageSink(db), ...(options.audiences ? { audiences: new DbAudienceStore(db) } : {}) });
  let apiUrl = '';
  const portal =
    options.exampleBody === undefined
      ? createPortal({ db, keys, apiUrl: 'http://127.0.0.1/v1', exampleBody: '{}', surveys: [dataset] })
      : createPortal({ db, keys, apiUrl: () => apiUrl, exampleBody: options.exampleBody });
  const server = await listen(mountPortal(api, portal), { port: 0 });
  apiUrl = server.url;
  const origin = server.url.replace(/\/v1$/, '');
  let chromium: ChromiumPage;
  try {
    chromium = await startChromiumPage(options.viewport ?? { width: 1280, height: 900 });
  } catch (error) {
    await server.close();
    await db.close();
    dataset.close();
    throw error;
  }
  const page = chromium.page;
  if (options.acceptDialogs) page.on('dialog', (dialog) => void dialog.accept());
  return {
    db,
    dataset,
    server,
    origin,
    chromium,
    page,
    accountId,
    passwords,
    async signIn(email, password = passwords.get(email)) {
      await page.goto(`${origin}/portal/sign-in`);
      await page.getByLabel('E-mail address').fill(email);
      await page.getByLabel('Password', { exact: true }).fill(password ?? '');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForLoadState();
    },
    async close() {
      await chromium.close();
      await server.close();
      await db.close();
      dataset.close();
    },
  };
}
