import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CrosstabHandler } from './handler.js';
import { failNodeResponse, nodeRequest, sendNodeResponse } from './node-shim.js';
import { originForm } from './request-path.js';

/** Connect-style middleware (Express, Connect and alike), typed without any framework's types. */
export type NodeMiddleware = (req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, next: (error?: unknown) => void) => void;

/**
 * Express middleware: `app.use(crosstabExpress(handler))`, before any body parser (the
 * handler reads the raw body itself). Requests outside `handler.basePath` go on to `next()`;
 * nothing of the handler's requests reaches the application's error handler.
 */
export function crosstabExpress(handler: CrosstabHandler): NodeMiddleware {
  return (req, res, next) => {
    const path = originForm(req.originalUrl ?? req.url ?? '/');
    if (!handler.owns(path)) return next();
    handler.handle(nodeRequest(req, path, handler.maxBodyBytes, res)).then(
      (response) => sendNodeResponse(res, response),
      (error: unknown) => failNodeResponse(res, error),
    );
  };
}
