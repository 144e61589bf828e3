import type { IncomingMessage } from 'node:http';

const EMPTY = new Uint8Array(0);

function declaredTooLarge(contentLength: string | null | undefined, limit: number): boolean {
  return contentLength != null && Number(contentLength) > limit;
}

/**
 * Reads at most `limit + 1` bytes of a node:http request body: enough for the handler to
 * answer 413 without buffering an oversized upload. The rest is not read: the response then
 * carries `Connection: close` (sendNodeResponse) and the connection ends with it.
 */
export function readNodeBody(request: IncomingMessage, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => readNodeBodyThen(request, limit, resolve, reject));
}

/** readNodeBody with callbacks: `done` is called once with the body, or `failed` with the stream's error. */
export function readNodeBodyThen(request: IncomingMessage, limit: number, done: (body: Uint8Array) => void, failed: (error: Error) => void): void {
  // Already consumed (a body parser ran first): nothing left to read; do not wait for 'end'.
  if (request.readableEnded || declaredTooLarge(request.headers['content-length'], limit)) {
    done(EMPTY);
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
  request.on('error', (error) => {
    if (settled) return;
    settled = true;
    failed(error);
  });
}

/** Reads at most `limit + 1` bytes of a fetch `Request` body (Hono and other web-standard frameworks). */
export async function readWebBody(request: Request, limit: number): Promise<Uint8Array> {
  if (request.body === null) return EMPTY;
  if (declaredTooLarge(request.headers.get('content-length'), limit)) {
    await request.body.cancel().catch(() => {});
    return EMPTY;
  }
  const reader = request.body.getReader();
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
