import { randomBytes } from 'node:crypto';
import type { Queryable } from './database.js';
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

interface SavedTableRow {
  id: string;
  account_id: string;
  user_id: string;
  email: string;
  name: string;
  spec: string;
  result: string | null;
  shared: boolean;
  computed_at: Date | string | null;
  updated_at: Date | string;
}

const COLUMNS = 't.id, t.account_id, t.user_id, u.email, t.name, t.spec, t.result, t.shared, t.computed_at, t.updated_at';
const toSaved = (row: SavedTableRow): SavedTable => ({
  id: row.id,
  accountId: row.account_id,
  userId: row.user_id,
  owner: row.email,
  name: row.name,
  spec: row.spec,
  result: row.result,
  shared: row.shared,
  computedAt: iso(row.computed_at),
  updatedAt: iso(row.updated_at) as string,
});

/** Longest saved-table name. */
export const MAX_SAVED_TABLE_NAME = 120;
const ID = /^tbl_[0-9a-f]{16}$/;

function checkTableName(name: string | undefined): string {
  const trimmed = (name ?? '').trim();
  if (trimmed.length === 0 || trimmed.length > MAX_SAVED_TABLE_NAME) throw badInput('tableName', `must be 1 to ${MAX_SAVED_TABLE_NAME} characters; got ${trimmed.length}.`);
  return trimmed;
}

/** Saves a table for `userId` of `accountId` (its spec and its computed result). */
export async function saveTable(db: Queryable, owner: { accountId: string; userId: string }, table: { name: string; spec: string; result: string | null; shared: boolean }): Promise<SavedTable> {
  const id = `tbl_${randomBytes(8).toString('hex')}`;
  await db.query(
    `INSERT INTO saved_tables (id, account_id, user_id, name, spec, result, shared, computed_at) VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $6::text IS NULL THEN NULL ELSE now() END)`,
    [id, owner.accountId, owner.userId, checkTableName(table.name), table.spec, table.result, table.shared],
  );
  return (await savedTable(db, owner, id)) as SavedTable;
}

/**
 * The saved tables `userId` may open: their own and those shared within their account
 * (never another account's), the latest first.
 */
export async function listSavedTables(db: Queryable, viewer: { accountId: string; userId: string }): Promise<SavedTable[]> {
  const { rows } = await db.query<SavedTableRow>(
    `SELECT ${COLUMNS} FROM saved_tables t JOIN users u ON u.id = t.user_id WHERE t.account_id = $1 AND (t.user_id = $2 OR t.shared) ORDER BY t.updated_at DESC, t.id`,
    [viewer.accountId, viewer.userId],
  );
  return rows.map(toSaved);
}

/** One saved table if `viewer` may open it (theirs, or shared in their account); undefined otherwise. */
export async function savedTable(db: Queryable, viewer: { accountId: string; userId: string }, id: string): Promise<SavedTable | undefined> {
  if (!ID.test(id)) return undefined;
  const { rows } = await db.query<SavedTableRow>(
    `SELECT ${COLUMNS} FROM saved_tables t JOIN users u ON u.id = t.user_id WHERE t.id = $1 AND t.account_id = $2 AND (t.user_id = $3 OR t.shared)`,
    [id, viewer.accountId, viewer.userId],
  );
  return rows[0] === undefined ? undefined : toSaved(rows[0]);
}

/** Stores a newly computed result of a saved table `viewer` may open. */
export async function storeSavedResult(db: Queryable, viewer: { accountId: string; userId: string }, id: string, result: string): Promise<void> {
  await db.query(`UPDATE saved_tables SET result = $4, computed_at = now(), updated_at = now() WHERE id = $1 AND account_id = $2 AND (user_id = $3 OR shared)`, [id, viewer.accountId, viewer.userId, result]);
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
