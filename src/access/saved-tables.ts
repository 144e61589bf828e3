import { randomBytes } from 'node:crypto';
import type { Database, Queryable } from './database.js';
import { CrosstabError, ErrorCode } from '../errors.js';
import { iso } from './accounts.js';
import { badInput } from './validate.js';

/** A table saved from the portal's Tables page by one user of an account. */
export interface SavedTable {
  id: string;
  accountId: string;
  userId: string;
  /** The e-mail of the user who saved it. */
  owner: string;
  name: string;
  /** The spec: a POST /tables body as JSON text. */
  spec: string;
  /** The JSON Table last computed for the spec (null: never computed). */
  result: string | null;
  /** Whether the other users of the account see it. */
  shared: boolean;
  computedAt: string | null;
  updatedAt: string;
}

/** A saved table as its list shows it: everything but the stored result (which is read only when the table is opened). */
export type SavedTableEntry = Omit<SavedTable, 'result'> & {
  /** Bytes of the stored result (0: never computed). */
  resultBytes: number;
};

/**
 * Bounds of the saved tables, so that no user or account can fill the database or the
 * server's memory with them. A save or refresh past one is refused (`invalid_option`, its
 * `details.field` the limit's name, `savedTables.perUser`...) naming it; nothing is stored then.
 */
export interface SavedTableLimits {
  /** Most saved tables one user keeps (default 50). */
  perUser: number;
  /** Most saved tables of one account, all users together (default 500). */
  perAccount: number;
  /** Largest stored result of one table, in bytes of its JSON (default 4 MiB). */
  resultBytes: number;
  /** Largest total of an account's stored results, in bytes (default 256 MiB). */
  accountBytes: number;
}

export const DEFAULT_SAVED_TABLE_LIMITS: Readonly<SavedTableLimits> = { perUser: 50, perAccount: 500, resultBytes: 4 * 1024 * 1024, accountBytes: 256 * 1024 * 1024 };

interface SavedTableRow {
  id: string;
  account_id: string;
  user_id: string;
  email: string;
  name: string;
  spec: string;
  result?: string | null;
  result_bytes?: number | string;
  shared: boolean;
  computed_at: Date | string | null;
  updated_at: Date | string;
}

/** The list's columns: never the result itself, only its size. */
const LIST_COLUMNS = 't.id, t.account_id, t.user_id, u.email, t.name, t.spec, coalesce(octet_length(t.result), 0) AS result_bytes, t.shared, t.computed_at, t.updated_at';
const toEntry = (row: SavedTableRow): SavedTableEntry => ({
  id: row.id,
  accountId: row.account_id,
  userId: row.user_id,
  owner: row.email,
  name: row.name,
  spec: row.spec,
  resultBytes: Number(row.result_bytes ?? 0),
  shared: row.shared,
  computedAt: iso(row.computed_at),
  updatedAt: iso(row.updated_at) as string,
});
const toSaved = (row: SavedTableRow): SavedTable => {
  const { resultBytes: _bytes, ...entry } = toEntry(row);
  return { ...entry, result: row.result ?? null };
};

/** Longest saved-table name. */
export const MAX_SAVED_TABLE_NAME = 120;
const ID = /^tbl_[0-9a-f]{16}$/;

function checkTableName(name: string | undefined): string {
  const trimmed = (name ?? '').trim();
  if (trimmed.length === 0 || trimmed.length > MAX_SAVED_TABLE_NAME) throw badInput('tableName', `must be 1 to ${MAX_SAVED_TABLE_NAME} characters; got ${trimmed.length}.`);
  return trimmed;
}

const megabytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(bytes < 1024 * 1024 ? 2 : 1)} MB`;
const limitError = (message: string, hint: string, limit: keyof SavedTableLimits): CrosstabError => new CrosstabError(ErrorCode.invalidOption, message, { field: `savedTables.${limit}`, hint });

/** Refuses a result larger than one table may store. */
export function checkSavedResultSize(result: string | null, limits: SavedTableLimits = DEFAULT_SAVED_TABLE_LIMITS): void {
  const bytes = result === null ? 0 : Buffer.byteLength(result);
  if (bytes > limits.resultBytes) {
    throw limitError(`This table's result is ${megabytes(bytes)}, more than a saved table may store (${megabytes(limits.resultBytes)}, the limit savedTables.resultBytes).`, 'Save a smaller table (fewer rows, columns or statistics), or download it instead.', 'resultBytes');
  }
}

/**
 * Whether `owner` may save one more table: throws naming the limit when the
 * user or the account has as many as it may keep. A check before the table is computed (so
 * that nothing is billed for a save that would be refused); saveTable checks again.
 */
export async function checkSavedTableRoom(db: Queryable, owner: { accountId: string; userId: string }, limits: SavedTableLimits = DEFAULT_SAVED_TABLE_LIMITS, adding = 0): Promise<void> {
  const { rows } = await db.query<{ mine: number; all: number; bytes: number | string }>(
    'SELECT count(*) FILTER (WHERE user_id = $2)::int AS mine, count(*)::int AS all, coalesce(sum(octet_length(result)), 0)::bigint AS bytes FROM saved_tables WHERE account_id = $1',
    [owner.accountId, owner.userId],
  );
  const { mine = 0, all = 0 } = rows[0] ?? {};
  const bytes = Number(rows[0]?.bytes ?? 0);
  if (mine >= limits.perUser) throw limitError(`You have ${mine} saved tables, the most one user may keep (${limits.perUser}, the limit savedTables.perUser).`, 'Delete a saved table you no longer need, then save again.', 'perUser');
  if (all >= limits.perAccount) throw limitError(`Your account has ${all} saved tables, the most it may keep (${limits.perAccount}, the limit savedTables.perAccount).`, 'Delete saved tables the account no longer needs, then save again.', 'perAccount');
  if (bytes + adding > limits.accountBytes) {
    throw limitError(`Your account's saved results take ${megabytes(bytes)}; this one (${megabytes(adding)}) would pass the most it may store (${megabytes(limits.accountBytes)}, the limit savedTables.accountBytes).`, 'Delete saved tables with large results, then save again.', 'accountBytes');
  }
}

/** The account's row locked for the transaction: saves of one account take turns, so two cannot both take the last room. */
const lockAccount = (tx: Queryable, accountId: string) => tx.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);

/** A name `owner` already gave another of their tables (`except`: the table being renamed or updated). */
async function nameTaken(db: Queryable, owner: { accountId: string; userId: string }, name: string, except?: string): Promise<{ id: string } | undefined> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM saved_tables WHERE account_id = $1 AND user_id = $2 AND lower(name) = lower($3) AND id <> $4 LIMIT 1', [owner.accountId, owner.userId, name, except ?? '']);
  return rows[0];
}

const nameInUse = (name: string): CrosstabError =>
  new CrosstabError(ErrorCode.invalidOption, `You already have a saved table named ${JSON.stringify(name)}.`, { field: 'tableName', problem: 'is the name of another of your saved tables', hint: 'Open that table and save it to update it, or choose another name.' });

/**
 * The id of `owner`'s own table named `name` (case aside), if they have one: a save under a
 * name they already use updates that table rather than making a second of the same name.
 */
export async function ownTableNamed(db: Queryable, owner: { accountId: string; userId: string }, name: string): Promise<string | undefined> {
  return (await nameTaken(db, owner, name.trim()))?.id;
}

/**
 * Saves a table for `userId` of `accountId` (its spec and its computed result), within
 * `limits`. A name the user already gave one of their tables is refused (`invalid_option`,
 * field `tableName`): a save never makes a silent duplicate; updateSavedTable() rewrites one.
 */
export async function saveTable(db: Database, owner: { accountId: string; userId: string }, table: { name: string; spec: string; result: string | null; shared: boolean }, limits: SavedTableLimits = DEFAULT_SAVED_TABLE_LIMITS): Promise<SavedTable> {
  const name = checkTableName(table.name);
  checkSavedResultSize(table.result, limits);
  const id = `tbl_${randomBytes(8).toString('hex')}`;
  await db.transaction(async (tx) => {
    await lockAccount(tx, owner.accountId);
    if (await nameTaken(tx, owner, name)) throw nameInUse(name);
    await checkSavedTableRoom(tx, owner, limits, table.result === null ? 0 : Buffer.byteLength(table.result));
    await tx.query(
      `INSERT INTO saved_tables (id, account_id, user_id, name, spec, result, shared, computed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $6::text IS NULL THEN NULL ELSE now() END)`,
      [id, owner.accountId, owner.userId, name, table.spec, table.result, table.shared],
    );
  });
  return (await savedTable(db, owner, id)) as SavedTable;
}

/**
 * The saved tables `userId` may open: their own and those shared within their account
 * (never another account's), the latest first. Without their results: the list reads only
 * their sizes, whatever they hold.
 */
export async function listSavedTables(db: Queryable, viewer: { accountId: string; userId: string }): Promise<SavedTableEntry[]> {
  const { rows } = await db.query<SavedTableRow>(
    `SELECT ${LIST_COLUMNS} FROM saved_tables t JOIN users u ON u.id = t.user_id WHERE t.account_id = $1 AND (t.user_id = $2 OR t.shared) ORDER BY t.updated_at DESC, t.id`,
    [viewer.accountId, viewer.userId],
  );
  return rows.map(toEntry);
}

/**
 * One saved table with its stored result, if `viewer` may open it (theirs, or shared in their
 * account); undefined otherwise. A result larger than `maxResultBytes` (one stored before the
 * bound) is not read: `result` is null then, and `resultBytes` says its size.
 */
export async function savedTable(db: Queryable, viewer: { accountId: string; userId: string }, id: string, maxResultBytes = Number.MAX_SAFE_INTEGER): Promise<(SavedTable & { resultBytes: number }) | undefined> {
  if (!ID.test(id)) return undefined;
  const { rows } = await db.query<SavedTableRow>(
    `SELECT ${LIST_COLUMNS}, CASE WHEN octet_length(t.result) <= $4::bigint THEN t.result END AS result FROM saved_tables t JOIN users u ON u.id = t.user_id WHERE t.id = $1 AND t.account_id = $2 AND (t.user_id = $3 OR t.shared)`,
    [id, viewer.accountId, viewer.userId, maxResultBytes],
  );
  return rows[0] === undefined ? undefined : { ...toSaved(rows[0]), resultBytes: Number(rows[0].result_bytes ?? 0) };
}

/**
 * Stores a newly computed result of a table of `owner`'s own (another user of the account
 * may open a shared table, and compute it, but not rewrite it): false when they have no such
 * table. Within `limits`, as a save.
 */
export async function storeSavedResult(db: Database, owner: { accountId: string; userId: string }, id: string, result: string, limits: SavedTableLimits = DEFAULT_SAVED_TABLE_LIMITS): Promise<boolean> {
  checkSavedResultSize(result, limits);
  return db.transaction(async (tx) => {
    await lockAccount(tx, owner.accountId);
    const { rows } = await tx.query<{ bytes: number | string }>('SELECT coalesce(octet_length(result), 0)::bigint AS bytes FROM saved_tables WHERE id = $1 AND account_id = $2 AND user_id = $3', [id, owner.accountId, owner.userId]);
    if (rows[0] === undefined) return false;
    const { rows: totals } = await tx.query<{ bytes: number | string }>('SELECT coalesce(sum(octet_length(result)), 0)::bigint AS bytes FROM saved_tables WHERE account_id = $1', [owner.accountId]);
    const after = Number(totals[0]?.bytes ?? 0) - Number(rows[0].bytes) + Buffer.byteLength(result);
    if (after > limits.accountBytes) {
      throw limitError(`Your account's saved results would take ${megabytes(after)}, more than it may store (${megabytes(limits.accountBytes)}, the limit savedTables.accountBytes).`, 'Delete saved tables with large results, then compute again.', 'accountBytes');
    }
    await tx.query(`UPDATE saved_tables SET result = $4, computed_at = now(), updated_at = now() WHERE id = $1 AND account_id = $2 AND user_id = $3`, [id, owner.accountId, owner.userId, result]);
    return true;
  });
}

/**
 * Rewrites a table of `owner`'s own (its spec, its result, whether it is shared; its name when
 * given): opening a saved table and saving it under its name. False when they have no such
 * table (another user's shared table is never rewritten). Within `limits`: the account's
 * stored bytes after the change, as a save; its count does not change.
 */
export async function updateSavedTable(db: Database, owner: { accountId: string; userId: string }, id: string, table: { name?: string; spec: string; result: string | null; shared: boolean }, limits: SavedTableLimits = DEFAULT_SAVED_TABLE_LIMITS): Promise<boolean> {
  const name = table.name === undefined ? undefined : checkTableName(table.name);
  checkSavedResultSize(table.result, limits);
  if (!ID.test(id)) return false;
  return db.transaction(async (tx) => {
    await lockAccount(tx, owner.accountId);
    const { rows } = await tx.query<{ bytes: number | string }>('SELECT coalesce(octet_length(result), 0)::bigint AS bytes FROM saved_tables WHERE id = $1 AND account_id = $2 AND user_id = $3', [id, owner.accountId, owner.userId]);
    if (rows[0] === undefined) return false;
    if (name !== undefined && (await nameTaken(tx, owner, name, id))) throw nameInUse(name);
    const { rows: totals } = await tx.query<{ bytes: number | string }>('SELECT coalesce(sum(octet_length(result)), 0)::bigint AS bytes FROM saved_tables WHERE account_id = $1', [owner.accountId]);
    const after = Number(totals[0]?.bytes ?? 0) - Number(rows[0].bytes) + (table.result === null ? 0 : Buffer.byteLength(table.result));
    if (after > limits.accountBytes) {
      throw limitError(`Your account's saved results would take ${megabytes(after)}, more than it may store (${megabytes(limits.accountBytes)}, the limit savedTables.accountBytes).`, 'Delete saved tables with large results, then save again.', 'accountBytes');
    }
    await tx.query(
      `UPDATE saved_tables SET name = coalesce($4, name), spec = $5, result = $6, shared = $7, computed_at = CASE WHEN $6::text IS NULL THEN NULL ELSE now() END, updated_at = now() WHERE id = $1 AND account_id = $2 AND user_id = $3`,
      [id, owner.accountId, owner.userId, name ?? null, table.spec, table.result, table.shared],
    );
    return true;
  });
}

/** Renames a table of `owner`'s own; false when they have no such table. Refuses a name another of their tables has. */
export async function renameSavedTable(db: Database, owner: { accountId: string; userId: string }, id: string, newName: string): Promise<boolean> {
  const name = checkTableName(newName);
  if (!ID.test(id)) return false;
  return db.transaction(async (tx) => {
    await lockAccount(tx, owner.accountId);
    if (await nameTaken(tx, owner, name, id)) throw nameInUse(name);
    const { rows } = await tx.query<{ id: string }>('UPDATE saved_tables SET name = $4, updated_at = now() WHERE id = $1 AND account_id = $2 AND user_id = $3 RETURNING id', [id, owner.accountId, owner.userId, name]);
    return rows.length > 0;
  });
}

/** Shares or unshares, or deletes, a table of `owner`'s own; false when they have no such table. */
export async function setSavedTableShared(db: Queryable, owner: { accountId: string; userId: string }, id: string, shared: boolean): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>(`UPDATE saved_tables SET shared = $4, updated_at = now() WHERE id = $1 AND account_id = $2 AND user_id = $3 RETURNING id`, [id, owner.accountId, owner.userId, shared]);
  return rows.length > 0;
}

export async function deleteSavedTable(db: Queryable, owner: { accountId: string; userId: string }, id: string): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>(`DELETE FROM saved_tables WHERE id = $1 AND account_id = $2 AND user_id = $3 RETURNING id`, [id, owner.accountId, owner.userId]);
  return rows.length > 0;
}
