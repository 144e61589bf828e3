import type { MiddlewareHandler } from 'hono';
import type { CrosstabHandler } from './handler.js';
import { readWebBody } from './read-body.js';

/** Hono middleware: `app.use(crosstabHono(handler))`. Requests outside `handler.basePath` go on to `next()`. */
export function crosstabHono(handler: CrosstabHandler): MiddlewareHandler {
  return async (c, next) => {
    if (!handler.owns(c.req.path)) return next();
    const body = await readWebBody(c.req.raw, handler.maxBodyBytes);
    const response = await handler.handle({ method: c.req.method, path: c.req.path, headers: c.req.raw.headers, body });
    return new Response(response.body === '' ? null : response.body, { status: response.status, headers: response.headers });
  };
}
