import type { Queryable } from './database.js';

/**
 * Failed portal sign-ins per network address, in windows of `windowSeconds` from an
 * address's first failure. The counts live in the access database, so replicas on one
 * database share them.
 */

/**
 * Counts an attempt as a failure before its password is checked, in one statement: a new
 * window when the last one is over, else one more in it, but only while the window has room.
 * Returns the window it was counted in, or undefined when the window is full. Concurrent
 * attempts each get their own count (the row is locked by the update), so never more than
 * `maxFailures` of them are let through.
 */
export async function reserveSignInFailure(db: Queryable, address: string, windowSeconds: number, maxFailures: number): Promise<string | undefined> {
  const { rows } = await db.query<{ window: string }>(
    `INSERT INTO sign_in_failures AS f (address, window_start, failures) VALUES ($1, now(), 1)
     ON CONFLICT (address) DO UPDATE SET
       window_start = CASE WHEN f.window_start <= now() - make_interval(secs => $2) THEN now() ELSE f.window_start END,
       failures = CASE WHEN f.window_start <= now() - make_interval(secs => $2) THEN 1 ELSE f.failures + 1 END
     WHERE f.window_start <= now() - make_interval(secs => $2) OR f.failures < $3
     RETURNING f.window_start::text AS window`,
    [address, windowSeconds, maxFailures],
  );
  return rows[0]?.window;
}

/** Takes back the count of an attempt that turned out right, in the window it was counted in. */
export async function releaseSignInFailure(db: Queryable, address: string, window: string): Promise<void> {
  await db.query('UPDATE sign_in_failures SET failures = failures - 1 WHERE address = $1 AND window_start::text = $2 AND failures > 0', [address, window]);
}

/** Seconds until the address's current window ends (undefined when it has none). */
export async function signInWindowSecondsLeft(db: Queryable, address: string, windowSeconds: number): Promise<number | undefined> {
  const { rows } = await db.query<{ seconds_left: number }>(
    `SELECT extract(epoch FROM window_start + make_interval(secs => $2) - now())::float8 AS seconds_left
       FROM sign_in_failures WHERE address = $1`,
    [address, windowSeconds],
  );
  return rows[0]?.seconds_left;
}

/** Drops windows that ended over an hour ago. */
export async function dropOldSignInFailures(db: Queryable, windowSeconds: number): Promise<void> {
  await db.query("DELETE FROM sign_in_failures WHERE window_start < now() - make_interval(secs => $1) - interval '1 hour'", [windowSeconds]);
}
