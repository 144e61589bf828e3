import { createServer, STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AddressInfo, Socket } from 'node:net';
import { applyConnectionLimits, resolveConnectionLimits, type ConnectionLimits, type ConnectionObserver } from './connection-limits.js';
import type { CrosstabHandler } from './handler.js';
import { createNodeListener } from './node-shim.js';
import { errorBody, serviceError, statusOf } from './service-error.js';

/** Time allowed for a whole request (headers and body) to arrive; bounds slow clients. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * How long a kept-alive connection may stay idle (sent to clients as `Keep-Alive: timeout=5`).
 * A proxy must close its idle connections sooner (deploy/nginx.conf: 4 s).
 */
const KEEP_ALIVE_TIMEOUT_MS = 5000;

/** Answers requests node:http cannot parse with the service's error body instead of a bare 400. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const problem =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? serviceError('request_header_too_large', 'The request headers are too large.', 'Send only the headers the API needs: Content-Type and Service-Engine-Authorizer.')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? serviceError('request_timeout', `The request did not arrive within ${REQUEST_TIMEOUT_MS / 1000} s.`, 'Send the whole request at once.')
        : serviceError('invalid_request', 'The request is not valid HTTP/1.1.', 'Send a well-formed HTTP request; a body needs Content-Length or chunked Transfer-Encoding.');
  const status = statusOf(problem);
  const body = JSON.stringify(errorBody(problem));
  const reason = STATUS_CODES[status] ?? 'Error';
  // Close the socket once the answer is out: after end() alone it would stay half-open (and hold
  // a descriptor) for as long as the peer does not close its side.
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`, () => socket.destroy());
}

/** Requests on a connection whose answer's status line is not out yet (see listen()). */
const UNANSWERED = Symbol('unanswered');
/** The connection's latest response (see listen()'s idle timeout). */
const RESPONSE = Symbol('response');
type Counted = Socket & { [UNANSWERED]?: number; [RESPONSE]?: ServerResponse };

/**
 * The idle timeout's verdict on a connection: cut it if the client is the slow side (sends no
 * request, or stops reading an answer), leave it if the server is. Never while an answer is being
 * made (counted by UNANSWERED); nor while a streamed answer with nothing queued on the socket
 * waits on its own maker (a table thread): the next write re-arms the timer. The timer is due
 * before this turn's I/O, so after a stall of the server's own process (a long pause, a starved
 * CPU) the client may have sent its request, or taken the bytes queued, meanwhile: the verdict is
 * given two turns of the event loop later, once that I/O and its callbacks have run, and any
 * progress since the timer fired re-arms it instead.
 */
function onIdle(socket: Counted): void {
  const read = socket.bytesRead;
  const queued = socket.writableLength;
  const writing = writeQueueSize(socket);
  setImmediate(() =>
    setImmediate(() => {
      if (socket.destroyed || (socket[UNANSWERED] ?? 0) > 0) return;
      if (socket.bytesRead !== read || socket.writableLength !== queued || writeQueueSize(socket) !== writing) {
        socket.setTimeout(socket.timeout ?? 0);
        return;
      }
      const response = socket[RESPONSE];
      if (queued === 0 && response !== undefined && !response.writableFinished && !response.destroyed) return;
      socket.destroy();
    }),
  );
}

/** Bytes libuv still holds of the socket's current write (node:net's own idle check reads it too); -1 if unknown. */
function writeQueueSize(socket: Duplex): number {
  return (socket as { _handle?: { writeQueueSize?: number } })._handle?.writeQueueSize ?? -1;
}

/** Options of listen(): where to listen, and the connection limits that keep descriptors free. */
export interface ListenOptions extends ConnectionLimits {
  /** TCP port; 0 = any free port. */
  port: number;
  /** Interface to listen on. Default 127.0.0.1. */
  host?: string;
  /** Counts open and refused connections (ServiceMetrics.connections), and is told of the drain. */
  metrics?: { connections: ConnectionObserver; draining: boolean };
}

export interface RunningServer {
  readonly server: Server;
  /** e.g. `http://127.0.0.1:8080/v1`. */
  readonly url: string;
  readonly port: number;
  /**
   * Graceful shutdown: stops accepting connections; answers every request that still
   * arrives on an open connection (in flight, or sent later on a kept-alive one) with
   * `Connection: close`, and closes each connection after that answer; leaves idle kept-alive
   * connections to their keep-alive timeout (5 s) or to the client; then closes the handler.
   * `graceMs` (default 10,000) is the one deadline of the whole shutdown, the handler's close
   * included: a streamed table answer still being sent then is cut by the handler (counted in
   * `handler.stats.answersCut`), and every connection still open is cut.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Serves the handler with node:http on `host:port` (port 0 = any free port), with bounded
 * connections (see ConnectionLimits). For the open internet, put a reverse proxy in front
 * (docs/http.md). Rejects with CrosstabError `invalid_option` for a bad limit.
 */
export async function listen(handler: CrosstabHandler, options: ListenOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const limits = resolveConnectionLimits(options);
  let draining = false;
  // Connections with a request in work: the idle timeout never cuts them while an answer is
  // being made (a table may take longer to compute than the idle timeout; nothing is sent
  // meanwhile). Once an answer's status line is out, it applies again: a client that stops
  // reading a large answer is cut after that long without progress, and the worker streaming
  // the answer to it is freed for others (onIdle: never for the server's own slowness).
  // Counted on the connection (requests in, answers out), not with a close listener and a set
  // per request.
  const listener = createNodeListener(handler, {
    closeConnections: () => draining,
    answered: (req) => void ((req.socket as Counted)[UNANSWERED]! -= 1),
  });
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, headersTimeout: 10_000, requestTimeout: REQUEST_TIMEOUT_MS }, (req, res) => {
    const socket = req.socket as Counted;
    socket[UNANSWERED] = (socket[UNANSWERED] ?? 0) + 1;
    socket[RESPONSE] = res;
    listener(req, res);
  });
  // With a listener, node:http no longer destroys a timed-out socket itself: onIdle does, unless an answer on it is still being made.
  // Open connections, for the shutdown deadline: those whose answer is still being made are cut then.
  const sockets = new Set<Counted>();
  server.on('connection', (socket: Counted) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('timeout', onIdle);
  server.on('clientError', answerClientError);
  const tooMany = serviceError('unavailable', 'Too many open connections from this address.', 'Reuse one keep-alive connection, or open fewer at a time.');
  applyConnectionLimits(server, limits, JSON.stringify(errorBody(tooMany)), options.metrics?.connections);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    server,
    url: `http://${shownHost}:${port}${handler.basePath}`,
    port,
    close(graceMs = 10_000) {
      closing ??= (async () => {
        draining = true;
        if (options.metrics !== undefined) options.metrics.draining = true;
        // Only the listening socket closes now: net.Server's close, not http.Server's, which
        // also closes every idle kept-alive connection. A client (a proxy's connection pool)
        // may be writing its next request on such a connection at that very moment; cut, the
        // request fails after it was sent, and a proxy must not retry a POST that may have
        // been billed. So every connection ends after an answer with `Connection: close`, or
        // idle: by the keep-alive timeout or by the client.
        const started = performance.now();
        const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
        let handlerClosed: Promise<void> | undefined;
        const cut = setTimeout(() => {
          // The deadline. The handler cuts the streamed answers still being sent (and counts
          // them); connections idle or whose answer is still being made are cut here (a table
          // in work stops: its client is gone); then whatever is left.
          handlerClosed = handler.close({ timeoutMs: 0, waitingSince: started });
          server.closeIdleConnections();
          for (const socket of sockets) if ((socket[UNANSWERED] ?? 0) > 0) socket.destroy();
          const closeRest = (): void => server.closeAllConnections();
          handlerClosed.then(closeRest, closeRest);
        }, graceMs);
        await closed;
        clearTimeout(cut);
        // Stops node:http's timer for request timeouts (no connection is left).
        server.close(() => {});
        await (handlerClosed ?? handler.close({ timeoutMs: Math.max(0, Math.round(graceMs - (performance.now() - started))) }));
      })();
      return closing;
    },
  };
}
