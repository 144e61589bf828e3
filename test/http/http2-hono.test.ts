// Hono under @hono/node-server over HTTP/2 (h2c, a node:http2 client): the request body and
// the table answers are bounded as over HTTP/1.1. A body past maxBodyBytes is refused 413
// whether it declares its length or not, without being collected; a streamed table answer
// whose client stops reading holds its window of maxTableBytesInFlight until HTTP/2 flow
// control lets it go, so the table past the bound is refused 503 and not billed; read, the
// answers arrive whole. No answer carries HTTP/1.1's Connection header.
import { serve as honoServe } from '@hono/node-server';
import { Hono } from 'hono';
import { connect, createServer, type ClientHttp2Session, type ClientHttp2Stream, type Http2Server, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
// The built package: from the sources a table answer is made whole (no table worker file to
// stream from), and takes all its bytes of the bound, not a stream's window.
import { openDataset, STREAM_BYTES_IN_FLIGHT, type Dataset } from '../../dist/index.js';
import { createCrosstabHandler, crosstabHono, type CrosstabHandler } from '../../dist/http/index.js';
import { STALLED_TABLE, stalledTableSize } from './stalled-table.js';
import { makeKeyFile, readLedger, tempDir, type TestKeys } from './support.js';

const paths = inject('testDatasets');

const TABLE = STALLED_TABLE;
const MAX_BODY_BYTES = 1024;

let gss: Dataset;
let keys: TestKeys;
let dir: string;
let size: number;
let handler: CrosstabHandler;
let server: Http2Server;
let origin: string;
let ledger: string;
const sessions: ClientHttp2Session[] = [];
const warnings: Error[] = [];
const onWarning = (warning: Error): void => void warnings.push(warning);

beforeAll(async () => {
  process.on('warning', onWarning);
  gss = await openDataset(paths.gss);
  dir = tempDir('crosstab-http2-');
  keys = await makeKeyFile(dir);
  size = await stalledTableSize(gss, keys.path, keys.all, dir);
  ledger = join(dir, 'usage.ndjson');
  handler = await createCrosstabHandler({
    datasets: [gss],
    keys: keys.path,
    usage: ledger,
    maxBodyBytes: MAX_BODY_BYTES,
    tableLimits: { answerBytes: size },
    maxTableBytesInFlight: size,
    tableWorkers: { threads: Math.floor(size / STREAM_BYTES_IN_FLIGHT) + 1 },
  });
  const app = new Hono();
  app.use(crosstabHono(handler));
  server = await new Promise<Http2Server>((resolve) => {
    const listening = honoServe({ fetch: app.fetch, port: 0, hostname: '127.0.0.1', createServer }, () => resolve(listening as Http2Server)) as Http2Server;
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  process.off('warning', onWarning);
  for (const session of sessions) session.destroy();
  await new Promise((resolve) => server?.close(resolve));
  await handler?.close({ timeoutMs: 0 });
  await gss?.close();
});

/** One request on its own HTTP/2 connection (flow control is per connection too). */
function open(headers: Record<string, string>): ClientHttp2Stream {
  const session = connect(origin);
  session.on('error', () => {});
  sessions.push(session);
  const stream = session.request(headers);
  stream.on('error', () => {});
  return stream;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  stream: ClientHttp2Stream;
}

const responded = (stream: ClientHttp2Stream): Promise<Answer> =>
  new Promise((resolve, reject) => {
    stream.once('response', (headers) => resolve({ status: Number(headers[':status']), headers, stream }));
    stream.once('close', () => reject(new Error(`the stream closed without an answer (code ${stream.rstCode})`)));
  });

const text = (stream: ClientHttp2Stream): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.once('error', reject);
  });

const bytes = (stream: ClientHttp2Stream): Promise<number> =>
  new Promise((resolve, reject) => {
    let count = 0;
    stream.on('data', (chunk: Buffer) => (count += chunk.length));
    stream.once('end', () => resolve(count));
    stream.once('error', reject);
  });

describe('Hono under @hono/node-server over HTTP/2', () => {
  it('answers a crosstab, the same as over HTTP/1.1', async () => {
    const body = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] });
    const stream = open({ ':method': 'POST', ':path': '/v1/crosstab', 'content-type': 'application/json', 'service-engine-authorizer': keys.all });
    stream.end(body);
    const answer = await responded(stream);
    const got = JSON.parse(await text(stream)) as { ResultCode: number };
    expect(answer.status, JSON.stringify(got)).toBe(200);
    const direct = await handler.handle({ method: 'POST', path: '/v1/crosstab', headers: { 'content-type': 'application/json', 'service-engine-authorizer': keys.all }, body });
    expect(got).toEqual(JSON.parse(Buffer.from(direct.body as Uint8Array).toString('utf8')));
  });

  it.each([
    ['declaring its length', true],
    ['without a content-length (DATA frames until END_STREAM)', false],
  ])('refuses a body past maxBodyBytes %s with 413, without reading it all', async (_name, declared) => {
    const body = Buffer.alloc(4 * 1024 * 1024, 0x20);
    const stream = open({
      ':method': 'POST',
      ':path': '/v1/crosstab',
      'content-type': 'application/json',
      'service-engine-authorizer': keys.all,
      ...(declared ? { 'content-length': String(body.length) } : {}),
    });
    let sent = 0;
    // Sent a chunk at a time as flow control allows: the server stops taking them once it has refused.
    const writing = (async () => {
      for (let at = 0; at < body.length && !stream.destroyed && !stream.closed; at += 16_384) {
        if (!stream.write(body.subarray(at, at + 16_384))) await new Promise((resolve) => { stream.once('drain', resolve); stream.once('close', resolve); });
        sent = at + 16_384;
      }
    })();
    const answer = await responded(stream);
    expect(answer.status).toBe(413);
    expect(JSON.parse(await text(stream))).toMatchObject({ error: { code: 'payload_too_large' } });
    await Promise.race([writing, new Promise((resolve) => setTimeout(resolve, 2000))]);
    expect(sent).toBeLessThan(body.length);
    // No Connection header on HTTP/2 (node would warn on every such answer and drop it).
    expect(answer.headers['connection']).toBeUndefined();
    expect(warnings.filter((warning) => /connection header/i.test(warning.message))).toEqual([]);
  });

  it('holds a stalled table answer in maxTableBytesInFlight: the table past the bound is refused 503, unbilled; read, they arrive whole', async () => {
    const held = Math.floor(size / STREAM_BYTES_IN_FLIGHT);
    expect(held).toBeGreaterThanOrEqual(2);
    const post = (key: string): ClientHttp2Stream => {
      const stream = open({ ':method': 'POST', ':path': '/v1/tables', 'content-type': 'application/json', 'service-engine-authorizer': key });
      stream.end(JSON.stringify(TABLE));
      return stream;
    };
    const open200: Answer[] = [];
    for (let i = 0; i < held; i++) {
      const answer = await responded(post(keys.all));
      expect(answer.status).toBe(200);
      expect(answer.headers['content-length']).toBe(String(size));
      // Not read: HTTP/2 flow control stops the server once the client's window is full.
      answer.stream.pause();
      open200.push(answer);
    }
    const refused = await responded(post(keys.gss));
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(await text(refused.stream)).error).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/as many table answers as it holds at once/) });
    expect(readLedger(ledger).filter((line) => line['operation'] === 'table')).toHaveLength(held);
    expect(await Promise.all(open200.map((answer) => { const count = bytes(answer.stream); answer.stream.resume(); return count; }))).toEqual(open200.map(() => size));
    const again = await responded(post(keys.gss));
    expect(again.status).toBe(200);
    expect(await bytes(again.stream)).toBe(size);
  }, 180_000);
});
