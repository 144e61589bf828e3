import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { CrosstabHandler } from './handler.js';
import { readNodeBody } from './read-body.js';

/** The part of a Fastify instance the plugin uses (structural: no Fastify types needed). */
export interface FastifyInstanceLike {
  removeAllContentTypeParsers(): unknown;
  addContentTypeParser(contentType: string, parser: (request: never, payload: never, done: (error: Error | null) => void) => void): unknown;
  all(path: string, handler: (request: { method: string; url: string; headers: IncomingHttpHeaders; raw: IncomingMessage }, reply: FastifyReplyLike) => Promise<unknown>): unknown;
}

export interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  headers(values: Record<string, string>): FastifyReplyLike;
  send(body: string): FastifyReplyLike;
}

/**
 * Fastify plugin: `await app.register(crosstabFastify(handler))` (no `prefix`: the handler
 * owns `basePath`). Inside the plugin the body is left unparsed so the handler sees raw bytes.
 */
export function crosstabFastify(handler: CrosstabHandler): (app: FastifyInstanceLike) => Promise<void> {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null));
    app.all(`${handler.basePath}/*`, async (request, reply) => {
      const body = await readNodeBody(request.raw, handler.maxBodyBytes);
      const response = await handler.handle({ method: request.method, path: request.url, headers: request.headers, body });
      // A body not read to its end (see readNodeBody) ends the connection rather than being drained.
      const headers = request.raw.complete ? response.headers : { ...response.headers, connection: 'close' };
      return reply.code(response.status).headers(headers).send(response.body);
    });
  };
}
