import type { ApiKeyRecord } from './api-key.js';

/** Why a call of an authenticated caller is refused before it runs (HTTP 429, never billed). */
export interface AdmissionRefusal {
  code: 'rate_limited' | 'quota_exceeded';
  message: string;
  retryAfterSeconds: number;
}

/** Where the handler looks API keys up. Pluggable: a database-backed store fits too. */
export interface KeyStore {
  /**
   * The record whose hash matches `apiKey` (revoked and expired ones included), if any. May
   * answer synchronously (a cached key): the handler then does not wait a turn for it.
   */
  lookup(apiKey: string): ApiKeyRecord | undefined | Promise<ApiKeyRecord | undefined>;
  /**
   * Optional per-account limits, counted for every authenticated call; a refusal becomes a 429.
   * A call that is never billed (`billed: false`, the survey catalog) counts against the rate
   * limit only, not the monthly quota. May answer synchronously.
   */
  admit?(key: ApiKeyRecord, call?: { billed: boolean }): AdmissionRefusal | undefined | Promise<AdmissionRefusal | undefined>;
  /**
   * Optional single sign-on: the caller of an `Authorization: Bearer` access token, or why the
   * token is refused (401). A valid token of no account gets a record with no surveys (403).
   */
  lookupBearer?(token: string): Promise<ApiKeyRecord | { problem: string }>;
  /**
   * Optional: whether `apiKey` is known to exist without asking the backing store (a cached
   * key). An address refused for too many failed keys may still use the keys it knows.
   */
  knows?(apiKey: string): boolean;
  close(): Promise<void>;
}
