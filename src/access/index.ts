/**
 * The access half of the service: accounts, licences, users, API keys and usage in one
 * PostgreSQL schema (embedded PGlite or a server), and the only code that writes SQL. Imports
 * the key and usage contracts of src/keys; `crosstab serve`, the admin commands and the portal
 * build on it.
 */
export { DEFAULT_DATABASE, databaseLocation, openDatabase } from './database.js';
export type { Database, OpenDatabaseOptions, Queryable } from './database.js';
export { DEFAULT_STORE_TIMEOUT_MS } from './store-health.js';
export type { StoreEventListener, StoreOperationListener } from './store-health.js';
export { MIGRATIONS, migrate } from './migrations.js';
export { addAccount, findAccount, listAccounts, updateAccount, accountById } from './accounts.js';
export type { Account, AccountChange, AccountLimits } from './accounts.js';
export { addUser, listUsers, resetUserPassword, setUserDisabled } from './users.js';
export type { User } from './users.js';
export { addKey, listKeys, revokeKey, rotateKey, accountOfKey, newKeyId, MAX_GRACE_SECONDS } from './api-keys.js';
export type { KeyInfo } from './api-keys.js';
export { usageReport, usageReports, usageDetail, parseRangeBound, parseUsageRange, portalCallerId } from './usage-report.js';
export type { UsageGrouping, UsageReport } from './usage-report.js';
export { DbKeyStore } from './db-key-store.js';
export type { DbKeyStoreOptions } from './db-key-store.js';
export { DbUsageSink } from './db-usage-sink.js';
export { hashPassword, verifyPassword, oneTimePassword, passwordProblem } from './passwords.js';
export { parseLicences, parseLimit, parseExpiry, splitList, badInput } from './validate.js';
export type { Licences } from './validate.js';
export { seedDevelopmentAccount, DEVELOPMENT_ACCOUNT, DEVELOPMENT_USER } from './development.js';
export { OidcVerifier, linkIssuer, accountOfToken, DEFAULT_JWKS_MAX_AGE_MS, DEFAULT_MAX_TOKEN_LIFETIME_SECONDS } from './oidc.js';
export type { OidcLink, OidcOptions, TrustedIssuer, TokenCheck } from './oidc.js';
export { clearFailedSignIns, liveSession, passwordHashOf, replacePassword, reservePasswordCheck, revokeSession, signInUser, startSession } from './portal-sessions.js';
export type { SessionRow, SignInUser } from './portal-sessions.js';
export { dropOldSignInFailures, releaseSignInFailure, reserveSignInFailure, signInWindowSecondsLeft } from './sign-in-failures.js';
export { saveTable, updateSavedTable, renameSavedTable, ownTableNamed, listSavedTables, savedTable, storeSavedResult, setSavedTableShared, deleteSavedTable, checkSavedTableRoom, checkSavedResultSize, MAX_SAVED_TABLE_NAME, DEFAULT_SAVED_TABLE_LIMITS } from './saved-tables.js';
export type { SavedTable, SavedTableEntry, SavedTableLimits } from './saved-tables.js';
export { DbAudienceStore, listAudiences, audiencesNamed, audiencesUsed, audienceById, createAudience, updateAudience, deleteAudience, MAX_AUDIENCES_PER_ACCOUNT } from './audiences.js';
