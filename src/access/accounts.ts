import { randomBytes } from 'node:crypto';
import type { Database, Queryable } from './database.js';
import { badInput, checkName, type Licences } from './validate.js';

/** An account as the admin commands and the portal show it. */
export interface Account {
  id: string;
  name: string;
  disabled: boolean;
  /** Billed or refused calls per minute allowed; null = no limit. */
  rateLimitPerMinute: number | null;
  /** Billed calls per calendar month (UTC) allowed; null = no quota. */
  monthlyQuota: number | null;
  createdAt: string;
  /** Licensed surveys with their authorization groups (empty = licensed, no permission yet). */
  licences: { survey: string; groups: string[] }[];
}

interface AccountRow {
  id: string;
  name: string;
  disabled: boolean;
  rate_limit_per_minute: number | null;
  monthly_quota: number | null;
  created_at: Date | string;
}

export function iso(value: Date | string | null | undefined): string | null {
  return value == null ? null : new Date(value).toISOString();
}

async function licencesOf(db: Queryable, accountId: string): Promise<Account['licences']> {
  const { rows } = await db.query<{ survey: string; group: string | null }>(
    `SELECT l.survey, p.authorization_group AS "group" FROM licensed_surveys l
       LEFT JOIN survey_permissions p ON p.account_id = l.account_id AND p.survey = l.survey
      WHERE l.account_id = $1 ORDER BY l.survey, p.authorization_group`,
    [accountId],
  );
  const licences = new Map<string, string[]>();
  for (const row of rows) {
    const groups = licences.get(row.survey) ?? [];
    if (row.group !== null) groups.push(row.group);
    licences.set(row.survey, groups);
  }
  return [...licences].map(([survey, groups]) => ({ survey, groups }));
}

async function toAccount(db: Queryable, row: AccountRow): Promise<Account> {
  return {
    id: row.id,
    name: row.name,
    disabled: row.disabled,
    rateLimitPerMinute: row.rate_limit_per_minute,
    monthlyQuota: row.monthly_quota,
    createdAt: iso(row.created_at) as string,
    licences: await licencesOf(db, row.id),
  };
}

const ACCOUNT_COLUMNS = 'id, name, disabled, rate_limit_per_minute, monthly_quota, created_at';

/** The account named `name`, or a clear error naming `field`. */
export async function findAccount(db: Queryable, name: string | undefined, field = 'account'): Promise<Account> {
  if (name === undefined || name === '') throw badInput(field, 'is required: give the account name, e.g. acme.');
  const { rows } = await db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE name = $1`, [name]);
  const row = rows[0];
  if (row === undefined) throw badInput(field, `names no account ${JSON.stringify(name)}.`, 'List the accounts with `crosstab accounts list`.');
  return toAccount(db, row);
}

export async function accountById(db: Queryable, id: string): Promise<Account> {
  const { rows } = await db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [id]);
  if (rows[0] === undefined) throw badInput('account', `${id} does not exist.`);
  return toAccount(db, rows[0]);
}

export async function listAccounts(db: Queryable): Promise<Account[]> {
  const { rows } = await db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY name`);
  const accounts: Account[] = [];
  for (const row of rows) accounts.push(await toAccount(db, row));
  return accounts;
}

async function writeLicences(tx: Queryable, accountId: string, licences: Licences): Promise<void> {
  await tx.query('DELETE FROM licensed_surveys WHERE account_id = $1', [accountId]);
  for (const [survey, groups] of licences) {
    await tx.query('INSERT INTO licensed_surveys (account_id, survey) VALUES ($1, $2)', [accountId, survey]);
    for (const group of groups) {
      await tx.query('INSERT INTO survey_permissions (account_id, survey, authorization_group) VALUES ($1, $2, $3)', [accountId, survey, group]);
    }
  }
}

export interface AccountLimits {
  rateLimitPerMinute?: number | null;
  monthlyQuota?: number | null;
}

/** Creates an account with its licences, in one transaction. */
export async function addAccount(db: Database, name: string, licences: Licences, limits: AccountLimits = {}): Promise<Account> {
  checkName(name, 'name', 'an account name');
  const id = `acc_${randomBytes(8).toString('hex')}`;
  return db.transaction(async (tx) => {
    const existing = await tx.query('SELECT 1 FROM accounts WHERE name = $1', [name]);
    if (existing.rows.length > 0) throw badInput('name', `${JSON.stringify(name)} is already taken by another account.`, 'Choose another name, or change it with `crosstab accounts update`.');
    await tx.query('INSERT INTO accounts (id, name, rate_limit_per_minute, monthly_quota) VALUES ($1, $2, $3, $4)', [id, name, limits.rateLimitPerMinute ?? null, limits.monthlyQuota ?? null]);
    await writeLicences(tx, id, licences);
    return accountById(tx, id);
  });
}

export interface AccountChange extends AccountLimits {
  licences?: Licences;
  disabled?: boolean;
}

/**
 * Changes an account in one transaction. Licences are replaced as a whole; keys follow at
 * once (a key's rights are its account's rights at the moment of the call). Disabling it
 * ends its users' portal sessions.
 */
export async function updateAccount(db: Database, name: string, change: AccountChange): Promise<Account> {
  return db.transaction(async (tx) => {
    const account = await findAccount(tx, name);
    const sets: string[] = [];
    const values: unknown[] = [];
    const set = (column: string, value: unknown): void => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    if (change.disabled !== undefined) set('disabled', change.disabled);
    if (change.rateLimitPerMinute !== undefined) set('rate_limit_per_minute', change.rateLimitPerMinute);
    if (change.monthlyQuota !== undefined) set('monthly_quota', change.monthlyQuota);
    values.push(account.id);
    await tx.query(`UPDATE accounts SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $${values.length}`, values);
    if (change.licences !== undefined) await writeLicences(tx, account.id, change.licences);
    // Disabling ends its users' portal sessions: enabling it again must not revive them.
    if (change.disabled === true) {
      await tx.query('UPDATE portal_sessions SET revoked_at = now() WHERE revoked_at IS NULL AND user_id IN (SELECT id FROM users WHERE account_id = $1)', [account.id]);
    }
    return accountById(tx, account.id);
  });
}
