import { databaseLocation, type OidcOptions, type StoreOperationListener, DbKeyStore, DbUsageSink, listAccounts, openDatabase, seedDevelopmentAccount, type Database } from '../access/index.js';
import type { DurableWriteStats, KeyStore, UsageSink } from '../keys/index.js';

/** What `crosstab serve` needs of the access database. */
export interface AccessStore {
  db: Database;
  keys: DbKeyStore & KeyStore;
  usage: DbUsageSink & UsageSink;
}

/**
 * The development account of a first start, or why there is none. Created only on an empty
 * database, and only on the embedded one (a developer's `npm start`) unless `--dev-account`
 * asks for it: a production database on a PostgreSQL server never gets a full-licence account
 * whose credentials go to the log. Called only once the server listens, so a start that
 * cannot get its port leaves the database empty and the next start still shows them.
 */
export async function seedDevelopment(
  access: AccessStore,
  surveys: readonly string[],
  devAccount: boolean,
): Promise<{ seeded: { email: string; oneTimePassword: string; apiKey: string } } | { seeded: undefined; emptyServer: boolean }> {
  if (access.db.kind === 'embedded' || devAccount) {
    const seeded = await seedDevelopmentAccount(access.db, surveys);
    if (seeded !== undefined) return { seeded };
    return { seeded: undefined, emptyServer: false };
  }
  return { seeded: undefined, emptyServer: (await listAccounts(access.db)).length === 0 };
}

/**
 * Usage statements in flight at once on a PostgreSQL server by default. One: every record
 * that arrives while a statement commits goes into the next, so batches grow with the load.
 * Measured on 2 cores with the server beside us (docs/http.md): 1 in flight made 12-19% more
 * req/s at 100 connections than 4, the same at 10, and half the server's CPU per billed call.
 */
export const DEFAULT_USAGE_STATEMENTS = 1;

/** Opens (migrating) the database of `--database`. */
export async function openAccessStore(
  flag: string | undefined,
  options: { oidc?: OidcOptions; usageStatements?: number; onEvent?: (event: string, message: string, stats?: DurableWriteStats) => void; onOperation?: StoreOperationListener } = {},
): Promise<AccessStore> {
  const db = await openDatabase(databaseLocation(flag), { ...(options.onEvent ? { onEvent: options.onEvent } : {}), ...(options.onOperation ? { onOperation: options.onOperation } : {}) });
  // The embedded database runs one statement at a time on its own thread anyway.
  const statements = db.kind === 'postgres' ? (options.usageStatements ?? DEFAULT_USAGE_STATEMENTS) : 1;
  return {
    db,
    keys: new DbKeyStore(db, options.oidc ? { oidc: options.oidc } : {}),
    usage: new DbUsageSink(db, statements, options.onEvent ? { onEvent: options.onEvent } : {}),
  };
}
