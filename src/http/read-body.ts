import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

const EMPTY = new Uint8Array(0);

/**
 * A request body as a shim hands it to the handler: bytes, or the request's own stream (a
 * node:http request, or a fetch body), which the handler reads only when and as far as it needs.
 */
export type RequestBody = Uint8Array | string | Readable | ReadableStream<Uint8Array>;

/** A node stream with the request's headers when it is a node:http request. */
type NodeBody = Readable & { headers?: IncomingHttpHeaders };

function declaredTooLarge(contentLength: string | null | undefined, limit: number): boolean {
  return contentLength != null && Number(contentLength) > limit;
}

/**
 * Reads at most `limit + 1` bytes of a node:http request body: enough for the handler to
 * answer 413 without buffering an oversized upload. The rest is not read: the response then
 * carries `Connection: close` (sendNodeResponse) and the connection ends with it. Rejects
 * when the client goes away before the body's end.
 */
export function readNodeBody(request: NodeBody, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => readNodeBodyThen(request, limit, resolve, reject));
}

/** readNodeBody with callbacks: `done` is called once with the body, or `failed` with the stream's error. */
export function readNodeBodyThen(request: NodeBody, limit: number, done: (body: Uint8Array) => void, failed: (error: Error) => void): void {
  // Already consumed (a body parser ran first): nothing left to read; do not wait for 'end'.
  if (request.readableEnded || declaredTooLarge(request.headers?.['content-length'], limit)) {
    done(EMPTY);
    return;
  }
  if (request.destroyed) {
    failed(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
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
  // An error after the body was handed on (a client gone mid-upload of an oversized body) is not ours.
  request.on('error', fail);
  // Closed without 'end' or 'error' (a destroyed stream): the body will never arrive.
  request.on('close', () => fail(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
}

/** Reads at most `limit + 1` bytes of a fetch body stream; rejects when the stream fails (the client went away). */
async function readWebStream(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit + 1);
}

/** Reads at most `limit + 1` bytes of a fetch `Request` body (Hono and other web-standard frameworks). */
export async function readWebBody(request: Request, limit: number): Promise<Uint8Array> {
  if (request.body === null) return EMPTY;
  if (declaredTooLarge(request.headers.get('content-length'), limit)) {
    await request.body.cancel().catch(() => {});
    return EMPTY;
  }
  return readWebStream(request.body, limit);
}

/**
 * The first `limit + 1` bytes of a RequestBody (bytes and strings as they are). Rejects when
 * the client goes away before the body's end.
 */
export function readRequestBody(body: RequestBody | undefined, limit: number): Promise<Uint8Array | string> {
  if (body === undefined) return Promise.resolve(EMPTY);
  if (typeof body === 'string' || body instanceof Uint8Array) return Promise.resolve(body);
  if ('getReader' in body) return readWebStream(body, limit);
  return readNodeBody(body, limit);
}

/**
 * A fetch body stream that reads `source` only when it is read itself (no read-ahead), and
 * calls `ended` once the source's end was read.
 */
export function watchEnd(source: ReadableStream<Uint8Array>, ended: () => void): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        ended();
        controller.close();
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}
