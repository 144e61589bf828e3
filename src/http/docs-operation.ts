/**
 * GET /docs: the OpenAPI document, made once into bytes and, on first demand, into its gzip and
 * brotli forms, each with a strong entity tag. A request then costs a header lookup and a write
 * of bytes already made: no JSON, no UTF-8 encoding, no compression per request.
 */
import { headerOf, matchesETag } from './headers.js';
import type { DocsCoding } from './published-document.js';
import type { OperationReply } from './operation-reply.js';
import type { RouteContext } from './route.js';

/**
 * Stored by clients and caches, but asked again every time (If-None-Match makes that a 304 of
 * no body): a liveness probe always reaches the service, and a new document is seen at once.
 */
export const DOCS_CACHE_CONTROL = 'no-cache';

/**
 * The coding Accept-Encoding prefers among br and gzip (highest q; br on a tie; `*` stands for
 * either when not named), or identity when it accepts neither. Identity is sent even when the
 * header refuses it (`identity;q=0`): the document has no other form to offer.
 */
export function negotiateCoding(acceptEncoding: string | undefined): DocsCoding {
  if (acceptEncoding === undefined || acceptEncoding === '') return 'identity';
  const q: Partial<Record<string, number>> = {};
  for (const item of acceptEncoding.split(',')) {
    const [name, ...params] = item.split(';').map((part) => part.trim().toLowerCase());
    if (name === undefined || name === '') continue;
    const qParam = params.find((param) => param.startsWith('q='));
    const value = qParam === undefined ? 1 : Number(qParam.slice(2));
    q[name] = Number.isFinite(value) && value >= 0 && value <= 1 ? value : 0;
  }
  const br = q['br'] ?? q['*'] ?? 0;
  const gzipQ = q['gzip'] ?? q['x-gzip'] ?? q['*'] ?? 0;
  if (br <= 0 && gzipQ <= 0) return 'identity';
  return br >= gzipQ ? 'br' : 'gzip';
}

/**
 * GET /docs (and HEAD): the representation Accept-Encoding asks for with its ETag,
 * Cache-Control and `Vary: Accept-Encoding`, or 304 with no body when If-None-Match holds its ETag.
 */
export async function docsOperation({ request, service }: RouteContext): Promise<OperationReply> {
  const coding = negotiateCoding(headerOf(request.headers, 'accept-encoding'));
  const pending = service.docs.representation(coding);
  const representation = pending instanceof Promise ? await pending : pending;
  const headers: Record<string, string> = { etag: representation.etag, 'cache-control': DOCS_CACHE_CONTROL, vary: 'Accept-Encoding' };
  if (matchesETag(headerOf(request.headers, 'if-none-match'), representation.etag)) return { status: 304, headers, body: '' };
  if (coding !== 'identity') headers['content-encoding'] = coding;
  return { status: 200, headers, body: representation.body };
}
