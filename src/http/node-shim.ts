import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CrosstabHandler, HandlerResponse } from './handler.js';
import type { HandlerRequest } from './handler-types.js';
import { readNodeBodyThen } from './read-body.js';

/**
 * Writes a handler response to a node:http response (also used by the Express shim). When
 * the request body was not read to its end (too large, or answered before it was needed),
 * or `closeConnection` is set (the server is draining), the answer says `Connection: close`
 * and the connection is closed after it, so the client does not reuse it.
 */
export function sendNodeResponse(res: ServerResponse, response: HandlerResponse, closeConnection = false): void {
  const headers = closeConnection || res.req?.complete === false ? { ...response.headers, connection: 'close' } : response.headers;
  res.writeHead(response.status, headers).end(response.body);
}

export interface NodeListenerOptions {
  /** Asked as each answer is written: true answers with `Connection: close` (listen() sets it while draining). */
  closeConnections?: () => boolean;
}

/**
 * A node:http request listener: `http.createServer(createNodeListener(handler))`.
 * Paths outside `handler.basePath` get a 404 error body.
 */
export function createNodeListener(handler: CrosstabHandler, options: NodeListenerOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  const closeConnections = options.closeConnections ?? (() => false);
  return (req, res) => {
    const fail = (): void => {
      res.destroy();
    };
    readNodeBodyThen(
      req,
      handler.maxBodyBytes,
      (body) => {
        const remoteAddress = req.socket.remoteAddress;
        const request: HandlerRequest = { method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body };
        if (remoteAddress !== undefined) request.remoteAddress = remoteAddress;
        handler.handle(request).then((response) => sendNodeResponse(res, response, closeConnections()), fail);
      },
      fail,
    );
  };
}
