import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CrosstabHandler } from './handler.js';
import type { ResponseStream } from './answer-budget.js';
import { cutSignalOf } from './answers-sending.js';
import type { HandlerRequest } from './handler-types.js';
import { nodeRequest } from './node-shim.js';
import { watchNodeDelivery } from './billed-delivery.js';
import { readWebBody } from './read-body.js';
import { originForm } from './request-path.js';

/** The part of a Hono context the middleware uses (structural: no Hono types needed). */
export interface HonoContextLike {
  req: { path: string; method: string; raw: Request };
  /** Under @hono/node-server, `{ incoming, outgoing }`: the node:http request and response themselves. */
  env?: unknown;
}

/**
 * Hono middleware: `app.use(crosstabHono(handler))`. Requests outside `handler.basePath` go on
 * to `next()`. The handler reads the body stream only when the answer needs it; an answer
 * given before the body's end carries `Connection: close`, so the rest is not drained. A
 * large table answer is a ReadableStream pulled a chunk at a time as the socket takes it
 * (under @hono/node-server too), its bytes counted in the handler's bound on answers in flight.
 */
export function crosstabHono(handler: CrosstabHandler): (c: HonoContextLike, next: () => Promise<void>) => Promise<Response | void> {
  return async (c, next) => {
    // Under @hono/node-server the node request is at hand: reading the fetch Request's headers
    // or body would first build a full Request from it (about 0.1 ms per request).
    const env = c.env as { incoming?: Partial<IncomingMessage>; outgoing?: Partial<ServerResponse> } | undefined;
    const incoming = typeof env?.incoming?.on === 'function' ? (env.incoming as IncomingMessage) : undefined;
    // With the node:http response, the request streams (and knows when its client has gone).
    const outgoing = typeof env?.outgoing?.once === 'function' && 'writableFinished' in env.outgoing ? (env.outgoing as ServerResponse) : undefined;
    // The path as sent (c.req.path is percent-decoded): the handler applies the one path rule.
    const path = incoming?.url === undefined ? pathAsSent(c.req.raw.url) : originForm(incoming.url);
    if (!handler.owns(path)) return next();
    const raw = c.req.raw;
    const request: HandlerRequest =
      incoming !== undefined
        ? nodeRequest(incoming, path, handler.maxBodyBytes, outgoing)
        : // The Request's signal aborts when its client goes (before its answer is sent): not billed, work stopped.
          { method: c.req.method, path, headers: raw.headers, readBody: (signal) => readWebBody(raw, handler.maxBodyBytes, signal), streaming: true, signal: raw.signal };
    const response = await handler.handle(request);
    // @hono/node-server writes the Response to `outgoing`: a billed answer whose connection
    // closes before its last byte is handed to the kernel is voided. A fetch-only mount hands
    // the Response to its runtime, which does not say whether it was delivered: billed as sent.
    if (outgoing !== undefined) watchNodeDelivery(outgoing, response);
    // The handler says Connection: close for a declared body it did not read to its end. HTTP/2
    // has no such header (node would warn and drop it): the stream ends with its answer.
    const headers =
      incoming?.httpVersionMajor === 2 ? withoutConnection(response.headers) : incoming === undefined || incoming.complete ? response.headers : { ...response.headers, connection: 'close' };
    if (response.stream !== undefined) return new Response(webStream(response.stream), { status: response.status, headers });
    return new Response(response.body.length === 0 ? null : response.body, { status: response.status, headers });
  };
}

function withoutConnection(headers: Record<string, string>): Record<string, string> {
  if (!('connection' in headers)) return headers;
  const { connection: _connection, ...rest } = headers;
  return rest;
}

/** The path and query of an absolute URL, as the client sent them. */
function pathAsSent(url: string): string {
  return url.slice(url.indexOf('/', url.indexOf('//') + 2));
}

/** A ResponseStream as a web ReadableStream, pulled a chunk at a time; cancelled, it cancels the stream. */
function webStream(stream: ResponseStream): ReadableStream<Uint8Array> {
  const chunks = stream[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    start(controller) {
      // Cut by the handler's close() at its time limit: the response ends here, short.
      cutSignalOf(stream)?.addEventListener('abort', () => controller.error(new Error('the answer was cut: the service is shutting down')), { once: true });
    },
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await chunks.return?.();
      stream.cancel();
    },
  });
}
