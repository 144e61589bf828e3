import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CrosstabHandler } from './handler.js';
import { sendNodeResponse } from './node-shim.js';
import { readNodeBody } from './read-body.js';

/** Connect-style middleware (Express, Connect and alike), typed without any framework's types. */
export type NodeMiddleware = (req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, next: (error?: unknown) => void) => void;

/**
 * Express middleware: `app.use(crosstabExpress(handler))`, before any body parser (it reads
 * the raw body itself). Requests outside `handler.basePath` go on to `next()`.
 */
export function crosstabExpress(handler: CrosstabHandler): NodeMiddleware {
  return (req, res, next) => {
    const path = req.originalUrl ?? req.url ?? '/';
    if (!handler.owns(path)) return next();
    readNodeBody(req, handler.maxBodyBytes)
      .then((body) => handler.handle({ method: req.method ?? '', path, headers: req.headers, body }))
      .then((response) => sendNodeResponse(res, response), next);
  };
}
