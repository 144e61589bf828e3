import type { AdmissionRefusal } from '../keys/index.js';
import type { Database, Queryable } from './database.js';
import { BILLED_ROW } from './usage-report.js';

/** Limits of one account as the key lookup last read them. */
export interface Limits {
  ratePerMinute: number | null;
  monthlyQuota: number | null;
}

/** Counts this minute's calls of an account and returns the count and the seconds left in the minute. */
const COUNT_CALL_SQL = `
  INSERT INTO rate_windows AS w (account_id, window_start, calls) VALUES ($1, date_trunc('minute', now()), 1)
  ON CONFLICT (account_id, window_start) DO UPDATE SET calls = w.calls + 1
  RETURNING w.calls, extract(epoch FROM date_trunc('minute', now()) + interval '1 minute' - now())::float8 AS seconds_left`;

const MONTH_CALLS_SQL = `
  SELECT count(*)::int AS calls,
         extract(epoch FROM date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month' - (now() AT TIME ZONE 'UTC'))::float8 AS seconds_left
    FROM usage u WHERE u.account_id = $1 AND u.time >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AND ${BILLED_ROW}`;

/** This minute's calls per account of an embedded database, shared by every limiter on it. */
type MemoryWindows = Map<string, { minute: number; calls: number }>;
const embeddedWindows = new WeakMap<object, MemoryWindows>();

/**
 * How long an admitted call is counted on its own, beside the usage rows read back: a call
 * admitted this recently may not have its row yet (it is still being answered), or may
 * have it and be counted twice (a refusal a little early, never a call over the quota).
 */
const RECENT_CALL_MS = 5000;

/** One account's calls this month as this process knows them. */
interface MonthCount {
  /** Billed calls of the month in the usage rows when they were last read, and when that was. */
  billed: number;
  readAt: number;
  secondsLeft: number;
  /** Times of the calls admitted here since RECENT_CALL_MS before that read. */
  admitted: number[];
  /** The read under way, shared by every call that arrives meanwhile. */
  reading?: Promise<void>;
}

/**
 * Per-account request rate (fixed one-minute windows) and monthly quota of billed calls.
 * Accounts without limits cost nothing: no query is made for them.
 *
 * On a PostgreSQL server the windows are rows of `rate_windows`, so every replica shares
 * them. An embedded database belongs to one process (its lock file), so its windows are
 * counted in that process's memory, exactly, without a statement per call (a PGlite
 * statement costs its thread 0.1-0.3 ms); they start again at zero when it restarts.
 *
 * The quota: the month's usage rows are read at most once per `quotaTtlMs` per account (one
 * read at a time, shared by the calls that wait for it), and every call admitted since
 * RECENT_CALL_MS before that read is added to it, so calls admitted together, or still being
 * answered when the rows are read, are all counted. The remaining bound: a process admits
 * more than the quota only by calls that took over RECENT_CALL_MS to answer and had no row
 * when the count was read; replicas together, also by the calls the others admitted within
 * `quotaTtlMs` (1 s). A call admitted and then refused later (a bad request, a failure) is
 * not billed, and stops counting after RECENT_CALL_MS.
 */
export class AccountLimiter {
  private readonly months = new Map<string, MonthCount>();
  private sweptAt = 0;
  private readonly windows: MemoryWindows | undefined;

  constructor(private readonly db: Queryable & Partial<Pick<Database, 'kind'>>, private readonly quotaTtlMs = 1000) {
    if (db.kind === 'embedded') {
      let windows = embeddedWindows.get(db);
      if (windows === undefined) embeddedWindows.set(db, (windows = new Map()));
      this.windows = windows;
    }
  }

  /** Counts a call in this minute's window: the calls so far and the seconds left in the minute. */
  private async countCall(accountId: string): Promise<{ calls: number; seconds_left: number }> {
    if (this.windows !== undefined) {
      const now = Date.now();
      const minute = Math.floor(now / 60_000);
      let window = this.windows.get(accountId);
      if (window === undefined || window.minute !== minute) this.windows.set(accountId, (window = { minute, calls: 0 }));
      window.calls++;
      return { calls: window.calls, seconds_left: ((minute + 1) * 60_000 - now) / 1000 };
    }
    const { rows } = await this.db.query<{ calls: number; seconds_left: number }>(COUNT_CALL_SQL, [accountId]);
    this.sweep();
    return rows[0] as { calls: number; seconds_left: number };
  }

  async admit(accountId: string, limits: Limits): Promise<AdmissionRefusal | undefined> {
    if (limits.ratePerMinute !== null) {
      const row = await this.countCall(accountId);
      if (row.calls > limits.ratePerMinute) {
        return { code: 'rate_limited', message: `The account's rate limit of ${limits.ratePerMinute} calls per minute is used up.`, retryAfterSeconds: Math.max(1, Math.ceil(row.seconds_left)) };
      }
    }
    if (limits.monthlyQuota !== null) {
      const month = await this.monthCount(accountId);
      // From here to the return nothing awaits: the check and the count are one step.
      if (month.billed + month.admitted.length >= limits.monthlyQuota) {
        return { code: 'quota_exceeded', message: `The account's monthly quota of ${limits.monthlyQuota} billed calls is used up.`, retryAfterSeconds: Math.max(1, Math.ceil(month.secondsLeft)) };
      }
      month.admitted.push(Date.now());
    }
    return undefined;
  }

  /** The account's month count, read again when older than quotaTtlMs (one read at a time). */
  private async monthCount(accountId: string): Promise<MonthCount> {
    let month = this.months.get(accountId);
    if (month === undefined) this.months.set(accountId, (month = { billed: 0, readAt: Number.NEGATIVE_INFINITY, secondsLeft: 0, admitted: [] }));
    const current = month;
    if (Date.now() - current.readAt >= this.quotaTtlMs) {
      current.reading ??= (async () => {
        const started = Date.now();
        try {
          const { rows } = await this.db.query<{ calls: number; seconds_left: number }>(MONTH_CALLS_SQL, [accountId]);
          current.billed = rows[0]?.calls ?? 0;
          current.secondsLeft = rows[0]?.seconds_left ?? 0;
          current.readAt = started;
          current.admitted = current.admitted.filter((time) => time >= started - RECENT_CALL_MS);
        } finally {
          current.reading = undefined;
        }
      })();
      await current.reading;
    }
    return current;
  }

  /** Drops windows older than an hour, at most once a minute per process. */
  private sweep(): void {
    const now = Date.now();
    if (now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    void this.db.query("DELETE FROM rate_windows WHERE window_start < now() - interval '1 hour'").catch(() => {});
  }
}
