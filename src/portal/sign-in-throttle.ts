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

/** Counts a failure: a new window when the last one is over, else one more in it. */
const COUNT_FAILURE_SQL = `
  INSERT INTO sign_in_failures AS f (address, window_start, failures) VALUES ($1, now(), 1)
  ON CONFLICT (address) DO UPDATE SET
    window_start = CASE WHEN f.window_start <= now() - make_interval(secs => $2) THEN now() ELSE f.window_start END,
    failures = CASE WHEN f.window_start <= now() - make_interval(secs => $2) THEN 1 ELSE f.failures + 1 END`;

const OPEN_WINDOW_SQL = `
  SELECT failures, extract(epoch FROM window_start + make_interval(secs => $2) - now())::float8 AS seconds_left
    FROM sign_in_failures WHERE address = $1 AND window_start > now() - make_interval(secs => $2)`;

/**
 * Per-address throttling of portal sign-ins, beside the per-user lockout: after
 * `maxFailures` failed sign-ins from one address within `windowSeconds`, every further
 * attempt from it is refused until the window ends, without checking the password. The
 * counts live in the access database, so replicas on one PostgreSQL database share them.
 * A successful sign-in does not reset the count (a caller's own account must not buy more
 * guesses at others').
 */
export class SignInThrottle {
  readonly maxFailures: number;
  readonly windowSeconds: number;
  private sweptAt = 0;

  constructor(private readonly db: Queryable, options: SignInThrottleOptions = {}) {
    this.maxFailures = options.maxFailures ?? MAX_SIGN_IN_FAILURES_PER_ADDRESS;
    this.windowSeconds = options.windowSeconds ?? SIGN_IN_WINDOW_SECONDS;
  }

  /** Seconds until `address` may try again, or undefined when it may try now. */
  async retryAfter(address: string): Promise<number | undefined> {
    const { rows } = await this.db.query<{ failures: number; seconds_left: number }>(OPEN_WINDOW_SQL, [address, this.windowSeconds]);
    const row = rows[0];
    return row !== undefined && row.failures >= this.maxFailures ? Math.max(1, Math.ceil(row.seconds_left)) : undefined;
  }

  async recordFailure(address: string): Promise<void> {
    await this.db.query(COUNT_FAILURE_SQL, [address, this.windowSeconds]);
    this.sweep();
  }

  /** Drops windows that ended over an hour ago, at most once every ten minutes per process. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.sweptAt < 600_000) return;
    this.sweptAt = now;
    void this.db.query("DELETE FROM sign_in_failures WHERE window_start < now() - make_interval(secs => $1) - interval '1 hour'", [this.windowSeconds]).catch(() => {});
  }
}
