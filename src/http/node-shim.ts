import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { CrosstabHandler, HandlerResponse } from './handler.js';
import type { ResponseStream } from './answer-budget.js';
import { cutSignalOf } from './answers-sending.js';
import { watchNodeDelivery, type BilledAnswer } from './billed-delivery.js';
import type { HandlerRequest } from './handler-types.js';
import { arrivedNodeBody, readNodeBody } from './read-body.js';
import { ARRIVED_BODY, CLIENT_GONE, type ArrivedBodyRequest } from './request-body.js';
import { originForm } from './request-path.js';
import { errorBody, serviceError } from './service-error.js';

const INTERNAL_BODY = JSON.stringify(
  errorBody(serviceError('internal', 'Internal error.', 'Retry later; if it persists, report the time of the request to the provider.')),
);

/**
 * One JSON line on stderr for a response that could not be written (the handler's own log
 * never sees it: the handler had already answered).
 */
function logFailure(res: ServerResponse, error: unknown): void {
  const path = (res.req?.url ?? '').split('?', 1)[0]?.slice(0, 512);
  const reason = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), event: 'response_failed', message: `${res.req?.method ?? ''} ${path}: ${reason}` })}\n`);
}

/**
 * Ends `res` with a 500 and the service's error body after `error` (logged): a response that
 * cannot be written costs that request, never the server. A response already under way is
 * cut instead (its status line has gone out).
 */
export function failNodeResponse(res: ServerResponse, error: unknown): void {
  logFailure(res, error);
  if (res.headersSent || res.writableEnded) {
    res.destroy();
    return;
  }
  try {
    // writeHead can fail half-way, having stored some of the handler's headers: drop them all.
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(INTERNAL_BODY)), 'cache-control': 'no-store', connection: 'close' }).end(INTERNAL_BODY);
  } catch {
    res.destroy();
  }
}

/**
 * Writes a handler response to a node:http response (also used by the Express shim). When
 * the request body was not read to its end (too large, or answered before it was needed),
 * or `closeConnection` is set (the server is draining), the answer says `Connection: close`
 * and the connection is closed after it, so the client does not reuse it. A response
 * node:http refuses (a header value with a control character, a bad status) becomes a 500
 * (failNodeResponse).
 */
export function sendNodeResponse(res: ServerResponse, response: HandlerResponse, closeConnection = false): void {
  const headers = closeConnection || res.req?.complete === false ? { ...response.headers, connection: 'close' } : response.headers;
  // A billed answer whose connection closes before its last byte is handed to the kernel is voided.
  const billed = watchNodeDelivery(res, response);
  try {
    res.writeHead(response.status, headers);
  } catch (error) {
    billed?.undelivered('send_failed');
    response.stream?.cancel();
    failNodeResponse(res, error);
    return;
  }
  if (response.stream === undefined) res.end(response.body);
  else void sendNodeStream(res, response.stream, billed);
}

/**
 * Writes a streamed body after its headers, taking the next chunk only when the socket has
 * taken the last (backpressure). A client that goes stops it; a stream that fails cuts the
 * response (its status has gone out), so the client sees fewer bytes than Content-Length.
 */
async function sendNodeStream(res: ServerResponse, stream: ResponseStream, billed: BilledAnswer | undefined): Promise<void> {
  let gone = res.destroyed;
  let wake: (() => void) | undefined;
  const onClose = () => {
    gone = true;
    wake?.();
  };
  res.once('close', onClose);
  // Cut by the handler's close() at its time limit: the response ends here, short.
  const cut = cutSignalOf(stream);
  const onCut = () => {
    billed?.undelivered('shutdown_cut');
    res.destroy();
  };
  cut?.addEventListener('abort', onCut, { once: true });
  try {
    for await (const chunk of stream) {
      if (gone) break;
      if (!res.write(chunk)) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          res.once('drain', resolve);
        });
        res.removeListener('drain', wake!);
        wake = undefined;
      }
      if (gone) break;
    }
    if (!gone) res.end();
  } catch (error) {
    billed?.undelivered('send_failed');
    failNodeResponse(res, error);
  } finally {
    res.removeListener('close', onClose);
    cut?.removeEventListener('abort', onCut);
    stream.cancel();
  }
}

export interface NodeListenerOptions {
  /** Asked as each answer is written: true answers with `Connection: close` (listen() sets it while draining). */
  closeConnections?: () => boolean;
  /** Told once the answer to `req` has been written (its status line is out) or given up. */
  answered?: (req: IncomingMessage) => void;
}

/**
 * A node:http request listener: `http.createServer(createNodeListener(handler))`.
 * Paths outside `handler.basePath` get a 404 error body. The body is read only if the handler
 * asks: an answer the headers decide goes out at once.
 */
export function createNodeListener(handler: CrosstabHandler, options: NodeListenerOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  const closeConnections = options.closeConnections ?? (() => false);
  const answered = options.answered;
  return (req, res) => {
    let pending: Promise<HandlerResponse>;
    try {
      pending = handler.handle(nodeRequest(req, originForm(req.url ?? '/'), handler.maxBodyBytes, res));
    } catch (error) {
      pending = Promise.reject(error);
    }
    // One reaction per request, not a then() and a catch() chained.
    pending.then(
      (response) => {
        try {
          sendNodeResponse(res, response, closeConnections());
        } catch (error) {
          failNodeResponse(res, error);
        }
        answered?.(req);
      },
      (error: unknown) => {
        failNodeResponse(res, error);
        answered?.(req);
      },
    );
  };
}

/**
 * The handler's view of a node:http request (every node-based shim): `readBody` reads at most
 * `limit + 1` bytes of its stream when the handler asks, and stops when the handler's signal aborts.
 * With `res`, its `signal` aborts when the connection closes before the answer was written
 * (made on first use), and CLIENT_GONE says the same without a signal.
 */
export function nodeRequest(req: IncomingMessage, path: string, limit: number, res?: ServerResponse): HandlerRequest {
  const remoteAddress = req.socket?.remoteAddress;
  if (res === undefined) {
    const request: ArrivedBodyRequest = {
      method: req.method ?? '',
      path,
      headers: req.headers,
      readBody: (signal) => readNodeBody(req, limit, signal),
      [ARRIVED_BODY]: () => arrivedNodeBody(req, limit),
    };
    if (remoteAddress !== undefined) request.remoteAddress = remoteAddress;
    return request;
  }
  const request = new NodeRequest(req, path, limit, res);
  if (remoteAddress !== undefined) request.remoteAddress = remoteAddress;
  return request;
}

/**
 * nodeRequest's request with its response, as a class: made for every request, and an object
 * literal with a getter and symbol-named members is built field by field, several times slower.
 */
class NodeRequest implements ArrivedBodyRequest {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly streaming = true;
  remoteAddress?: string;
  readonly readBody: (signal: AbortSignal) => Promise<Uint8Array>;
  readonly [ARRIVED_BODY]: () => Uint8Array | Promise<Uint8Array> | undefined;
  readonly [CLIENT_GONE]: () => boolean;
  private controller: AbortController | undefined = undefined;

  constructor(
    req: IncomingMessage,
    readonly path: string,
    limit: number,
    private readonly res: ServerResponse,
  ) {
    this.method = req.method ?? '';
    this.headers = req.headers;
    this.readBody = (signal) => readNodeBody(req, limit, signal);
    this[ARRIVED_BODY] = () => arrivedNodeBody(req, limit);
    // Gone: the answer not written and the response closed (the connection closed under it),
    // or the connection already destroyed (a request waiting behind another on it).
    this[CLIENT_GONE] = () => !res.writableFinished && (res.destroyed || req.socket?.destroyed === true);
  }

  /**
   * Made only when something asks for it (a table in work listens to it): most requests
   * never do, and an AbortController with its close listener per request was a twentieth
   * of the event loop's time under load.
   */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const made = new AbortController();
      this.controller = made;
      if (this[CLIENT_GONE]()) made.abort();
      else {
        const res = this.res;
        res.once('close', () => {
          if (!res.writableFinished) made.abort();
        });
      }
    }
    return this.controller.signal;
  }
}
