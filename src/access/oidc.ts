import { createRemoteJWKSet, decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Database, Queryable } from './database.js';
import { findAccount } from './accounts.js';
import { badInput } from './validate.js';
import { CrosstabError, ErrorCode, mention, problemText } from '../errors.js';

/** An OpenID Connect issuer whose JWT access tokens the API accepts. */
export interface TrustedIssuer {
  /** The `iss` of its tokens, e.g. https://login.example.com/realms/acme. */
  issuer: string;
  /** The `aud` the tokens must carry: this API's identifier. */
  audience: string;
}

export interface OidcOptions {
  issuers: readonly TrustedIssuer[];
  /** Least time between two JWKS downloads of an issuer when a token has an unknown `kid` (default 30 s). */
  jwksCooldownMs?: number;
  /**
   * Longest time an issuer's downloaded JWKS is used before it is downloaded again (default
   * 60 s): the bound on how long a signing key removed at the provider still verifies tokens.
   */
  jwksMaxAgeMs?: number;
  /** Allowed clock difference for exp/nbf/iat, in seconds (default 30). */
  clockToleranceSeconds?: number;
  /**
   * Longest accepted token lifetime, `exp - iat` (or `exp` - now for a token without `iat`),
   * in seconds (default 86,400: 24 h). Longer-lived tokens are refused.
   */
  maxTokenLifetimeSeconds?: number;
}

export const DEFAULT_JWKS_MAX_AGE_MS = 60_000;
export const DEFAULT_MAX_TOKEN_LIFETIME_SECONDS = 86_400;

function integerOption(options: OidcOptions, name: 'jwksCooldownMs' | 'jwksMaxAgeMs' | 'clockToleranceSeconds' | 'maxTokenLifetimeSeconds', least: 0 | 1, fallback: number): number {
  const value = options[name];
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < least) {
    throw new CrosstabError(ErrorCode.invalidOption, `${name} must be a ${least === 1 ? 'positive' : 'non-negative'} integer; got ${String(value)}.`, { field: name });
  }
  return value;
}

/** A verified token: the issuer and its claims. */
export type TokenCheck = { ok: true; issuer: string; claims: JWTPayload } | { ok: false; message: string };

/**
 * Verifies `Authorization: Bearer` access tokens: signature against the issuer's JWKS (found
 * through OpenID Connect discovery, fetched again when a token names a key it does not hold,
 * which is how key rotation at the provider reaches us, and at least every `jwksMaxAgeMs`,
 * which is how a key removed there stops verifying), issuer, audience, expiry, an `iat` not in
 * the future and a lifetime of at most `maxTokenLifetimeSeconds`.
 */
export class OidcVerifier {
  private readonly trusted = new Map<string, TrustedIssuer>();
  private readonly keySets = new Map<string, Promise<ReturnType<typeof createRemoteJWKSet>>>();
  private readonly jwksCooldownMs: number;
  private readonly jwksMaxAgeMs: number;
  private readonly clockToleranceSeconds: number;
  private readonly maxTokenLifetimeSeconds: number;

  /** Throws CrosstabError `invalid_option` naming a bad option. */
  constructor(options: OidcOptions) {
    this.jwksCooldownMs = integerOption(options, 'jwksCooldownMs', 0, 30_000);
    this.jwksMaxAgeMs = integerOption(options, 'jwksMaxAgeMs', 1, DEFAULT_JWKS_MAX_AGE_MS);
    this.clockToleranceSeconds = integerOption(options, 'clockToleranceSeconds', 0, 30);
    this.maxTokenLifetimeSeconds = integerOption(options, 'maxTokenLifetimeSeconds', 1, DEFAULT_MAX_TOKEN_LIFETIME_SECONDS);
    for (const issuer of options.issuers) this.trusted.set(issuer.issuer, issuer);
  }

  private keySet(issuer: string): Promise<ReturnType<typeof createRemoteJWKSet>> {
    let pending = this.keySets.get(issuer);
    if (pending === undefined) {
      pending = (async () => {
        const response = await fetch(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(5000) });
        if (!response.ok) throw new Error(`discovery of ${issuer} answered ${response.status}`);
        const configuration = (await response.json()) as { issuer?: string; jwks_uri?: string };
        if (configuration.issuer !== issuer || typeof configuration.jwks_uri !== 'string') throw new Error(`discovery of ${issuer} did not describe that issuer with a jwks_uri`);
        return createRemoteJWKSet(new URL(configuration.jwks_uri), { cooldownDuration: this.jwksCooldownMs, cacheMaxAge: this.jwksMaxAgeMs, timeoutDuration: 5000 });
      })();
      // A failed discovery is retried on the next token.
      pending.catch(() => this.keySets.delete(issuer));
      this.keySets.set(issuer, pending);
    }
    return pending;
  }

  async verify(token: string): Promise<TokenCheck> {
    let issuer: string | undefined;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      return { ok: false, message: 'The Bearer token is not a JWT access token.' };
    }
    const trusted = issuer === undefined ? undefined : this.trusted.get(issuer);
    if (trusted === undefined) return { ok: false, message: `The Bearer token's issuer ${JSON.stringify(issuer ?? null)} is not trusted by this service.` };
    try {
      const keys = await this.keySet(trusted.issuer);
      const { payload } = await jwtVerify(token, keys, { issuer: trusted.issuer, audience: trusted.audience, clockTolerance: this.clockToleranceSeconds, requiredClaims: ['exp'] });
      const problem = this.lifetimeProblem(payload as JWTPayload & { exp: number });
      if (problem !== undefined) return { ok: false, message: problem };
      return { ok: true, issuer: trusted.issuer, claims: payload };
    } catch (error) {
      if (error instanceof errors.JWTExpired) return { ok: false, message: 'The Bearer token has expired.' };
      if (error instanceof errors.JWTClaimValidationFailed) return { ok: false, message: `The Bearer token's "${error.claim}" claim is not valid here (${error.reason}).` };
      if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey) return { ok: false, message: 'The Bearer token\'s signature does not verify with the issuer\'s keys.' };
      if (error instanceof errors.JOSEError) return { ok: false, message: `The Bearer token is not valid (${error.code}).` };
      return { ok: false, message: `The issuer's keys could not be fetched (${(error as Error).message}).` };
    }
  }

  /** Why a verified token's `iat`/`exp` are refused here, if they are (jose checks only that `exp` is not past). */
  private lifetimeProblem(claims: JWTPayload & { exp: number }): string | undefined {
    const now = Math.floor(Date.now() / 1000);
    const tolerance = this.clockToleranceSeconds;
    const max = this.maxTokenLifetimeSeconds;
    const fix = 'ask the identity provider for shorter-lived access tokens';
    if (claims.iat !== undefined) {
      if (claims.iat > now + tolerance) {
        return `The Bearer token's "iat" claim (issued at ${new Date(claims.iat * 1000).toISOString()}) is in the future: the identity provider's clock is wrong or the token is not genuine.`;
      }
      const lifetime = claims.exp - claims.iat;
      if (lifetime > max) return `The Bearer token lives ${lifetime} s (from "iat" to "exp"), longer than this service accepts (at most ${max} s): ${fix}.`;
    } else if (claims.exp - now > max + tolerance) {
      return `The Bearer token lives ${claims.exp - now} s more (it has no "iat"; "exp" is ${new Date(claims.exp * 1000).toISOString()}), longer than this service accepts (at most ${max} s): ${fix}.`;
    }
    return undefined;
  }
}

/** The link of an issuer's tokens to an account: tokens whose `claim` equals (or contains) `value`. */
export interface OidcLink {
  issuer: string;
  claim: string;
  value: string;
  accountId: string;
}

/** `crosstab accounts link`: tokens of `issuer` with this subject (or claim value) act for the account. */
export async function linkIssuer(db: Database, options: { account: string; issuer: string | undefined; subject?: string; claim?: string }): Promise<OidcLink> {
  let issuerUrl: URL;
  try {
    issuerUrl = new URL(options.issuer ?? '');
  } catch {
    throw badInput('issuer', `must be the issuer URL of the OpenID Provider (the "iss" of its tokens); got ${JSON.stringify(options.issuer ?? '')}.`);
  }
  if (issuerUrl.protocol !== 'https:' && issuerUrl.hostname !== '127.0.0.1' && issuerUrl.hostname !== 'localhost') throw badInput('issuer', 'must be an https:// URL (http:// only on loopback).');
  if ((options.subject === undefined) === (options.claim === undefined)) throw badInput('subject', problemText`or ${mention('claim')} is required, not both: ${mention('subject')} SUB (the "sub" of a client) or ${mention('claim')} NAME=VALUE (e.g. org=acme).`);
  let claim = 'sub';
  let value = options.subject ?? '';
  if (options.claim !== undefined) {
    const eq = options.claim.indexOf('=');
    claim = options.claim.slice(0, eq);
    value = options.claim.slice(eq + 1);
    if (eq < 1 || value === '') throw badInput('claim', `must be NAME=VALUE, e.g. org=acme; got ${JSON.stringify(options.claim)}.`);
  }
  if (value === '') throw badInput('subject', 'must not be empty.');
  return db.transaction(async (tx) => {
    const account = await findAccount(tx, options.account);
    const taken = await tx.query<{ account_id: string }>('SELECT account_id FROM oidc_links WHERE issuer = $1 AND claim = $2 AND value = $3', [options.issuer, claim, value]);
    if (taken.rows[0] !== undefined && taken.rows[0].account_id !== account.id) throw badInput(options.claim ? 'claim' : 'subject', `${claim}=${value} of ${options.issuer} is already linked to another account.`);
    await tx.query('INSERT INTO oidc_links (issuer, claim, value, account_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [options.issuer, claim, value, account.id]);
    return { issuer: options.issuer as string, claim, value, accountId: account.id };
  });
}

/** The account a verified token acts for, from the issuer's links; undefined when none matches. */
export async function accountOfToken(db: Queryable, issuer: string, claims: JWTPayload): Promise<{ accountId: string; link: string } | undefined> {
  const { rows } = await db.query<{ claim: string; value: string; account_id: string }>('SELECT claim, value, account_id FROM oidc_links WHERE issuer = $1 ORDER BY claim, value', [issuer]);
  for (const row of rows) {
    const claim = claims[row.claim];
    if (claim === row.value || (Array.isArray(claim) && claim.includes(row.value))) return { accountId: row.account_id, link: `${row.claim}=${row.value}` };
  }
  return undefined;
}
