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

export type SignInResult = { ok: true; sessionId: string } | { ok: false; message: string };

interface UserRow {
  id: string;
  password_hash: string;
  failed_sign_ins: number;
  locked_until: Date | string | null;
  disabled: boolean;
  account_disabled: boolean;
}

/** Password check with lockout after repeated failures; the same message for an unknown e-mail and a wrong password. */
export async function signIn(db: Database, emailInput: string, password: string): Promise<SignInResult> {
  const email = emailInput.trim().toLowerCase();
  const wrong = { ok: false, message: 'Wrong e-mail address or password.' } as const;
  const { rows } = await db.query<UserRow>(
    'SELECT u.id, u.password_hash, u.failed_sign_ins, u.locked_until, u.disabled, a.disabled AS account_disabled FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.email = $1',
    [email],
  );
  const user = rows[0];
  if (user === undefined) {
    await verifyPassword(password, 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'); // same time as a real check
    return wrong;
  }
  const lockedUntil = user.locked_until === null ? 0 : new Date(user.locked_until).getTime();
  if (lockedUntil > Date.now()) {
    const minutes = Math.ceil((lockedUntil - Date.now()) / 60_000);
    return { ok: false, message: `Too many failed sign-ins: this user is locked for ${minutes} more minute${minutes === 1 ? '' : 's'}. Try again later or ask your provider contact.` };
  }
  if (!(await verifyPassword(password, user.password_hash))) {
    const failures = user.failed_sign_ins + 1;
    if (failures >= MAX_FAILED_SIGN_INS) {
      await db.query('UPDATE users SET failed_sign_ins = 0, locked_until = now() + make_interval(secs => $2) WHERE id = $1', [user.id, LOCKOUT_SECONDS]);
      return { ok: false, message: `Too many failed sign-ins: this user is locked for ${LOCKOUT_SECONDS / 60} minutes.` };
    }
    await db.query('UPDATE users SET failed_sign_ins = $2 WHERE id = $1', [user.id, failures]);
    return { ok: false, message: `${wrong.message} ${MAX_FAILED_SIGN_INS - failures} attempt${MAX_FAILED_SIGN_INS - failures === 1 ? '' : 's'} left before a ${LOCKOUT_SECONDS / 60}-minute lockout.` };
  }
  if (user.disabled || user.account_disabled) return { ok: false, message: 'This user or its account is disabled. Ask your provider contact.' };
  const sessionId = randomBytes(32).toString('base64url');
  await db.transaction(async (tx) => {
    await tx.query('UPDATE users SET failed_sign_ins = 0, locked_until = NULL WHERE id = $1', [user.id]);
    await tx.query('INSERT INTO portal_sessions (id_hash, user_id, csrf_token, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))', [sha256(sessionId), user.id, randomBytes(24).toString('base64url'), SESSION_SECONDS]);
  });
  return { ok: true, sessionId };
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

/** Sets a new password; every other session of the user is revoked. Returns a problem message or undefined. */
export async function changePassword(db: Database, session: Session, current: string, next: string, repeat: string): Promise<string | undefined> {
  if (next !== repeat) return 'The new password and its repetition differ.';
  const problem = passwordProblem(next, session.email);
  if (problem !== undefined) return `The new password ${problem}.`;
  const { rows } = await db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [session.userId]);
  if (!(await verifyPassword(current, rows[0]?.password_hash ?? ''))) return 'The current password is wrong.';
  if (current === next) return 'The new password must differ from the current one.';
  const hash = await hashPassword(next);
  await db.transaction(async (tx) => {
    await tx.query('UPDATE users SET password_hash = $2, must_change_password = false WHERE id = $1', [session.userId, hash]);
    await tx.query('UPDATE portal_sessions SET revoked_at = now() WHERE user_id = $1 AND id_hash <> $2 AND revoked_at IS NULL', [session.userId, session.idHash]);
  });
  return undefined;
}
