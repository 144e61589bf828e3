import { createRemoteJWKSet, decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Database, Queryable } from './database.js';
import { findAccount } from './accounts.js';
import { badInput } from './validate.js';

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
  /** Allowed clock difference for exp/nbf, in seconds (default 30). */
  clockToleranceSeconds?: number;
}

/** A verified token: the issuer and its claims. */
export type TokenCheck = { ok: true; issuer: string; claims: JWTPayload } | { ok: false; message: string };

/**
 * Verifies `Authorization: Bearer` access tokens: signature against the issuer's JWKS (found
 * through OpenID Connect discovery, fetched again when a token names a key it does not hold,
 * which is how key rotation at the provider reaches us), issuer, audience, expiry.
 */
export class OidcVerifier {
  private readonly trusted = new Map<string, TrustedIssuer>();
  private readonly keySets = new Map<string, Promise<ReturnType<typeof createRemoteJWKSet>>>();

  constructor(private readonly options: OidcOptions) {
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
        return createRemoteJWKSet(new URL(configuration.jwks_uri), { cooldownDuration: this.options.jwksCooldownMs ?? 30_000, timeoutDuration: 5000 });
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
      const { payload } = await jwtVerify(token, keys, { issuer: trusted.issuer, audience: trusted.audience, clockTolerance: this.options.clockToleranceSeconds ?? 30, requiredClaims: ['exp'] });
      return { ok: true, issuer: trusted.issuer, claims: payload };
    } catch (error) {
      if (error instanceof errors.JWTExpired) return { ok: false, message: 'The Bearer token has expired.' };
      if (error instanceof errors.JWTClaimValidationFailed) return { ok: false, message: `The Bearer token's "${error.claim}" claim is not valid here (${error.reason}).` };
      if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey) return { ok: false, message: 'The Bearer token\'s signature does not verify with the issuer\'s keys.' };
      if (error instanceof errors.JOSEError) return { ok: false, message: `The Bearer token is not valid (${error.code}).` };
      return { ok: false, message: `The issuer's keys could not be fetched (${(error as Error).message}).` };
    }
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
    throw badInput('--issuer', `must be the issuer URL of the OpenID Provider (the "iss" of its tokens); got ${JSON.stringify(options.issuer ?? '')}.`);
  }
  if (issuerUrl.protocol !== 'https:' && issuerUrl.hostname !== '127.0.0.1' && issuerUrl.hostname !== 'localhost') throw badInput('--issuer', 'must be an https:// URL (http:// only on loopback).');
  if ((options.subject === undefined) === (options.claim === undefined)) throw badInput('--subject', 'or --claim is required, not both: --subject SUB (the "sub" of a client) or --claim NAME=VALUE (e.g. org=acme).');
  let claim = 'sub';
  let value = options.subject ?? '';
  if (options.claim !== undefined) {
    const eq = options.claim.indexOf('=');
    claim = options.claim.slice(0, eq);
    value = options.claim.slice(eq + 1);
    if (eq < 1 || value === '') throw badInput('--claim', `must be NAME=VALUE, e.g. org=acme; got ${JSON.stringify(options.claim)}.`);
  }
  if (value === '') throw badInput('--subject', 'must not be empty.');
  return db.transaction(async (tx) => {
    const account = await findAccount(tx, options.account);
    const taken = await tx.query<{ account_id: string }>('SELECT account_id FROM oidc_links WHERE issuer = $1 AND claim = $2 AND value = $3', [options.issuer, claim, value]);
    if (taken.rows[0] !== undefined && taken.rows[0].account_id !== account.id) throw badInput(options.claim ? '--claim' : '--subject', `${claim}=${value} of ${options.issuer} is already linked to another account.`);
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
