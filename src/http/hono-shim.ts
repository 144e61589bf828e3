import type { CrosstabHandler } from './handler.js';
import { readWebBody } from './read-body.js';

/** The part of a Hono context the middleware uses (structural: no Hono types needed). */
export interface HonoContextLike {
  req: { path: string; method: string; raw: Request };
}

/** Hono middleware: `app.use(crosstabHono(handler))`. Requests outside `handler.basePath` go on to `next()`. */
export function crosstabHono(handler: CrosstabHandler): (c: HonoContextLike, next: () => Promise<void>) => Promise<Response | void> {
  return async (c, next) => {
    // The path as sent (c.req.path is percent-decoded): the handler applies the one path rule.
    const url = c.req.raw.url;
    const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
    if (!handler.owns(path)) return next();
    const body = await readWebBody(c.req.raw, handler.maxBodyBytes);
    const response = await handler.handle({ method: c.req.method, path, headers: c.req.raw.headers, body });
    // A body cut at the limit (see readWebBody) ends the connection rather than being drained.
    const cut = body.byteLength > handler.maxBodyBytes || Number(c.req.raw.headers.get('content-length') ?? 0) > handler.maxBodyBytes;
    const headers = cut ? { ...response.headers, connection: 'close' } : response.headers;
    return new Response(response.body === '' ? null : response.body, { status: response.status, headers });
  };
}
