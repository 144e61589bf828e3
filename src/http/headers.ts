/** Request headers as node:http gives them (lower-case names) or as a fetch `Headers`. */
export type HandlerHeaders = Headers | Record<string, string | string[] | undefined>;

/** One header, case-insensitively; repeated headers joined with ", ". */
export function headerOf(headers: HandlerHeaders, name: string): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  const lower = name.toLowerCase();
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(lower) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  let value = record[lower];
  if (value === undefined) {
    // Names written in another case (node:http's are lower-case already, so most absent
    // headers end here): only a name of the same length can match, the rest is not lowered.
    for (const key in record) {
      if (key.length === lower.length && key.toLowerCase() === lower && Object.hasOwn(record, key)) {
        value = record[key];
        break;
      }
    }
  }
  if (value === undefined || value === null) return undefined;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

/** `application/json`, with no charset or UTF-8. */
export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  if (value === 'application/json') return true; // what nearly every client sends
  const [type, ...params] = value.split(';').map((part) => part.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((param) => !param.startsWith('charset=') || ['utf-8', 'utf8', '"utf-8"'].includes(param.slice('charset='.length)));
}

/** If-None-Match: `*`, or a list of entity tags (weak ones compared by their opaque part). */
export function matchesETag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((candidate) => {
    const trimmed = candidate.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === etag;
  });
}
