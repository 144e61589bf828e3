import { databaseLocation, type OidcOptions, DbKeyStore, DbUsageSink, openDatabase, seedDevelopmentAccount, type Database } from '../access/index.js';
import type { KeyStore, UsageSink } from '../http/index.js';

/** What `crosstab serve` needs of the access database. */
export interface AccessStore {
  db: Database;
  keys: DbKeyStore & KeyStore;
  usage: DbUsageSink & UsageSink;
  /** Set on the first start of an empty database: shown once. */
  development?: { email: string; oneTimePassword: string; apiKey: string };
}

/** Opens (migrating) the database of `--database`, seeding a development account when it is empty. */
export async function openAccessStore(flag: string | undefined, surveys: readonly string[], oidc?: OidcOptions): Promise<AccessStore> {
  const db = await openDatabase(databaseLocation(flag));
  try {
    const development = await seedDevelopmentAccount(db, surveys);
    return { db, keys: new DbKeyStore(db, oidc ? { oidc } : {}), usage: new DbUsageSink(db, db.kind === 'postgres' ? 4 : 1), ...(development === undefined ? {} : { development }) };
  } catch (error) {
    await db.close();
    throw error;
  }
}
