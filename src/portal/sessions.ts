import {
  clearFailedSignIns,
  hashPassword,
  liveSession,
  passwordHashOf,
  passwordProblem,
  replacePassword,
  reservePasswordCheck,
  revokeSession,
  signInUser,
  startSession,
  verifyPassword,
  type Database,
  type Queryable,
  type SessionRow,
} from '../access/index.js';

/** Portal sessions last 30 minutes from sign-in: short-lived, and revocable in the database. */
export const SESSION_SECONDS = 30 * 60;
/** Failed sign-ins in a row that lock a user out, and for how long. */
export const MAX_FAILED_SIGN_INS = 5;
export const LOCKOUT_SECONDS = 15 * 60;

/** The signed-in user of a session, with what every page needs. */
export type Session = SessionRow;

export type SignInResult = { ok: true; sessionId: string } | { ok: false; message: string; passwordRight: boolean };

/** Checked when the e-mail is unknown or the user locked: the same scrypt cost as a stored hash. */
const NO_USER_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/**
 * Password check with lockout after MAX_FAILED_SIGN_INS failures in a row. An unknown
 * e-mail, a wrong password and a locked user get the same message after the same work (one
 * scrypt derivation), so neither the text nor the time tells which e-mail addresses have a
 * user or which users are locked. Only the right password of a disabled user says so.
 */
export async function signIn(db: Database, emailInput: string, password: string): Promise<SignInResult> {
  const email = emailInput.trim().toLowerCase();
  const user = await signInUser(db, email);
  // Counted before the check, so concurrent attempts never get more than MAX_FAILED_SIGN_INS checks per lockout.
  const admitted = user !== undefined && (await reservePasswordCheck(db, user.id, MAX_FAILED_SIGN_INS, LOCKOUT_SECONDS));
  const right = await verifyPassword(password, admitted ? user.passwordHash : NO_USER_HASH);
  if (!admitted || !right) {
    return { ok: false, passwordRight: false, message: `Wrong e-mail address or password. After ${MAX_FAILED_SIGN_INS} failed sign-ins in a row a user is locked for ${LOCKOUT_SECONDS / 60} minutes; if you forgot your password or are locked out, ask your provider contact for a new one.` };
  }
  if (user.disabled || user.accountDisabled) {
    await clearFailedSignIns(db, user.id);
    return { ok: false, passwordRight: true, message: 'This user or its account is disabled. Ask your provider contact.' };
  }
  const sessionId = await db.transaction(async (tx) => {
    await clearFailedSignIns(tx, user.id);
    return startSession(tx, user.id, SESSION_SECONDS);
  });
  return { ok: true, sessionId };
}

/** The live session of a cookie value, or undefined (unknown, expired, revoked, user or account disabled). */
export async function sessionOf(db: Queryable, sessionId: string | undefined): Promise<Session | undefined> {
  if (sessionId === undefined || !/^[A-Za-z0-9_-]{43}$/.test(sessionId)) return undefined;
  return liveSession(db, sessionId);
}

export async function signOut(db: Queryable, session: Session): Promise<void> {
  await revokeSession(db, session.idHash);
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
  if (!(await verifyPassword(current, await passwordHashOf(db, session.userId)))) return { problem: 'The current password is wrong.' };
  if (current === next) return { problem: 'The new password must differ from the current one.' };
  const hash = await hashPassword(next);
  const sessionId = await db.transaction(async (tx) => {
    await replacePassword(tx, session.userId, hash);
    return startSession(tx, session.userId, SESSION_SECONDS);
  });
  return { sessionId };
}
