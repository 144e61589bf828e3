import { randomBytes } from 'node:crypto';
import { generateApiKey, hashApiKey } from '../keys/index.js';
import type { Database, Queryable } from './database.js';
import { findAccount, iso } from './accounts.js';
import { badInput, checkName } from './validate.js';

/** An API key as listings show it: never the key, never its hash. */
export interface KeyInfo {
  id: string;
  accountId: string;
  /** The environment the key is for, e.g. production, staging. */
  name: string;
  userId: string | null;
  createdAt: string;
  expiresAt: string | null;
  /** When the key stops (or stopped) working; in the future during a rotation's grace period. */
  revokedAt: string | null;
  status: 'active' | 'expired' | 'revoked' | 'revoking';
}

interface KeyRow {
  id: string;
  account_id: string;
  name: string;
  user_id: string | null;
  created_at: Date | string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
}

const KEY_COLUMNS = 'id, account_id, name, user_id, created_at, expires_at, revoked_at';

function toKeyInfo(row: KeyRow, now = Date.now()): KeyInfo {
  const revokedAt = iso(row.revoked_at);
  const expiresAt = iso(row.expires_at);
  const status =
    revokedAt !== null && Date.parse(revokedAt) <= now ? 'revoked'
    : expiresAt !== null && Date.parse(expiresAt) <= now ? 'expired'
    : revokedAt !== null ? 'revoking'
    : 'active';
  return { id: row.id, accountId: row.account_id, name: row.name, userId: row.user_id, createdAt: iso(row.created_at) as string, expiresAt, revokedAt, status };
}

const KEY_ID = /^key_[0-9a-f]{16}$/;

/** A new key id: `key_` and 16 hex digits. */
export function newKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

/**
 * The id a caller chose for a new key (the portal's form carries one, so that sending the
 * form twice cannot create two keys), or a new one. A chosen id already in use is refused
 * with field `id`: the request that used it first created the key.
 */
function keyIdOf(chosen: string | undefined): string {
  if (chosen === undefined) return newKeyId();
  if (!KEY_ID.test(chosen)) throw badInput('id', `must be "key_" and 16 hex digits; got ${JSON.stringify(chosen.slice(0, 40))}.`);
  return chosen;
}

async function insertKey(tx: Queryable, id: string, accountId: string, name: string, expiresAt: Date | null, userId: string | null): Promise<{ apiKey: string; key: KeyInfo }> {
  const apiKey = generateApiKey();
  const { rows } = await tx.query<KeyRow>(
    `INSERT INTO api_keys (id, account_id, user_id, name, hash, expires_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING RETURNING ${KEY_COLUMNS}`,
    [id, accountId, userId, name, hashApiKey(apiKey), expiresAt],
  );
  if (rows[0] === undefined) throw badInput('id', `${id} is already the id of a key: the request that chose it created that key.`, 'Send each new-key request with a new id.');
  return { apiKey, key: toKeyInfo(rows[0]) };
}

/** Creates a key of an account for one environment; the key is returned once, only its hash is kept. */
export async function addKey(db: Database, options: { account: string; name: string | undefined; expiresAt?: Date | null; userId?: string; id?: string }): Promise<{ apiKey: string; key: KeyInfo }> {
  const name = checkName(options.name, 'name', 'a key name (the environment, e.g. production or staging)');
  const id = keyIdOf(options.id);
  return db.transaction(async (tx) => {
    const account = await findAccount(tx, options.account);
    return insertKey(tx, id, account.id, name, options.expiresAt ?? null, options.userId ?? null);
  });
}

export async function listKeys(db: Queryable, accountId: string): Promise<KeyInfo[]> {
  const { rows } = await db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at DESC, id`, [accountId]);
  const now = Date.now();
  return rows.map((row) => toKeyInfo(row, now));
}

async function keyOfAccount(tx: Queryable, accountId: string, keyId: string, field: string): Promise<KeyInfo> {
  const { rows } = await tx.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1 AND account_id = $2 FOR UPDATE`, [keyId, accountId]);
  if (rows[0] === undefined) throw badInput(field, `names no key ${JSON.stringify(keyId)} of this account.`, 'List the keys with `crosstab keys list --account <name>`.');
  return toKeyInfo(rows[0]);
}

/** Revokes a key now (or at `at`); revoking an already revoked key changes nothing. */
export async function revokeKey(db: Database, accountId: string, keyId: string, options: { at?: Date; field?: string } = {}): Promise<KeyInfo> {
  return db.transaction(async (tx) => {
    const key = await keyOfAccount(tx, accountId, keyId, options.field ?? 'key');
    if (key.status === 'revoked') return key;
    // Now = the database's clock, which the replicas' lookups compare with: no clock skew between machines.
    const { rows } = await tx.query<KeyRow>(`UPDATE api_keys SET revoked_at = COALESCE($2::timestamptz, now()) WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [keyId, options.at ?? null]);
    return toKeyInfo(rows[0] as KeyRow);
  });
}

/** Largest grace period of a rotation: the old key works at most this long after it. */
export const MAX_GRACE_SECONDS = 7 * 24 * 3600;

/**
 * Issues a new key for the same environment and revokes the old one, now or after
 * `graceSeconds` (so deployments can switch over), in one transaction.
 */
export async function rotateKey(db: Database, accountId: string, keyId: string, options: { graceSeconds?: number; userId?: string; field?: string; id?: string } = {}): Promise<{ apiKey: string; key: KeyInfo; old: KeyInfo }> {
  const grace = options.graceSeconds ?? 0;
  const id = keyIdOf(options.id);
  if (!Number.isInteger(grace) || grace < 0 || grace > MAX_GRACE_SECONDS) throw badInput('grace', `must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS} (7 days); got ${String(options.graceSeconds)}.`);
  return db.transaction(async (tx) => {
    const old = await keyOfAccount(tx, accountId, keyId, options.field ?? 'key');
    if (old.status === 'revoked' || old.status === 'expired') throw badInput(options.field ?? 'key', `${keyId} is ${old.status}: create a new key instead of rotating it.`);
    const fresh = await insertKey(tx, id, accountId, old.name, old.expiresAt === null ? null : new Date(old.expiresAt), options.userId ?? old.userId);
    const { rows } = await tx.query<KeyRow>(`UPDATE api_keys SET revoked_at = now() + make_interval(secs => $2) WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [keyId, grace]);
    return { ...fresh, old: toKeyInfo(rows[0] as KeyRow) };
  });
}

/** The account id of a key, for commands given only a key id. */
export async function accountOfKey(db: Queryable, keyId: string, field = 'key'): Promise<string> {
  const { rows } = await db.query<{ account_id: string }>('SELECT account_id FROM api_keys WHERE id = $1', [keyId]);
  if (rows[0] === undefined) throw badInput(field, `names no key ${JSON.stringify(keyId)} in the database.`, 'List the keys with `crosstab keys list --account <name>`.');
  return rows[0].account_id;
}
