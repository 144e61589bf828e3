import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from './database.js';

const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

/** A user as sign-in needs it: the stored password hash and whether the user or its account is disabled. */
export interface SignInUser {
  id: string;
  passwordHash: string;
  disabled: boolean;
  accountDisabled: boolean;
}

/** A live portal session with what every page needs. */
export interface SessionRow {
  idHash: string;
  csrfToken: string;
  userId: string;
  email: string;
  accountId: string;
  accountName: string;
  mustChangePassword: boolean;
}

/** The user of an e-mail address (already trimmed and lower-cased), if any. */
export async function signInUser(db: Queryable, email: string): Promise<SignInUser | undefined> {
  const { rows } = await db.query<{ id: string; password_hash: string; disabled: boolean; account_disabled: boolean }>(
    'SELECT u.id, u.password_hash, u.disabled, a.disabled AS account_disabled FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.email = $1',
    [email],
  );
  const row = rows[0];
  return row === undefined ? undefined : { id: row.id, passwordHash: row.password_hash, disabled: row.disabled, accountDisabled: row.account_disabled };
}

/**
 * Counts a check of a user's password before it is made, in one statement, and answers
 * whether it may be made: not while the user is locked. The check that reaches `maxFailed`
 * locks the user for `lockoutSeconds` at once (a right password then lifts it again), so
 * concurrent attempts never get more than `maxFailed` checks per lockout. After a lockout
 * ends the count starts again at 1.
 */
export async function reservePasswordCheck(db: Queryable, userId: string, maxFailed: number, lockoutSeconds: number): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE users SET
       failed_sign_ins = CASE WHEN locked_until IS NULL THEN failed_sign_ins + 1 ELSE 1 END,
       locked_until = CASE WHEN (CASE WHEN locked_until IS NULL THEN failed_sign_ins + 1 ELSE 1 END) >= $2 THEN now() + make_interval(secs => $3) END
     WHERE id = $1 AND (locked_until IS NULL OR locked_until <= now())
     RETURNING failed_sign_ins`,
    [userId, maxFailed, lockoutSeconds],
  );
  return rows.length === 1;
}

/** After a right password: the user's failed sign-ins start again at 0 and any lockout ends. */
export async function clearFailedSignIns(db: Queryable, userId: string): Promise<void> {
  await db.query('UPDATE users SET failed_sign_ins = 0, locked_until = NULL WHERE id = $1', [userId]);
}

/** A new session of a user (fresh id and CSRF token): the cookie value, stored only as its sha256. */
export async function startSession(db: Queryable, userId: string, seconds: number): Promise<string> {
  const sessionId = randomBytes(32).toString('base64url');
  await db.query('INSERT INTO portal_sessions (id_hash, user_id, csrf_token, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))', [sha256(sessionId), userId, randomBytes(24).toString('base64url'), seconds]);
  return sessionId;
}

/** The live session of a cookie value, or undefined (unknown, expired, revoked, user or account disabled). */
export async function liveSession(db: Queryable, sessionId: string): Promise<SessionRow | undefined> {
  const { rows } = await db.query<{ id_hash: string; csrf_token: string; user_id: string; email: string; account_id: string; account_name: string; must_change_password: boolean }>(
    `SELECT s.id_hash, s.csrf_token, u.id AS user_id, u.email, a.id AS account_id, a.name AS account_name, u.must_change_password
       FROM portal_sessions s JOIN users u ON u.id = s.user_id JOIN accounts a ON a.id = u.account_id
      WHERE s.id_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now() AND NOT u.disabled AND NOT a.disabled`,
    [sha256(sessionId)],
  );
  const row = rows[0];
  return row === undefined
    ? undefined
    : { idHash: row.id_hash, csrfToken: row.csrf_token, userId: row.user_id, email: row.email, accountId: row.account_id, accountName: row.account_name, mustChangePassword: row.must_change_password };
}

/** Ends one session (sign-out). */
export async function revokeSession(db: Queryable, idHash: string): Promise<void> {
  await db.query('UPDATE portal_sessions SET revoked_at = now() WHERE id_hash = $1', [idHash]);
}

/** The stored password hash of a user ('' when there is no such user). */
export async function passwordHashOf(db: Queryable, userId: string): Promise<string> {
  const { rows } = await db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [userId]);
  return rows[0]?.password_hash ?? '';
}

/** Stores a user's new password hash (the user chose it: no change is required any more) and ends all their sessions. */
export async function replacePassword(db: Queryable, userId: string, hash: string): Promise<void> {
  await db.query('UPDATE users SET password_hash = $2, must_change_password = false WHERE id = $1', [userId, hash]);
  await db.query('UPDATE portal_sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [userId]);
}
