import type { RequestHandler } from 'express';
import type { CrosstabHandler } from './handler.js';
import { sendNodeResponse } from './node-shim.js';
import { readNodeBody } from './read-body.js';

/**
 * Express middleware: `app.use(crosstabExpress(handler))`, before any body parser (it reads
 * the raw body itself). Requests outside `handler.basePath` go on to `next()`.
 */
export function crosstabExpress(handler: CrosstabHandler): RequestHandler {
  return (req, res, next) => {
    if (!handler.owns(req.originalUrl)) return next();
    readNodeBody(req, handler.maxBodyBytes)
      .then((body) => handler.handle({ method: req.method, path: req.originalUrl, headers: req.headers, body }))
      .then((response) => sendNodeResponse(res, response), next);
  };
}
