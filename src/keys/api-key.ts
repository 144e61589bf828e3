import * as cryptoModule from 'node:crypto';
import { createHash, randomBytes } from 'node:crypto';

/**
 * An API key as the stores hold it: only a sha256 of the key, never the key itself. The key
 * file (src/http) and the access database (src/access) both store these records.
 */
export interface ApiKeyRecord {
  /** Public identifier: shown in listings, logs and the usage ledger. */
  id: string;
  name?: string;
  /** `sha256:` + hex digest of the full key string. */
  hash: string;
  /** SurveyCodes the key may query; `_ALL_` = every survey. */
  surveys: string[];
  /** Authorization groups the key may use; `_ALL_` = every group. */
  groups: string[];
  createdAt: string;
  /** ISO 8601; null or absent = never expires. */
  expiresAt?: string | null;
  revoked: boolean;
  revokedAt?: string;
  /** Database keys: the account whose rights the key carries (billed to it). */
  accountId?: string;
  /**
   * Database keys made by a user (the portal's), and the portal's signed-in user: that user's
   * id. Such a caller sees the user's private audiences beside the account's shared ones.
   */
  userId?: string;
  /** Database keys: authorization groups per licensed survey; replaces `groups` when present. */
  groupsBySurvey?: Record<string, string[]>;
}

/** API keys: `ctk_` + 32 random bytes in base64url (256 bits). */
export const API_KEY_PATTERN = /^ctk_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return `ctk_${randomBytes(32).toString('base64url')}`;
}

export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

/** sha256 is enough for 256-bit random keys: there is nothing to brute-force. */
export function hashApiKey(apiKey: string): string {
  return `sha256:${sha256(apiKey, 'hex')}`;
}

type OneShotHash = {
  (algorithm: 'sha256', data: string, encoding: 'hex'): string;
  (algorithm: 'sha256', data: string, encoding: 'buffer'): Buffer;
};
/** crypto.hash (Node >= 20.12): one call instead of a Hash object per key; createHash before that. */
const oneShot = (cryptoModule as unknown as { hash?: OneShotHash }).hash;

/** SHA-256 of a UTF-8 string, as hex or bytes. */
export function sha256(text: string, encoding: 'hex'): string;
export function sha256(text: string, encoding: 'buffer'): Buffer;
export function sha256(text: string, encoding: 'hex' | 'buffer'): string | Buffer {
  if (oneShot !== undefined) return encoding === 'hex' ? oneShot('sha256', text, 'hex') : oneShot('sha256', text, 'buffer');
  const hash = createHash('sha256').update(text, 'utf8');
  return encoding === 'hex' ? hash.digest('hex') : hash.digest();
}
