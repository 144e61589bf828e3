import type { Queryable } from './database.js';
import { findAccount } from './accounts.js';
import { badInput } from './validate.js';
import { mention, problemText } from '../errors.js';

export type UsageGrouping = 'key' | 'day' | 'survey' | 'operation';

/** The key id of the calls of a portal user (the Tables page): `portal:` and the user's id. */
export const portalCallerId = (userId: string): string => `portal:${userId}`;
/** A key's name; a portal user's calls are named after the page and the user. */
const KEY_NAME = `COALESCE(k.name, 'Tables page, ' || pu.email)`;
/**
 * The billed calls among an account's usage rows `u`: billing rows (not voids) that no void row
 * names. Voids are rare and found through their own index (usage_voids).
 */
export const BILLED_ROW = `u.void_reason IS NULL AND NOT EXISTS (SELECT 1 FROM usage v WHERE v.account_id = u.account_id AND v.request_id = u.request_id AND v.void_reason IS NOT NULL)`;
const KEY_JOINS = `LEFT JOIN api_keys k ON k.id = u.key_id LEFT JOIN users pu ON u.key_id = 'portal:' || pu.id`;

/** `crosstab usage --json` and the portal's usage page. */
export interface UsageReport {
  account: string;
  /** Inclusive start and exclusive end of the range (ISO 8601), null = open. */
  from: string | null;
  to: string | null;
  by: UsageGrouping;
  /** Billed calls in the range. */
  calls: number;
  rows: Array<{ key: string; name: string; calls: number } | { day: string; calls: number } | { survey: string; calls: number } | { operation: string; calls: number }>;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,3})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

/** A real calendar day `YYYY-MM-DD` as its UTC start, or NaN (2026-02-30 is not a day). */
function dayStart(value: string): number {
  const match = DATE.exec(value);
  if (match === null) return Number.NaN;
  const time = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return new Date(time).toISOString().slice(0, 10) === value ? time : Number.NaN;
}

/**
 * `from` 2026-11-01 = from that day's start (UTC); `to` 2026-11-30 = up to that day's end.
 * Only ISO 8601: a date `YYYY-MM-DD`, or a date-time `YYYY-MM-DDTHH:MM[:SS[.sss]]` with `Z` or
 * an offset; nothing else (no "Nov 1 2026", no comments in parentheses). `field` names the
 * bound in the error.
 */
export function parseRangeBound(value: string | undefined, field: 'from' | 'to', end = field === 'to'): Date | null {
  if (value === undefined) return null;
  const dateOnly = DATE.test(value);
  const time = dateOnly ? dayStart(value) : DATE_TIME.test(value) && !Number.isNaN(dayStart(value.slice(0, 10))) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(time)) throw badInput(field, `must be a date (2026-11-01) or an ISO 8601 date-time (2026-11-01T08:00:00Z); got ${JSON.stringify(value.slice(0, 100))}.`);
  return new Date(dateOnly && end ? time + 24 * 3600 * 1000 : time);
}

/**
 * The start (inclusive) and end (exclusive) of a usage range; refuses an end not after the
 * start (field `to`, its problem mentioning `from`).
 */
export function parseUsageRange(from: string | undefined, to: string | undefined): { from: Date | null; to: Date | null } {
  const start = parseRangeBound(from, 'from', false);
  const end = parseRangeBound(to, 'to', true);
  if (start !== null && end !== null && start >= end) {
    throw badInput('to', problemText`(${end.toISOString()}) must be after ${mention('from')} (${start.toISOString()}).`);
  }
  return { from: start, to: end };
}

/**
 * Billed calls of an account, in total and per key, day, survey or operation: each by the time
 * it was billed, a call voided (not delivered) not counted.
 */
export async function usageReport(db: Queryable, options: { account: string; from?: string; to?: string; by?: string }): Promise<UsageReport> {
  return (await usageReports(db, { ...options, by: [options.by ?? 'day'] }))[0] as UsageReport;
}

/** usageReport() by each of several groupings, in order, over one read of the account (the portal's Usage page). */
export async function usageReports(db: Queryable, options: { account: string; from?: string; to?: string; by: readonly string[] }): Promise<UsageReport[]> {
  for (const by of options.by) {
    if (!['key', 'day', 'survey', 'operation'].includes(by)) throw badInput('by', `must be key, day, survey or operation; got ${JSON.stringify(by)}.`);
  }
  const { from, to } = parseUsageRange(options.from, options.to);
  const account = await findAccount(db, options.account);
  const reports: UsageReport[] = [];
  for (const by of options.by as readonly UsageGrouping[]) reports.push(await groupedReport(db, account, from, to, by));
  return reports;
}

async function groupedReport(db: Queryable, account: { id: string; name: string }, from: Date | null, to: Date | null, by: UsageGrouping): Promise<UsageReport> {
  const where = `u.account_id = $1 AND ($2::timestamptz IS NULL OR u.time >= $2) AND ($3::timestamptz IS NULL OR u.time < $3) AND ${BILLED_ROW}`;
  const params = [account.id, from, to];
  const total = await db.query<{ calls: number }>(`SELECT count(*)::int AS calls FROM usage u WHERE ${where}`, params);
  let rows: UsageReport['rows'];
  if (by === 'key') {
    const result = await db.query<{ key: string; name: string | null; calls: number }>(
      `SELECT u.key_id AS key, ${KEY_NAME} AS name, count(*)::int AS calls FROM usage u ${KEY_JOINS} WHERE ${where} GROUP BY u.key_id, k.name, pu.email ORDER BY calls DESC, u.key_id`,
      params,
    );
    rows = result.rows.map((row) => ({ key: row.key, name: row.name ?? '', calls: row.calls }));
  } else if (by === 'operation') {
    rows = (await db.query<{ operation: string; calls: number }>(`SELECT u.operation, count(*)::int AS calls FROM usage u WHERE ${where} GROUP BY u.operation ORDER BY u.operation`, params)).rows;
  } else if (by === 'survey') {
    rows = (await db.query<{ survey: string; calls: number }>(`SELECT u.survey, count(*)::int AS calls FROM usage u WHERE ${where} GROUP BY u.survey ORDER BY u.survey`, params)).rows;
  } else {
    rows = (
      await db.query<{ day: string; calls: number }>(
        `SELECT to_char(u.time AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::int AS calls FROM usage u WHERE ${where} GROUP BY day ORDER BY day`,
        params,
      )
    ).rows;
  }
  return { account: account.name, from: from?.toISOString() ?? null, to: to?.toISOString() ?? null, by, calls: total.rows[0]?.calls ?? 0, rows };
}

/** Billed calls per day, key and survey: the rows of the portal's CSV download. */
export async function usageDetail(db: Queryable, accountName: string, from: Date | null, to: Date | null): Promise<UsageReport> {
  const account = await findAccount(db, accountName);
  const { rows } = await db.query<{ day: string; key: string; name: string | null; survey: string; calls: number }>(
    `SELECT to_char(u.time AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, u.key_id AS key, ${KEY_NAME} AS name, u.survey, count(*)::int AS calls
       FROM usage u ${KEY_JOINS}
      WHERE u.account_id = $1 AND ($2::timestamptz IS NULL OR u.time >= $2) AND ($3::timestamptz IS NULL OR u.time < $3) AND ${BILLED_ROW}
      GROUP BY day, u.key_id, k.name, pu.email, u.survey ORDER BY day, u.key_id, u.survey`,
    [account.id, from, to],
  );
  const calls = rows.reduce((sum, row) => sum + row.calls, 0);
  return { account: account.name, from: from?.toISOString() ?? null, to: to?.toISOString() ?? null, by: 'day', calls, rows: rows.map((row) => ({ ...row, name: row.name ?? '' })) as never };
}
