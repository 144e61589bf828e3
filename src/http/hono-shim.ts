import type { CrosstabHandler } from './handler.js';
import { watchEnd } from './read-body.js';

/** The part of a Hono context the middleware uses (structural: no Hono types needed). */
export interface HonoContextLike {
  req: { path: string; method: string; raw: Request };
  /** @hono/node-server's bindings: the peer's address comes from `incoming.socket`. */
  env?: unknown;
}

/**
 * Hono middleware: `app.use(crosstabHono(handler))`. Requests outside `handler.basePath` go on
 * to `next()`. The body stream goes to the handler unread; an answer given before the body's
 * end carries `Connection: close`, so the rest is not drained.
 */
export function crosstabHono(handler: CrosstabHandler): (c: HonoContextLike, next: () => Promise<void>) => Promise<Response | void> {
  return async (c, next) => {
    if (!handler.owns(c.req.path)) return next();
    const { raw } = c.req;
    // No Content-Length (or 0) and no Transfer-Encoding: HTTP says there is no body. (A GET's
    // declared body is never read: fetch gives a GET no body stream.)
    let ended = Number(raw.headers.get('content-length') ?? 0) === 0 && !raw.headers.has('transfer-encoding');
    const body = raw.body === null ? undefined : watchEnd(raw.body, () => (ended = true));
    const remoteAddress = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress;
    const response = await handler.handle({ method: c.req.method, path: c.req.path, headers: raw.headers, ...(body === undefined ? {} : { body }), ...(remoteAddress === undefined ? {} : { remoteAddress }) });
    const headers = ended ? response.headers : { ...response.headers, connection: 'close' };
    return new Response(response.body === '' ? null : response.body, { status: response.status, headers });
  };
}
