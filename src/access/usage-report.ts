import type { Queryable } from './database.js';
import { findAccount } from './accounts.js';
import { badInput } from './validate.js';

export type UsageGrouping = 'key' | 'day' | 'survey';

/** `crosstab usage --json` and the portal's usage page. */
export interface UsageReport {
  account: string;
  /** Inclusive start and exclusive end of the range (ISO 8601), null = open. */
  from: string | null;
  to: string | null;
  by: UsageGrouping;
  /** Billed calls in the range. */
  calls: number;
  rows: Array<{ key: string; name: string; calls: number } | { day: string; calls: number } | { survey: string; calls: number }>;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** `--from 2026-11-01` = from that day's start (UTC); `--to 2026-11-30` = up to that day's end. */
export function parseRangeBound(value: string | undefined, field: '--from' | '--to'): Date | null {
  if (value === undefined) return null;
  const time = Date.parse(DATE_ONLY.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(time)) throw badInput(field, `must be a date (2026-11-01) or an ISO 8601 date-time; got ${JSON.stringify(value)}.`);
  return new Date(DATE_ONLY.test(value) && field === '--to' ? time + 24 * 3600 * 1000 : time);
}

/** Billed calls of an account, in total and per key, day or survey. */
export async function usageReport(db: Queryable, options: { account: string; from?: string; to?: string; by?: string }): Promise<UsageReport> {
  const by = (options.by ?? 'day') as UsageGrouping;
  if (!['key', 'day', 'survey'].includes(by)) throw badInput('--by', `must be key, day or survey; got ${JSON.stringify(options.by)}.`);
  const from = parseRangeBound(options.from, '--from');
  const to = parseRangeBound(options.to, '--to');
  if (from !== null && to !== null && from >= to) throw badInput('--to', `(${to.toISOString()}) must be after --from (${from.toISOString()}).`);
  const account = await findAccount(db, options.account);
  const where = 'u.account_id = $1 AND ($2::timestamptz IS NULL OR u.time >= $2) AND ($3::timestamptz IS NULL OR u.time < $3)';
  const params = [account.id, from, to];
  const total = await db.query<{ calls: number }>(`SELECT count(*)::int AS calls FROM usage u WHERE ${where}`, params);
  let rows: UsageReport['rows'];
  if (by === 'key') {
    const result = await db.query<{ key: string; name: string | null; calls: number }>(
      `SELECT u.key_id AS key, k.name, count(*)::int AS calls FROM usage u LEFT JOIN api_keys k ON k.id = u.key_id WHERE ${where} GROUP BY u.key_id, k.name ORDER BY calls DESC, u.key_id`,
      params,
    );
    rows = result.rows.map((row) => ({ key: row.key, name: row.name ?? '', calls: row.calls }));
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
    `SELECT to_char(u.time AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, u.key_id AS key, k.name, u.survey, count(*)::int AS calls
       FROM usage u LEFT JOIN api_keys k ON k.id = u.key_id
      WHERE u.account_id = $1 AND ($2::timestamptz IS NULL OR u.time >= $2) AND ($3::timestamptz IS NULL OR u.time < $3)
      GROUP BY day, u.key_id, k.name, u.survey ORDER BY day, u.key_id, u.survey`,
    [account.id, from, to],
  );
  const calls = rows.reduce((sum, row) => sum + row.calls, 0);
  return { account: account.name, from: from?.toISOString() ?? null, to: to?.toISOString() ?? null, by: 'day', calls, rows: rows.map((row) => ({ ...row, name: row.name ?? '' })) as never };
}
