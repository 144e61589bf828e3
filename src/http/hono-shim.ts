import type { CrosstabHandler } from './handler.js';
import { readWebBody } from './read-body.js';

/** The part of a Hono context the middleware uses (structural: no Hono types needed). */
export interface HonoContextLike {
  req: { path: string; method: string; raw: Request };
}

/** Hono middleware: `app.use(crosstabHono(handler))`. Requests outside `handler.basePath` go on to `next()`. */
export function crosstabHono(handler: CrosstabHandler): (c: HonoContextLike, next: () => Promise<void>) => Promise<Response | void> {
  return async (c, next) => {
    if (!handler.owns(c.req.path)) return next();
    const body = await readWebBody(c.req.raw, handler.maxBodyBytes);
    const response = await handler.handle({ method: c.req.method, path: c.req.path, headers: c.req.raw.headers, body });
    return new Response(response.body === '' ? null : response.body, { status: response.status, headers: response.headers });
  };
}
