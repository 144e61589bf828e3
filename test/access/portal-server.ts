// The portal and the API served by one node:http server on the embedded database, with an
// account and its users: what the portal tests start from, over real HTTP (portal-client.ts)
// or in Chromium (portal-in-browser.ts). Each test says only what differs (datasets, licences,
// users, whether the first password must be changed, audiences, the key cache, the handler's
// own options).
import { join } from 'node:path';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type CrosstabHandlerOptions, type RunningServer, type UsageSink } from '../../src/http/index.js';
import { addAccount, addUser, DbAudienceStore, DbKeyStore, DbUsageSink, openDatabase, parseLicences, type Database, type DbKeyStoreOptions } from '../../src/access/index.js';
import { createPortal, mountPortal } from '../../src/portal/index.js';
import { tempDir } from '../http/support.js';
import { cookieOf, postSignIn, signInForm } from './portal-client.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

export interface PortalServerOptions {
  /** The datasets served, by path (the first is `dataset`). */
  datasets: string[];
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
  keys?: DbKeyStoreOptions;
  /** The API's usage sink made from the database's (e.g. one the test holds); the database's own by default. */
  usage?: (sink: DbUsageSink) => UsageSink;
  /** The API handler's other options (an access log, a body timeout). */
  handler?: Partial<CrosstabHandlerOptions>;
  /** The portal's example body; with one, the API's address is the server's own, else a fixed one and the portal lists the surveys. */
  exampleBody?: string;
  /** The database as the portal is given it (e.g. one that counts its statements); the database itself by default. */
  portalDatabase?: (db: Database) => Database;
}

export interface PortalServer {
  db: Database;
  datasets: Dataset[];
  dataset: Dataset;
  server: RunningServer;
  /** The server's address without /v1. */
  origin: string;
  accountId: string;
  /** Each user's one-time password, by e-mail address. */
  passwords: Map<string, string>;
  /** The portal's session cookie of a user signed in over HTTP with the one-time password. */
  signInCookie(email: string): Promise<string>;
  close(): Promise<void>;
}

export async function startPortalServer(options: PortalServerOptions): Promise<PortalServer> {
  const [surveys, groups] = options.licences ?? [['GSS'], ['GSS:_ALL_']];
  const db = await openDatabase(await newEmbeddedFolder(join(tempDir(options.prefix), 'db')));
  const accountId = (await addAccount(db, 'acme', parseLicences(surveys, groups), options.rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute: options.rateLimitPerMinute })).id;
  const passwords = new Map<string, string>();
  for (const email of options.users ?? ['analyst@acme.example']) {
    const added = await addUser(db, 'acme', email);
    passwords.set(email, added.oneTimePassword);
    if (options.mustChangePassword === false) await db.query('UPDATE users SET must_change_password = false WHERE id = $1', [added.user.id]);
  }
  const datasets: Dataset[] = [];
  for (const path of options.datasets) datasets.push(await openDataset(path));
  const keys = new DbKeyStore(db, options.keys);
  const api = await createCrosstabHandler({ datasets, keys, usage: options.usage === undefined ? new DbUsageSink(db) : options.usage(new DbUsageSink(db)), ...(options.audiences ? { audiences: new DbAudienceStore(db) } : {}), ...options.handler });
  let apiUrl = '';
  const portalDb = options.portalDatabase?.(db) ?? db;
  const portal =
    options.exampleBody === undefined
      ? createPortal({ db: portalDb, keys, apiUrl: 'http://127.0.0.1/v1', exampleBody: '{}', surveys: datasets })
      : createPortal({ db: portalDb, keys, apiUrl: () => apiUrl, exampleBody: options.exampleBody });
  const server = await listen(mountPortal(api, portal), { port: 0 });
  apiUrl = server.url;
  const origin = server.url.replace(/\/v1$/, '');
  return {
    db,
    datasets,
    dataset: datasets[0] as Dataset,
    server,
    origin,
    accountId,
    passwords,
    async signInCookie(email) {
      const signed = await postSignIn(origin, await signInForm(origin), email, passwords.get(email) ?? '');
      if (signed.status !== 303) throw new Error(`signing in ${email} answered ${signed.status}`);
      return cookieOf(signed, 'crosstab_portal') as string;
    },
    async close() {
      await server.close();
      await db.close();
      for (const dataset of datasets) await dataset.close();
    },
  };
}
