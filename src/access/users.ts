import { randomBytes } from 'node:crypto';
import type { Database, Queryable } from './database.js';
import { findAccount, iso } from './accounts.js';
import { hashPassword, oneTimePassword } from './passwords.js';
import { badInput, checkEmail } from './validate.js';

/** A person of an account who signs in to the developer portal. */
export interface User {
  id: string;
  accountId: string;
  email: string;
  mustChangePassword: boolean;
  disabled: boolean;
  createdAt: string;
}

interface UserRow {
  id: string;
  account_id: string;
  email: string;
  must_change_password: boolean;
  disabled: boolean;
  created_at: Date | string;
}

export function toUser(row: UserRow): User {
  return { id: row.id, accountId: row.account_id, email: row.email, mustChangePassword: row.must_change_password, disabled: row.disabled, createdAt: iso(row.created_at) as string };
}

export const USER_COLUMNS = 'id, account_id, email, must_change_password, disabled, created_at';

/**
 * Adds a user to an account with a one-time password, returned once and stored only as a
 * scrypt hash; the first portal sign-in must replace it.
 */
export async function addUser(db: Database, accountName: string, emailInput: string | undefined): Promise<{ user: User; oneTimePassword: string }> {
  const email = checkEmail(emailInput);
  const password = oneTimePassword();
  const passwordHash = await hashPassword(password);
  const id = `usr_${randomBytes(8).toString('hex')}`;
  return db.transaction(async (tx) => {
    const account = await findAccount(tx, accountName);
    const taken = await tx.query('SELECT 1 FROM users WHERE email = $1', [email]);
    if (taken.rows.length > 0) throw badInput('email', `${email} already has a user (an e-mail address signs in to one account).`);
    const { rows } = await tx.query<UserRow>(
      `INSERT INTO users (id, account_id, email, password_hash) VALUES ($1, $2, $3, $4) RETURNING ${USER_COLUMNS}`,
      [id, account.id, email, passwordHash],
    );
    return { user: toUser(rows[0] as UserRow), oneTimePassword: password };
  });
}

export async function listUsers(db: Queryable, accountId: string): Promise<User[]> {
  const { rows } = await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE account_id = $1 ORDER BY email`, [accountId]);
  return rows.map(toUser);
}

/** Ends every open portal session of a user (the next page asks to sign in again). */
async function endSessions(tx: Queryable, userId: string): Promise<void> {
  await tx.query('UPDATE portal_sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
}

async function userByEmail(tx: Queryable, emailInput: string | undefined): Promise<UserRow> {
  const email = checkEmail(emailInput);
  const { rows } = await tx.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE email = $1`, [email]);
  const row = rows[0];
  if (row === undefined) throw badInput('email', `no user has the e-mail address ${email}.`, 'List the users of an account with `crosstab users list --account NAME`.');
  return row;
}

/**
 * Gives a user a new one-time password (the next sign-in must replace it), lifts a lockout
 * and ends the user's portal sessions, in one transaction. For a forgotten password or a
 * locked-out user: the provider's contact hands the new password over.
 */
export async function resetUserPassword(db: Database, emailInput: string | undefined): Promise<{ user: User; oneTimePassword: string }> {
  const email = checkEmail(emailInput);
  const password = oneTimePassword();
  const passwordHash = await hashPassword(password);
  return db.transaction(async (tx) => {
    const found = await userByEmail(tx, email);
    const { rows } = await tx.query<UserRow>(
      `UPDATE users SET password_hash = $2, must_change_password = true, failed_sign_ins = 0, locked_until = NULL WHERE id = $1 RETURNING ${USER_COLUMNS}`,
      [found.id, passwordHash],
    );
    await endSessions(tx, found.id);
    return { user: toUser(rows[0] as UserRow), oneTimePassword: password };
  });
}

/**
 * Disables or enables a user. A disabled user cannot sign in and its sessions end at once
 * (every session lookup checks the flag); the account's API keys are not touched: they
 * belong to the account.
 */
export async function setUserDisabled(db: Database, emailInput: string | undefined, disabled: boolean): Promise<User> {
  return db.transaction(async (tx) => {
    const found = await userByEmail(tx, emailInput);
    const { rows } = await tx.query<UserRow>(`UPDATE users SET disabled = $2 WHERE id = $1 RETURNING ${USER_COLUMNS}`, [found.id, disabled]);
    if (disabled) await endSessions(tx, found.id);
    return toUser(rows[0] as UserRow);
  });
}
