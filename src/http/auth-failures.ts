import { CrosstabError, ErrorCode } from '../index.js';

/** Limits on failed API keys per client address; every field is optional. */
export interface AuthFailureLimits {
  /** Unknown, revoked or expired keys one address may send per window (default 50). */
  maxFailures?: number;
  /** Length of the window in seconds, from the address's first failure in it (default 60). */
  windowSeconds?: number;
  /** Most addresses tracked at once (default 10,000); the least recently failing are forgotten first. */
  maxAddresses?: number;
}

interface FailureWindow {
  startedAt: number;
  failures: number;
}

function positiveInteger(value: number | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new CrosstabError(ErrorCode.invalidOption, `authFailures.${option} must be a positive integer; got ${String(value)}.`, { field: `authFailures.${option}` });
  return value;
}

/**
 * Counts, per client address and in memory, the requests whose well-formed API key turned
 * out unknown, revoked or expired. Past `maxFailures` in a window the address is refused
 * until the window ends, for every key this process does not already know to exist: a flood
 * of made-up keys then costs no database lookup, and callers behind that address whose keys
 * are known keep working. Per process: N replicas allow N times the limit.
 */
export class AuthFailureLimiter {
  readonly maxFailures: number;
  readonly windowMs: number;
  private readonly maxAddresses: number;
  private readonly windows = new Map<string, FailureWindow>();
  /** Failed keys counted since the limiter was made (for monitoring). */
  failures = 0;

  /** Client addresses with a failure window open now (some may have expired unread). */
  get addresses(): number {
    return this.windows.size;
  }

  constructor(limits: AuthFailureLimits = {}, private readonly clock: () => number = () => performance.now()) {
    this.maxFailures = positiveInteger(limits.maxFailures, 'maxFailures', 50);
    this.windowMs = positiveInteger(limits.windowSeconds, 'windowSeconds', 60) * 1000;
    this.maxAddresses = positiveInteger(limits.maxAddresses, 'maxAddresses', 10_000);
  }

  /** Whole seconds until `address` may present an unknown key again, or undefined when it may now. */
  retryAfter(address: string): number | undefined {
    const window = this.windows.get(address);
    if (window === undefined || window.failures < this.maxFailures) return undefined;
    const left = window.startedAt + this.windowMs - this.clock();
    if (left <= 0) {
      this.windows.delete(address);
      return undefined;
    }
    return Math.max(1, Math.ceil(left / 1000));
  }

  recordFailure(address: string): void {
    this.failures++;
    const now = this.clock();
    let window = this.windows.get(address);
    if (window === undefined || now - window.startedAt >= this.windowMs) window = { startedAt: now, failures: 0 };
    window.failures++;
    // Re-inserted at the young end; the oldest address goes when the map is full.
    this.windows.delete(address);
    if (this.windows.size >= this.maxAddresses) {
      const oldest = this.windows.keys().next();
      if (oldest.done !== true) this.windows.delete(oldest.value);
    }
    this.windows.set(address, window);
  }
}
