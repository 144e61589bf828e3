import { dropOldSignInFailures, releaseSignInFailure, reserveSignInFailure, signInWindowSecondsLeft, type Queryable } from '../access/index.js';

/** Failed sign-ins one network address may make per window before it is refused (429). */
export const MAX_SIGN_IN_FAILURES_PER_ADDRESS = 20;
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;

export interface SignInThrottleOptions {
  /** Failed sign-ins from one address that close the window (default 20). */
  maxFailures?: number;
  /** Length of the window in seconds, from an address's first failure (default 900). */
  windowSeconds?: number;
}

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
    const window = await reserveSignInFailure(this.db, address, this.windowSeconds, this.maxFailures);
    this.sweep();
    if (window === undefined) {
      const left = await signInWindowSecondsLeft(this.db, address, this.windowSeconds);
      return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil(left ?? 1)) };
    }
    return {
      admitted: true,
      succeeded: async () => {
        await releaseSignInFailure(this.db, address, window);
      },
    };
  }

  /** Drops windows that ended over an hour ago, at most once every ten minutes per process. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.sweptAt < 600_000) return;
    this.sweptAt = now;
    void dropOldSignInFailures(this.db, this.windowSeconds).catch(() => {});
  }
}
