import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CrosstabHandler, HandlerResponse } from './handler.js';
import { readNodeBody } from './read-body.js';

/** Writes a handler response to a node:http response (also used by the Express shim). */
export function sendNodeResponse(res: ServerResponse, response: HandlerResponse): void {
  res.writeHead(response.status, response.headers).end(response.body);
}

/**
 * A node:http request listener: `http.createServer(createNodeListener(handler))`.
 * Paths outside `handler.basePath` get a 404 error body.
 */
export function createNodeListener(handler: CrosstabHandler): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    readNodeBody(req, handler.maxBodyBytes)
      .then((body) => handler.handle({ method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body }))
      .then((response) => sendNodeResponse(res, response), () => res.destroy());
  };
}
