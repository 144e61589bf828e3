import { databaseLocation, type OidcOptions, DbKeyStore, DbUsageSink, openDatabase, seedDevelopmentAccount, type Database } from '../access/index.js';
import type { KeyStore, UsageSink } from '../http/index.js';

/** What `crosstab serve` needs of the access database. */
export interface AccessStore {
  db: Database;
  keys: DbKeyStore & KeyStore;
  usage: DbUsageSink & UsageSink;
}

/**
 * Seeds the development account and user of an empty database (undefined otherwise): called
 * only once the server listens, so a start that cannot get its port leaves the database
 * empty and the next start still shows the credentials.
 */
export function seedDevelopment(access: AccessStore, surveys: readonly string[]): Promise<{ email: string; oneTimePassword: string; apiKey: string } | undefined> {
  return seedDevelopmentAccount(access.db, surveys);
}

/** Opens (migrating) the database of `--database`. */
export async function openAccessStore(flag: string | undefined, oidc?: OidcOptions): Promise<AccessStore> {
  const db = await openDatabase(databaseLocation(flag));
  return { db, keys: new DbKeyStore(db, oidc ? { oidc } : {}), usage: new DbUsageSink(db, db.kind === 'postgres' ? 4 : 1) };
}
