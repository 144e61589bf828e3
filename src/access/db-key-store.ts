import { hashApiKey, type AdmissionRefusal, type ApiKeyRecord, type KeyStore } from '../keys/index.js';
import { AccountLimiter, type Limits } from './account-limits.js';
import { accountOfToken, OidcVerifier, type OidcOptions } from './oidc.js';
import type { Queryable } from './database.js';
import { iso } from './accounts.js';
import { LruMap } from './key-cache.js';

/** The rights of a key as the database holds them, fetched at most every `ttlMs`. */
interface CachedKey {
  /** The store's clock (monotonic) just before the query was sent: its snapshot is younger. */
  fetchedAt: number;
  /** undefined: no key has this hash. */
  row: KeyRightsRow | undefined;
  /** The record built from `row`; rebuilt at `revokesAt` (a revocation with a grace period). */
  record?: ApiKeyRecord;
  revokesAt?: number | undefined;
}

/** A lookup on its way to the database, joined by the requests for the same key meanwhile. */
interface PendingLookup {
  sentAt: number;
  result: Promise<CachedKey>;
}

interface KeyRightsRow {
  id: string;
  name: string;
  account_id: string;
  /** The user who made the key in the portal, if any. */
  user_id?: string | null;
  created_at: Date | string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  /** Revoked as of the database's clock when the row was read. */
  revoked_now?: boolean;
  account_disabled: boolean;
  rate_limit_per_minute: number | null;
  monthly_quota: number | null;
  permissions: { survey: string; group: string }[] | string | null;
}

/** Key, account and permissions in one round trip. */
const LOOKUP_SQL = `
  SELECT k.id, k.name, k.account_id, k.user_id, k.created_at, k.expires_at, k.revoked_at, COALESCE(k.revoked_at <= now(), false) AS revoked_now, a.disabled AS account_disabled, a.rate_limit_per_minute, a.monthly_quota,
         (SELECT json_agg(json_build_object('survey', p.survey, 'group', p.authorization_group))
            FROM survey_permissions p WHERE p.account_id = k.account_id) AS permissions
    FROM api_keys k JOIN accounts a ON a.id = k.account_id
   WHERE k.hash = $1`;

export interface DbKeyStoreOptions {
  /**
   * How long a looked-up key's rights (or its absence) are reused, in ms (default 500): a
   * request that reaches this process `ttlMs` or more after a change committed (a
   * revocation, a disabled account, a withdrawn licence, a new key) is checked against it.
   */
  ttlMs?: number;
  /** Most existing keys kept in memory (default 10,000); the least recently used goes first. */
  maxEntries?: number;
  /** Most unknown keys remembered as unknown (default 10,000), apart from the existing ones. */
  maxUnknownEntries?: number;
  /** Single sign-on: the OpenID Connect issuers whose access tokens are accepted. */
  oidc?: OidcOptions;
  /** Monotonic clock in ms for the ages of cached rights (default performance.now); tests step it. */
  clock?: () => number;
}

/** An account's rights without a key (single sign-on). */
const ACCOUNT_RIGHTS_SQL = `
  SELECT a.id AS account_id, a.disabled AS account_disabled, a.rate_limit_per_minute, a.monthly_quota,
         (SELECT json_agg(json_build_object('survey', p.survey, 'group', p.authorization_group))
            FROM survey_permissions p WHERE p.account_id = a.id) AS permissions
    FROM accounts a WHERE a.id = $1`;

/** Builds the record the handler checks, as of `now` (a grace-period revocation can pass). */
export function keyRecordOf(row: KeyRightsRow, hash: string, now = Date.now()): ApiKeyRecord {
  const permissions = typeof row.permissions === 'string' ? (JSON.parse(row.permissions) as { survey: string; group: string }[]) : (row.permissions ?? []);
  const groupsBySurvey: Record<string, string[]> = {};
  for (const { survey, group } of permissions) (groupsBySurvey[survey] ??= []).push(group);
  const revokedAt = iso(row.revoked_at);
  const revoked = row.account_disabled || row.revoked_now === true || (revokedAt !== null && Date.parse(revokedAt) <= now);
  return {
    id: row.id,
    name: row.name,
    hash,
    surveys: Object.keys(groupsBySurvey),
    groups: [],
    groupsBySurvey,
    accountId: row.account_id,
    ...(row.user_id == null ? {} : { userId: row.user_id }),
    createdAt: iso(row.created_at) as string,
    expiresAt: iso(row.expires_at),
    revoked,
    ...(revokedAt === null ? {} : { revokedAt }),
  };
}

/**
 * API keys from the access database. A key's rights are read with its account's current
 * licences and permissions, and reused for at most `ttlMs`, so every replica sees a
 * revocation, a disabled account or a withdrawn licence within that time.
 */
export class DbKeyStore implements KeyStore {
  /** Keys that exist, and hashes no key has: apart, so a flood of unknown keys evicts only its own kind. */
  private readonly known: LruMap<string, CachedKey>;
  private readonly unknown: LruMap<string, CachedKey>;
  private inFlight = new Map<string, PendingLookup>();
  private readonly ttlMs: number;
  private readonly clock: () => number;
  /** Limits per account, as of the latest lookup of one of its keys. */
  private readonly limits = new Map<string, Limits>();
  private readonly limiter: AccountLimiter;
  private readonly oidc: OidcVerifier | undefined;

  constructor(private readonly db: Queryable, options: DbKeyStoreOptions = {}) {
    this.ttlMs = options.ttlMs ?? 500;
    this.known = new LruMap(options.maxEntries ?? 10_000);
    this.unknown = new LruMap(options.maxUnknownEntries ?? 10_000);
    this.clock = options.clock ?? (() => performance.now());
    this.limiter = new AccountLimiter(db);
    this.oidc = options.oidc && options.oidc.issuers.length > 0 ? new OidcVerifier(options.oidc) : undefined;
  }

  /**
   * The rights of `hash` from the database. A lookup already in flight is joined only when it
   * was sent less than ttlMs ago: its answer then is as fresh as a cached one may be.
   */
  private fetch(hash: string, now: number): Promise<CachedKey> {
    const pending = this.inFlight.get(hash);
    if (pending !== undefined && now - pending.sentAt < this.ttlMs) return pending.result;
    const inFlight = this.inFlight;
    const sentAt = this.clock();
    const result = this.db.query<KeyRightsRow>(LOOKUP_SQL, [hash]).then(({ rows }) => {
      const entry: CachedKey = { fetchedAt: sentAt, row: rows[0] };
      // Not cached when the cache was invalidated meanwhile (a change made here after the query).
      if (this.inFlight === inFlight && inFlight.get(hash)?.result === result) this.remember(hash, entry);
      return entry;
    });
    const lookup = { sentAt, result };
    inFlight.set(hash, lookup);
    void result.then(
      () => inFlight.get(hash) === lookup && inFlight.delete(hash),
      () => inFlight.get(hash) === lookup && inFlight.delete(hash),
    );
    return result;
  }

  private remember(hash: string, entry: CachedKey): void {
    const current = this.known.peek(hash) ?? this.unknown.peek(hash);
    // An older lookup that answers late never replaces a younger one.
    if (current !== undefined && current.fetchedAt > entry.fetchedAt) return;
    const row = entry.row;
    if (row === undefined) {
      this.known.delete(hash);
      this.unknown.set(hash, entry);
    } else {
      this.unknown.delete(hash);
      this.known.set(hash, entry);
      this.limits.set(row.account_id, { ratePerMinute: row.rate_limit_per_minute, monthlyQuota: row.monthly_quota });
    }
  }

  /** Synchronous while the key's cached rights are fresh (younger than ttlMs). */
  lookup(apiKey: string): ApiKeyRecord | undefined | Promise<ApiKeyRecord | undefined> {
    const hash = hashApiKey(apiKey);
    const now = this.clock();
    const entry = this.known.get(hash) ?? this.unknown.get(hash);
    if (entry !== undefined && now - entry.fetchedAt < this.ttlMs) return this.recordOf(entry, hash, Date.now());
    return this.fetch(hash, now).then((fetched) => this.recordOf(fetched, hash, Date.now()));
  }

  /** Whether `apiKey` is a key this store has seen in the database (fresh or not): no lookup. */
  knows(apiKey: string): boolean {
    return this.known.peek(hashApiKey(apiKey)) !== undefined;
  }

  /** The record of a cached row, built once per fetch (and again only for a key revoked with a grace period). */
  private recordOf(entry: CachedKey, hash: string, now: number): ApiKeyRecord | undefined {
    if (entry.row === undefined) return undefined;
    if (entry.record === undefined || (entry.revokesAt !== undefined && now >= entry.revokesAt)) {
      entry.record = keyRecordOf(entry.row, hash, now);
      const revokedAt = entry.record.revokedAt === undefined ? Number.NaN : Date.parse(entry.record.revokedAt);
      entry.revokesAt = !entry.record.revoked && revokedAt > now ? revokedAt : undefined;
    }
    return entry.record;
  }

  /**
   * The caller of a verified access token: the account linked to its issuer and claims, with
   * that account's rights read now (no cache: SSO calls see every change at once).
   */
  async lookupBearer(token: string): Promise<ApiKeyRecord | { problem: string }> {
    if (this.oidc === undefined) return { problem: 'Single sign-on is not enabled on this service: send an API key in the Service-Engine-Authorizer header.' };
    const check = await this.oidc.verify(token);
    if (!check.ok) return { problem: check.message };
    const subject = String(check.claims.sub ?? '');
    const id = `sso:${subject.slice(0, 80)}`;
    const expiresAt = typeof check.claims.exp === 'number' ? new Date(check.claims.exp * 1000).toISOString() : null;
    const linked = await accountOfToken(this.db, check.issuer, check.claims);
    if (linked === undefined) return { id, name: `SSO ${subject}`, hash: '', surveys: [], groups: [], createdAt: new Date().toISOString(), expiresAt, revoked: false };
    const { rows } = await this.db.query<Omit<KeyRightsRow, 'id' | 'name' | 'created_at' | 'expires_at' | 'revoked_at'>>(ACCOUNT_RIGHTS_SQL, [linked.accountId]);
    const row = rows[0];
    if (row === undefined) return { problem: 'The account linked to this token no longer exists.' };
    if (row.account_disabled) return { problem: 'The account linked to this token is disabled.' };
    this.limits.set(row.account_id, { ratePerMinute: row.rate_limit_per_minute, monthlyQuota: row.monthly_quota });
    return keyRecordOf({ ...row, id, name: `SSO ${linked.link}`, created_at: new Date(), expires_at: expiresAt, revoked_at: null }, '');
  }

  /**
   * The limits of an account read by other code just now (the portal reads the account of a
   * user who computes a table): calls made for it in-process are admitted by them, as its
   * keys' calls are.
   */
  noteAccountLimits(account: { id: string; rateLimitPerMinute: number | null; monthlyQuota: number | null }): void {
    this.limits.set(account.id, { ratePerMinute: account.rateLimitPerMinute, monthlyQuota: account.monthlyQuota });
  }

  /** Counts the call against its account's rate limit and monthly quota, if it has any. */
  admit(key: ApiKeyRecord, call?: { billed: boolean }): AdmissionRefusal | undefined | Promise<AdmissionRefusal | undefined> {
    const known = key.accountId === undefined ? undefined : this.limits.get(key.accountId);
    // A free call is not counted towards the quota (nor refused by it).
    const limits = known !== undefined && call?.billed === false ? { ...known, monthlyQuota: null } : known;
    if (limits === undefined || (limits.ratePerMinute === null && limits.monthlyQuota === null)) return undefined;
    return this.limiter.admit(key.accountId as string, limits);
  }

  /**
   * Forgets every cached key and every lookup in flight: changes made by this process apply
   * to every request that arrives after this call.
   */
  invalidate(): void {
    this.known.clear();
    this.unknown.clear();
    this.inFlight = new Map();
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight.values()].map((pending) => pending.result));
  }
}
