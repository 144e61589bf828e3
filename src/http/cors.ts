import { CrosstabError, ErrorCode } from '../index.js';
import { AUTH_HEADER } from './auth.js';

/** Request headers a browser may send: the API key's header, and Authorization for a bearer token (single sign-on). */
export const CORS_ALLOW_HEADERS = `Content-Type, ${AUTH_HEADER}, Authorization`;

/** Preflight answers may be cached this long (seconds); Chromium caps it at 7200. */
export const CORS_MAX_AGE_SECONDS = 7200;

export interface CorsPolicy {
  /** Headers for every response to a request with this Origin header. */
  responseHeaders(origin: string | undefined): Record<string, string>;
  /** Headers for an OPTIONS preflight of a path that allows `methods`. */
  preflightHeaders(origin: string | undefined, methods: readonly string[]): Record<string, string>;
}

/**
 * Response headers a cross-origin script may read: the request id, the version of the data
 * that answered, a workbook's file name, how long to wait after a 429 or 503, and the
 * credentials a 401 asks for.
 */
export const CORS_EXPOSE_HEADERS = 'X-Request-Id, X-Dataset-Version, Content-Disposition, Retry-After, WWW-Authenticate';

/**
 * `'*'` allows any origin; a list allows exactly those origins (`https://app.example`,
 * scheme + host + port, no path). A disallowed origin gets the first allowed origin back,
 * which the browser then refuses; so Access-Control-Allow-Origin is always present.
 */
export function createCorsPolicy(origins: '*' | readonly string[] = '*'): CorsPolicy {
  const allowed = origins === '*' ? undefined : origins.map(checkOrigin);
  if (allowed !== undefined && allowed.length === 0) {
    throw new CrosstabError(ErrorCode.invalidOption, 'corsOrigins must list at least one origin, or be "*".', { field: 'corsOrigins' });
  }
  const allowOrigin = (origin: string | undefined): Record<string, string> => {
    if (allowed === undefined) return { 'access-control-allow-origin': '*' };
    const match = origin !== undefined && allowed.includes(origin) ? origin : (allowed[0] as string);
    return { 'access-control-allow-origin': match, vary: 'Origin' };
  };
  // With any origin allowed, the response headers never change: built once (callers copy them).
  const anyOrigin = allowed === undefined ? Object.freeze({ ...allowOrigin(undefined), 'access-control-expose-headers': CORS_EXPOSE_HEADERS }) : undefined;
  return {
    responseHeaders: (origin) => anyOrigin ?? { ...allowOrigin(origin), 'access-control-expose-headers': CORS_EXPOSE_HEADERS },
    preflightHeaders: (origin, methods) => ({
      ...allowOrigin(origin),
      'access-control-allow-methods': methods.filter((method) => method !== 'HEAD').join(', '),
      'access-control-allow-headers': CORS_ALLOW_HEADERS,
      'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
    }),
  };
}

function checkOrigin(origin: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || parsed.origin === 'null' || parsed.origin !== origin) {
    throw new CrosstabError(ErrorCode.invalidOption, `corsOrigins: ${JSON.stringify(origin)} is not an origin; write scheme://host[:port] with no path or trailing slash, e.g. https://app.example.`, {
      field: 'corsOrigins',
    });
  }
  return origin;
}
