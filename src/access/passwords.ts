import { randomBytes, randomInt, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt cost: N = 2^15, r = 8, p = 1 (32 MiB, ~50-100 ms), the OWASP minimum or above. */
const COST = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key))));
}

/** `scrypt$N$r$p$salt$hash` (base64url parts): the only form passwords are stored in. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Constant-time check of `password` against a stored hash; false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p), maxmem: COST.maxmem });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A one-time password for a new user: 16 characters from an unambiguous alphabet (~92 bits). */
export function oneTimePassword(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return Array.from({ length: 16 }, () => alphabet[randomInt(alphabet.length)]).join('');
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string, email: string): string | undefined {
  if (password.length < 12) return 'must be at least 12 characters long';
  if (password.length > 256) return 'must be at most 256 characters long';
  if (password.toLowerCase().includes(email.split('@')[0]?.toLowerCase() ?? '\u0000')) return 'must not contain your user name';
  return undefined;
}
