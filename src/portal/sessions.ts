import { createHash, randomBytes } from 'node:crypto';
import { hashPassword, passwordProblem, verifyPassword, type Database, type Queryable } from '../access/index.js';

/** Portal sessions last 30 minutes from sign-in: short-lived, and revocable in the database. */
export const SESSION_SECONDS = 30 * 60;
/** Failed sign-ins in a row that lock a user out, and for how long. */
export const MAX_FAILED_SIGN_INS = 5;
export const LOCKOUT_SECONDS = 15 * 60;

const sha256 = (value: string): string => createHash('sha256').update(value).digest('hex');

/** The signed-in user of a session, with what every page needs. */
export interface Session {
  idHash: string;
  csrfToken: string;
  userId: string;
  email: string;
  accountId: string;
  accountName: string;
  mustChangePassword: boolean;
}

export type SignInResult = { ok: true; sessionId: string } | { ok: false; message: string; passwordRight: boolean };

/** Checked when the e-mail is unknown or the user locked: the same scrypt cost as a stored hash. */
const NO_USER_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/**
 * Counts a check of a user's password before it is made, in one statement, and answers
 * whether it may be made: not while the user is locked. The check that reaches the limit
 * locks the user at once (a right password then lifts it again), so concurrent attempts
 * never get more than MAX_FAILED_SIGN_INS checks per lockout. After a lockout ends the
 * count starts again at 1.
 */
const RESERVE_CHECK_SQL = `
  UPDATE users SET
    failed_sign_ins = CASE WHEN locked_until IS NULL THEN failed_sign_ins + 1 ELSE 1 END,
    locked_until = CASE WHEN (CASE WHEN locked_until IS NULL THEN failed_sign_ins + 1 ELSE 1 END) >= $2 THEN now() + make_interval(secs => $3) END
  WHERE id = $1 AND (locked_until IS NULL OR locked_until <= now())
  RETURNING failed_sign_ins`;

interface UserRow {
  id: string;
  password_hash: string;
  disabled: boolean;
  account_disabled: boolean;
}

/**
 * Password check with lockout after MAX_FAILED_SIGN_INS failures in a row. An unknown
 * e-mail, a wrong password and a locked user get the same message after the same work (one
 * scrypt derivation), so neither the text nor the time tells which e-mail addresses have a
 * user or which users are locked. Only the right password of a disabled user says so.
 */
export async function signIn(db: Database, emailInput: string, password: string): Promise<SignInResult> {
  const email = emailInput.trim().toLowerCase();
  const { rows } = await db.query<UserRow>(
    'SELECT u.id, u.password_hash, u.disabled, a.disabled AS account_disabled FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.email = $1',
    [email],
  );
  const user = rows[0];
  const admitted = user !== undefined && (await db.query(RESERVE_CHECK_SQL, [user.id, MAX_FAILED_SIGN_INS, LOCKOUT_SECONDS])).rows.length === 1;
  const right = await verifyPassword(password, admitted ? user.password_hash : NO_USER_HASH);
  if (!admitted || !right) {
    return { ok: false, passwordRight: false, message: `Wrong e-mail address or password. After ${MAX_FAILED_SIGN_INS} failed sign-ins in a row a user is locked for ${LOCKOUT_SECONDS / 60} minutes; if you forgot your password or are locked out, ask your provider contact for a new one.` };
  }
  if (user.disabled || user.account_disabled) {
    await db.query('UPDATE users SET failed_sign_ins = 0, locked_until = NULL WHERE id = $1', [user.id]);
    return { ok: false, passwordRight: true, message: 'This user or its account is disabled. Ask your provider contact.' };
  }
  const sessionId = await db.transaction(async (tx) => {
    await tx.query('UPDATE users SET failed_sign_ins = 0, locked_until = NULL WHERE id = $1', [user.id]);
    return startSession(tx, user.id);
  });
  return { ok: true, sessionId };
}

/** A new session of a user (fresh id and CSRF token): the cookie value, stored only as its sha256. */
async function startSession(tx: Queryable, userId: string): Promise<string> {
  const sessionId = randomBytes(32).toString('base64url');
  await tx.query('INSERT INTO portal_sessions (id_hash, user_id, csrf_token, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))', [sha256(sessionId), userId, randomBytes(24).toString('base64url'), SESSION_SECONDS]);
  return sessionId;
}

/** The live session of a cookie value, or undefined (unknown, expired, revoked, user or account disabled). */
export async function sessionOf(db: Queryable, sessionId: string | undefined): Promise<Session | undefined> {
  if (sessionId === undefined || !/^[A-Za-z0-9_-]{43}$/.test(sessionId)) return undefined;
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

export async function signOut(db: Queryable, session: Session): Promise<void> {
  await db.query('UPDATE portal_sessions SET revoked_at = now() WHERE id_hash = $1', [session.idHash]);
}

/**
 * Sets a new password and ends every session of the user, this one too: the answer carries
 * a new session (a new id and CSRF token), so whoever held an old cookie holds nothing.
 * Returns the new session's cookie value, or the problem with the input.
 */
export async function changePassword(db: Database, session: Session, current: string, next: string, repeat: string): Promise<{ problem: string } | { sessionId: string }> {
  if (next !== repeat) return { problem: 'The new password and its repetition differ.' };
  const problem = passwordProblem(next, session.email);
  if (problem !== undefined) return { problem: `The new password ${problem}.` };
  const { rows } = await db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [session.userId]);
  if (!(await verifyPassword(current, rows[0]?.password_hash ?? ''))) return { problem: 'The current password is wrong.' };
  if (current === next) return { problem: 'The new password must differ from the current one.' };
  const hash = await hashPassword(next);
  const sessionId = await db.transaction(async (tx) => {
    await tx.query('UPDATE users SET password_hash = $2, must_change_password = false WHERE id = $1', [session.userId, hash]);
    await tx.query('UPDATE portal_sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [session.userId]);
    return startSession(tx, session.userId);
  });
  return { sessionId };
}
