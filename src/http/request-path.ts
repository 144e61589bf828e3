/**
 * The one rule for request paths, whatever framework passed them on: the path is split on
 * `/`, then each segment is percent-decoded exactly once. So `/v1/%64ocs` is `/v1/docs`, an
 * encoded slash (`%2F`) stays inside its segment (a path parameter may hold one), and
 * `%2564` decodes to `%64`, never further. Dot segments are not resolved: `/v1/x/../docs`
 * names no operation. Shims pass the path as the client sent it.
 */

/** The path without its query string. */
export function pathnameOf(path: string): string {
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}

/**
 * Each segment of a path (below `/`, split on `/`) percent-decoded once, or `{ raw }` for a
 * segment that is not valid percent-encoded UTF-8.
 */
export function decodeSegments(segments: readonly string[]): (string | { raw: string })[] {
  return segments.map((segment) => {
    if (!segment.includes('%')) return segment;
    try {
      return decodeURIComponent(segment);
    } catch {
      return { raw: segment };
    }
  });
}

/**
 * The decoded segments of an absolute path (`/v1/docs` -> ['v1', 'docs']), or undefined when
 * a segment is not valid percent-encoded UTF-8 (such a path names no operation).
 */
export function pathSegments(pathname: string): string[] | undefined {
  if (!pathname.startsWith('/')) return undefined;
  const segments = pathname.slice(1).split('/');
  if (!pathname.includes('%')) return segments;
  try {
    return segments.map((segment) => decodeURIComponent(segment));
  } catch {
    return undefined;
  }
}

/** `http://authority` or `https://authority` at the start of an absolute-form request target. */
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * The origin form (path and query) of a request target: a target in absolute form
 * (`http://api.example/v1/crosstab?x=1`, which HTTP/1.1 servers must accept) becomes
 * `/v1/crosstab?x=1`, and `http://api.example` alone `/`. The authority is dropped, whatever
 * host it names: the service never acts as a proxy, so such a target is answered as this
 * server's own path. Any other target is returned as it is.
 */
export function originForm(target: string): string {
  // Nearly every target is in origin form already.
  if (target.charCodeAt(0) === 0x2f /* / */) return target;
  const authority = ABSOLUTE_FORM.exec(target);
  if (authority === null) return target;
  const rest = target.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}
