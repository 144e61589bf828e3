import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { HandlerRequest } from './handler-types.js';

const EMPTY = new Uint8Array(0);

/** A node stream with the request's headers when it is a node:http request. */
type NodeBody = Readable & { headers?: IncomingHttpHeaders };

function declaredTooLarge(contentLength: string | null | undefined, limit: number): boolean {
  return contentLength != null && Number(contentLength) > limit;
}

function gone(): Error {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}

function stopped(): Error {
  return new Error('The request body was not read to its end: reading was aborted.');
}

/**
 * Reads at most `limit + 1` bytes of a node:http request body: enough for the handler to
 * answer 413 without buffering an oversized upload. The rest is not read: the response then
 * carries `Connection: close` (sendNodeResponse) and the connection ends with it. Rejects
 * when the client goes away before the body's end, or when `signal` aborts (reading stops).
 */
export function readNodeBody(request: NodeBody, limit: number, signal?: AbortSignal): Promise<Uint8Array> {
  return new Promise((resolve, reject) => readNodeBodyThen(request, limit, resolve, reject, signal));
}

/**
 * readNodeBody, when every byte of the body is in already: the parser holds as many as
 * Content-Length declares (at most `limit`), and nothing has read them. They are taken from
 * the stream's buffer at once (one read()) and returned as they are, so no timer, abort
 * signal, listener or promise is needed; node:http then finds the request read and keeps the
 * connection. Undefined otherwise.
 */
export function arrivedNodeBody(request: IncomingMessage, limit: number): Uint8Array | Promise<Uint8Array> | undefined {
  if (request.readableFlowing !== null || request.readableEnded || request.destroyed || request.headers['transfer-encoding'] !== undefined) return undefined;
  const declared = request.headers['content-length'];
  const length = request.readableLength;
  if (declared === undefined || length === 0 || length > limit || Number(declared) !== length) return undefined;
  // Paused with `length` bytes buffered: read() without a size hands over all of them.
  const bytes = request.read() as Buffer | string | null;
  if (bytes === null) return readNodeBody(request, limit);
  return typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
}

/**
 * readNodeBody with callbacks: `done` is called once with the body, or `failed` with the
 * stream's error, when the stream closes before its end, or when `signal` aborts (reading
 * then stops, the rest is left unread).
 */
export function readNodeBodyThen(request: NodeBody, limit: number, done: (body: Uint8Array) => void, failed: (error: Error) => void, signal?: AbortSignal): void {
  // Already consumed (a body parser ran first): nothing left to read; do not wait for 'end'.
  if (request.readableEnded || declaredTooLarge(request.headers?.['content-length'], limit)) {
    done(EMPTY);
    return;
  }
  if (request.destroyed) {
    failed(gone());
    return;
  }
  if (signal?.aborted) {
    failed(stopped());
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const finish = (body: Uint8Array): void => {
    if (settled) return;
    settled = true;
    done(body);
  };
  const fail = (error: Error): void => {
    if (settled) return;
    settled = true;
    failed(error);
  };
  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    size += chunk.length;
    if (size > limit) {
      request.off('data', onData);
      request.off('end', onEnd);
      request.pause();
      finish(Buffer.concat(chunks).subarray(0, limit + 1));
    }
  };
  const onEnd = (): void => finish(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
  request.on('data', onData);
  request.on('end', onEnd);
  // An error after the body was handed on (a client gone mid-upload of an oversized body) is not
  // ours, but the listener stays: an 'error' without one would reach the framework.
  request.on('error', fail);
  // Closed without 'end' or 'error' (a destroyed stream): the body will never arrive. Every
  // request closes once answered: the error (and its stack) is only made when it is needed.
  request.on('close', () => {
    if (!settled) fail(gone());
  });
  signal?.addEventListener(
    'abort',
    () => {
      if (settled) return;
      request.off('data', onData);
      request.off('end', onEnd);
      request.pause();
      fail(stopped());
    },
    { once: true },
  );
}

/**
 * Reads at most `limit + 1` bytes of a fetch body stream; rejects when the stream fails (the
 * client went away) or when `signal` aborts (the stream is then cancelled).
 */
export async function readWebStream(stream: ReadableStream<Uint8Array>, limit: number, signal?: AbortSignal): Promise<Uint8Array> {
  if (signal?.aborted) throw stopped();
  const reader = stream.getReader();
  const onAbort = (): void => void reader.cancel().catch(() => {});
  signal?.addEventListener('abort', onAbort, { once: true });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (signal?.aborted) throw stopped();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        break;
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  return Buffer.concat(chunks).subarray(0, limit + 1);
}

/**
 * Reads at most `limit + 1` bytes of a fetch `Request` body (Hono and other web-standard
 * frameworks); stops when `signal` aborts.
 */
export async function readWebBody(request: Request, limit: number, signal?: AbortSignal): Promise<Uint8Array> {
  if (request.body === null) return EMPTY;
  if (declaredTooLarge(request.headers.get('content-length'), limit)) {
    await request.body.cancel().catch(() => {});
    return EMPTY;
  }
  return readWebStream(request.body, limit, signal);
}

/**
 * The request with its body read (for code that needs `body`, such as the portal): a request
 * that offers `readBody` instead is read whole now (an empty body when the client is gone).
 */
export async function withBody(request: HandlerRequest): Promise<HandlerRequest> {
  if (request.body !== undefined || typeof request.readBody !== 'function') return request;
  const body = await request.readBody(new AbortController().signal).catch(() => EMPTY);
  const { readBody: _read, ...rest } = request;
  return { ...rest, body };
}
