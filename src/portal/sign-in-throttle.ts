import type { Queryable } from '../access/index.js';

/** Failed sign-ins one network address may make per window before it is refused (429). */
export const MAX_SIGN_IN_FAILURES_PER_ADDRESS = 20;
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;

export interface SignInThrottleOptions {
  /** Failed sign-ins from one address that close the window (default 20). */
  maxFailures?: number;
  /** Length of the window in seconds, from an address's first failure (default 900). */
  windowSeconds?: number;
}

/**
 * Counts an attempt as a failure before its password is checked, in one statement: a new
 * window when the last one is over, else one more in it, but only while the window has room.
 * No row back = the window is full. Concurrent attempts each get their own count (the row is
 * locked by the update), so never more than `maxFailures` of them are let through.
 */
const RESERVE_SQL = `
  INSERT INTO sign_in_failures AS f (address, window_start, failures) VALUES ($1, now(), 1)
  ON CONFLICT (address) DO UPDATE SET
    window_start = CASE WHEN f.window_start <= now() - make_interval(secs => $2) THEN now() ELSE f.window_start END,
    failures = CASE WHEN f.window_start <= now() - make_interval(secs => $2) THEN 1 ELSE f.failures + 1 END
  WHERE f.window_start <= now() - make_interval(secs => $2) OR f.failures < $3
  RETURNING f.window_start::text AS window`;

/** Takes back the count of an attempt that turned out right, in the window it was counted in. */
const RELEASE_SQL = 'UPDATE sign_in_failures SET failures = failures - 1 WHERE address = $1 AND window_start::text = $2 AND failures > 0';

const SECONDS_LEFT_SQL = `
  SELECT extract(epoch FROM window_start + make_interval(secs => $2) - now())::float8 AS seconds_left
    FROM sign_in_failures WHERE address = $1`;

/** An attempt the throttle let through (its password may be checked), or refused. */
export type SignInAttempt = { admitted: true; succeeded(): Promise<void> } | { admitted: false; retryAfterSeconds: number };

/**
 * Per-address throttling of portal sign-ins, beside the per-user lockout: after
 * `maxFailures` failed sign-ins from one address within `windowSeconds`, every further
 * attempt from it is refused until the window ends, without checking the password. The
 * counts live in the access database, so replicas on one database share them.
 *
 * Each attempt is counted before its password is checked and the count taken back only when
 * the password was right: concurrent attempts cannot all be checked against one stale count,
 * and a caller's own account cannot buy more guesses at others' (a right password only
 * returns its own count). A process that dies between the two leaves its attempt counted.
 */
export class SignInThrottle {
  readonly maxFailures: number;
  readonly windowSeconds: number;
  private sweptAt = 0;

  constructor(private readonly db: Queryable, options: SignInThrottleOptions = {}) {
    this.maxFailures = options.maxFailures ?? MAX_SIGN_IN_FAILURES_PER_ADDRESS;
    this.windowSeconds = options.windowSeconds ?? SIGN_IN_WINDOW_SECONDS;
  }

  /** Counts an attempt from `address`, or refuses it (with the seconds until its window ends). */
  async attempt(address: string): Promise<SignInAttempt> {
    const { rows } = await this.db.query<{ window: string }>(RESERVE_SQL, [address, this.windowSeconds, this.maxFailures]);
    this.sweep();
    const counted = rows[0];
    if (counted === undefined) {
      const left = await this.db.query<{ seconds_left: number }>(SECONDS_LEFT_SQL, [address, this.windowSeconds]);
      return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil(left.rows[0]?.seconds_left ?? 1)) };
    }
    return {
      admitted: true,
      succeeded: async () => {
        await this.db.query(RELEASE_SQL, [address, counted.window]);
      },
    };
  }

  /** Drops windows that ended over an hour ago, at most once every ten minutes per process. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.sweptAt < 600_000) return;
    this.sweptAt = now;
    void this.db.query("DELETE FROM sign_in_failures WHERE window_start < now() - make_interval(secs => $1) - interval '1 hour'", [this.windowSeconds]).catch(() => {});
  }
}
