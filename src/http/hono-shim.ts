import type { IncomingMessage } from 'node:http';
import type { CrosstabHandler } from './handler.js';
import type { HandlerRequest } from './handler-types.js';
import { nodeRequest } from './node-shim.js';
import { watchEnd } from './read-body.js';

/** The part of a Hono context the middleware uses (structural: no Hono types needed). */
export interface HonoContextLike {
  req: { path: string; method: string; raw: Request };
  /** Under @hono/node-server, `{ incoming }`: the node:http request itself. */
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
    // Under @hono/node-server the node request is at hand: reading the fetch Request's headers
    // or body would first build a full Request from it (about 0.1 ms per request).
    const env = c.env as { incoming?: Partial<IncomingMessage> } | undefined;
    const incoming = typeof env?.incoming?.on === 'function' ? (env.incoming as IncomingMessage) : undefined;
    let ended = false;
    let request: HandlerRequest;
    if (incoming !== undefined) {
      request = nodeRequest(incoming, c.req.path);
    } else {
      ended = !declaresBody(c.req.raw.headers);
      const body = c.req.raw.body === null ? undefined : watchEnd(c.req.raw.body, () => (ended = true));
      request = { method: c.req.method, path: c.req.path, headers: c.req.raw.headers, ...(body === undefined ? {} : { body }) };
    }
    const response = await handler.handle(request);
    if (incoming !== undefined) ended = incoming.complete;
    const headers = ended ? response.headers : { ...response.headers, connection: 'close' };
    return new Response(response.body === '' ? null : response.body, { status: response.status, headers });
  };
}

/** Content-Length above 0 or Transfer-Encoding: HTTP says a body follows (fetch gives a GET's none). */
function declaresBody(headers: Headers): boolean {
  return Number(headers.get('content-length') ?? 0) > 0 || headers.has('transfer-encoding');
}
