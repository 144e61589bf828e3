import type { Database } from './queryable.js';

/**
 * The schema, as an append-only list of migrations: never edit one that shipped, add the
 * next. Each runs in its own transaction; `schema_migrations` records the versions applied.
 */
export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'accounts, licences, permissions, users, keys, usage',
    sql: `
      CREATE TABLE accounts (
        id text PRIMARY KEY,
        name text NOT NULL UNIQUE,
        disabled boolean NOT NULL DEFAULT false,
        rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0),
        monthly_quota integer CHECK (monthly_quota > 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      -- Licensed surveys, and per survey the authorization groups the account may use.
      CREATE TABLE licensed_surveys (
        account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        survey text NOT NULL,
        PRIMARY KEY (account_id, survey)
      );
      CREATE TABLE survey_permissions (
        account_id text NOT NULL,
        survey text NOT NULL,
        authorization_group text NOT NULL,
        PRIMARY KEY (account_id, survey, authorization_group),
        FOREIGN KEY (account_id, survey) REFERENCES licensed_surveys (account_id, survey) ON DELETE CASCADE
      );
      CREATE TABLE users (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        email text NOT NULL UNIQUE,
        password_hash text NOT NULL,
        must_change_password boolean NOT NULL DEFAULT true,
        failed_sign_ins integer NOT NULL DEFAULT 0,
        locked_until timestamptz,
        disabled boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      -- Only a sha256 of each key. revoked_at in the future = revoked after a grace period.
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id),
        user_id text REFERENCES users (id),
        name text NOT NULL,
        hash text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        revoked_at timestamptz
      );
      CREATE INDEX api_keys_account ON api_keys (account_id);
      -- One row per billed call (a 200 of POST /crosstab).
      CREATE TABLE usage (
        request_id text PRIMARY KEY,
        time timestamptz NOT NULL,
        account_id text NOT NULL,
        key_id text NOT NULL,
        survey text NOT NULL,
        targets smallint NOT NULL
      );
      CREATE INDEX usage_account_time ON usage (account_id, time);
      -- Single sign-on: tokens of an issuer whose claim has this value act for the account.
      CREATE TABLE oidc_links (
        issuer text NOT NULL,
        claim text NOT NULL,
        value text NOT NULL,
        account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (issuer, claim, value)
      );
      -- Fixed one-minute windows of the per-account rate limit, shared by every replica.
      CREATE TABLE rate_windows (
        account_id text NOT NULL,
        window_start timestamptz NOT NULL,
        calls integer NOT NULL,
        PRIMARY KEY (account_id, window_start)
      );
      -- Portal sign-in sessions: the cookie holds a random id, the table its sha256.
      CREATE TABLE portal_sessions (
        id_hash text PRIMARY KEY,
        user_id text NOT NULL REFERENCES users (id),
        csrf_token text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz
      );
    `,
  },
  {
    version: 2,
    name: 'portal sign-in throttling per network address',
    sql: `
      -- Failed portal sign-ins per client address in a fixed window, shared by every replica.
      CREATE TABLE sign_in_failures (
        address text PRIMARY KEY,
        window_start timestamptz NOT NULL,
        failures integer NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'usage: one index, the primary key (account_id, time, request_id)',
    sql: `
      -- Every billed call inserted into two b-trees: the primary key on request_id (a random
      -- UUID: a random leaf page each time) and (account_id, time). One key serves both: the
      -- reads (usage reports, monthly quotas) take an account's rows in a time range, and a
      -- record inserted twice has the same request_id, time and account, so it is still
      -- refused (bench/pglite-usage.js: CPU per row with each).
      ALTER TABLE usage DROP CONSTRAINT usage_pkey;
      DROP INDEX usage_account_time;
      ALTER TABLE usage ADD CONSTRAINT usage_pkey PRIMARY KEY (account_id, time, request_id);
    `,
  },
  {
    version: 4,
    name: 'usage: which operation was billed (crosstab or table)',
    sql: `
      -- Rows written before tables were served are crosstab calls. For a table, targets
      -- holds its row and column entries (whole variables expanded).
      ALTER TABLE usage ADD COLUMN operation text NOT NULL DEFAULT 'crosstab' CHECK (operation IN ('crosstab', 'table'));
    `,
  },
  {
    version: 5,
    name: 'portal: saved tables per user, shared within the account',
    sql: `
      -- A table of the portal's Tables page: its spec (a POST /tables body, JSON text) and the
      -- result last computed for it (the JSON Table of that answer), so opening it bills nothing.
      CREATE TABLE saved_tables (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
        spec text NOT NULL,
        result text,
        shared boolean NOT NULL DEFAULT false,
        computed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX saved_tables_account ON saved_tables (account_id, updated_at)
    `,
  },
  {
    version: 6,
    name: 'audiences: saved expressions per account and survey, used as @name',
    sql: `
      -- A saved audience: an expression of one survey, written @name in any expression of the
      -- account's callers. Shared: every caller of the account sees it; else only its user.
      -- user_id null: saved by a key of no user; such an audience is shared (the account's).
      CREATE TABLE audiences (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        user_id text REFERENCES users (id) ON DELETE CASCADE,
        survey text NOT NULL,
        name text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
        expression text NOT NULL CHECK (length(expression) BETWEEN 1 AND 2000),
        label text CHECK (length(label) <= 200),
        shared boolean NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (shared OR user_id IS NOT NULL)
      );
      -- A shared name once per account and survey; a private one once per user and survey.
      CREATE UNIQUE INDEX audiences_shared_name ON audiences (account_id, survey, name) WHERE shared;
      CREATE UNIQUE INDEX audiences_private_name ON audiences (account_id, survey, user_id, name) WHERE NOT shared;
      CREATE INDEX audiences_account ON audiences (account_id, survey, name)
    `,
  },
  {
    version: 7,
    name: "usage: tab books billed as one operation 'tabbook'",
    sql: `
      -- A tab book (POST /tabbooks, the portal's Tab book download) is one billed call; its
      -- targets hold its number of tables.
      ALTER TABLE usage DROP CONSTRAINT usage_operation_check;
      ALTER TABLE usage ADD CONSTRAINT usage_operation_check CHECK (operation IN ('crosstab', 'table', 'tabbook'))
    `,
  },
  {
    version: 8,
    name: 'usage: void (credit) rows of billed answers not delivered',
    sql: `
      -- A billed answer whose connection closed before its last byte went out gets a second
      -- row: the same request_id, account, key, survey, targets and operation, the time of the
      -- void, and why (void_reason; NULL on every billing row). Rows are never updated or
      -- deleted: readers count a billing row only when no void row names its request_id.
      ALTER TABLE usage ADD COLUMN void_reason text CHECK (void_reason IN ('client_closed', 'send_failed', 'shutdown_cut'));
      -- Voids are rare: a partial index finds one by its request without growing with the billing rows.
      CREATE INDEX usage_voids ON usage (account_id, request_id) WHERE void_reason IS NOT NULL
    `,
  },
];

/** Any fixed number: replicas starting at once take turns applying migrations. */
const MIGRATION_LOCK = 7_311_042;

/** Applies the migrations this database has not seen yet, each in its own transaction. */
export async function migrate(database: Database): Promise<void> {
  for (const migration of MIGRATIONS) {
    await database.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await tx.query('CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
      const done = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
      if (done.rows.length > 0) return;
      for (const statement of migration.sql.split(/;\s*\n/).map((part) => part.trim()).filter((part) => part !== '')) {
        await tx.query(statement);
      }
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    });
  }
}
