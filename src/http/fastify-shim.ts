import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ResponseStream } from './answer-budget.js';
import { cutSignalOf } from './answers-sending.js';
import type { CrosstabHandler } from './handler.js';
import { nodeRequest } from './node-shim.js';
import { originForm } from './request-path.js';
import { watchNodeDelivery } from './billed-delivery.js';

/** The part of a Fastify instance the plugin uses (structural: no Fastify types needed). */
export interface FastifyInstanceLike {
  removeAllContentTypeParsers(): unknown;
  addContentTypeParser(contentType: string, parser: (request: never, payload: never, done: (error: Error | null) => void) => void): unknown;
  all(path: string, handler: (request: { url: string; raw: IncomingMessage; headers?: IncomingHttpHeaders }, reply: FastifyReplyLike) => Promise<unknown>): unknown;
}

export interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  headers(values: Record<string, string>): FastifyReplyLike;
  /** Sends a string as UTF-8, a Uint8Array's bytes as they are, a stream as it reads (Fastify 4.x and later). */
  send(body: string | Uint8Array | Readable): FastifyReplyLike;
  /** The node:http response (Fastify's `reply.raw`): its close tells the handler the client has gone. */
  raw?: ServerResponse;
}

/**
 * Fastify plugin: `await app.register(crosstabFastify(handler))` (no `prefix`: the handler
 * owns `basePath` and everything under it). Inside the plugin the body is left unparsed: the
 * handler reads the raw request stream itself, only when the answer needs it.
 */
export function crosstabFastify(handler: CrosstabHandler): (app: FastifyInstanceLike) => Promise<void> {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const route = async (request: { url: string; raw: IncomingMessage }, reply: FastifyReplyLike): Promise<unknown> => {
      const response = await handler.handle(nodeRequest(request.raw, originForm(request.url), handler.maxBodyBytes, reply.raw));
      // Fastify writes to reply.raw: a billed answer whose connection closes before its last byte is handed to the kernel is voided.
      if (reply.raw !== undefined) watchNodeDelivery(reply.raw, response);
      // A body not read to its end ends the connection rather than being drained.
      const headers = request.raw.complete ? response.headers : { ...response.headers, connection: 'close' };
      // A streamed answer as a Readable: Fastify writes it as the socket takes it, and destroys it when the client goes.
      return reply.code(response.status).headers(headers).send(response.stream === undefined ? response.body : streamReadable(response.stream));
    };
    app.all(handler.basePath, route);
    app.all(`${handler.basePath}/*`, route);
  };
}

/** A ResponseStream as a node Readable (destroyed early, it cancels the stream). */
export function streamReadable(stream: ResponseStream): Readable {
  const readable = Readable.from(stream, { objectMode: false });
  readable.once('close', () => stream.cancel());
  // Cut by the handler's close() at its time limit: the response ends here, short.
  cutSignalOf(stream)?.addEventListener('abort', () => readable.destroy(new Error('the answer was cut: the service is shutting down')), { once: true });
  return readable;
}
