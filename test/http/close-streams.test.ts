// handler.close() and streamed table answers, over real HTTP behind every shim: a large table
// being read while close() is called arrives whole before close resolves; one whose reader has
// stalled is cut at close's time limit, and close resolves; requests during close get 503.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
// The built package: from the sources a table answer is made whole (no table worker file to
// stream from), and a framework takes a whole answer into its own buffers at once.
import { openDataset, type Dataset } from '../../dist/index.js';
import { createCrosstabHandler, type CrosstabHandler } from '../../dist/http/index.js';
import { makeKeyFile, shims, tempDir, type RunningShim, type TestKeys } from './support.js';

const paths = inject('testDatasets');
let gss: Dataset;
let keys: TestKeys;
let dir: string;

/** Every respondent by year and sex: about 24 MB of JSON, far more than the socket buffers hold. */
const LARGE = { SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Variable: 'id' }], Columns: [{ Variable: 'year' }, { Variable: 'sex' }], Statistics: ['vpct', 'hpct'] };

beforeAll(async () => {
  gss = await openDataset(paths.gss);
  dir = tempDir('crosstab-close-streams-');
  keys = await makeKeyFile(dir);
});
afterAll(() => gss.close());

interface OpenAnswer {
  res: IncomingMessage;
  /** Content-Length. */
  length: number;
  /** Bytes received so far. */
  received: () => number;
  /** Resolves when the response has ended (whole) or was cut: with the body received. */
  settled: Promise<{ whole: boolean; body: Buffer }>;
}

/** A POST /tables whose response is paused once its first bytes arrive (the client stops reading). */
function openTable(origin: string, key: string): Promise<OpenAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}/v1/tables`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': key }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      let ended = false;
      const settled = new Promise<{ whole: boolean; body: Buffer }>((done) => {
        res.on('end', () => (ended = true));
        // 'close' comes after 'end' for a whole body, alone (or after 'aborted'/'error') for a cut one.
        res.on('close', () => done({ whole: ended, body: Buffer.concat(chunks) }));
        res.on('error', () => {});
      });
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        bytes += chunk.length;
      });
      res.once('data', () => {
        res.pause();
        resolve({ res, length: Number(res.headers['content-length']), received: () => bytes, settled });
      });
      if (res.statusCode !== 200) reject(new Error(`POST /v1/tables answered ${res.statusCode}`));
    });
    req.on('error', reject);
    req.end(JSON.stringify(LARGE));
  });
}

async function docsStatus(origin: string): Promise<{ status: number; code?: string }> {
  const response = await fetch(`${origin}/v1/docs`);
  const body = (await response.json()) as { error?: { code: string } };
  return { status: response.status, ...(body.error === undefined ? {} : { code: body.error.code }) };
}

// Every shim: each asks for streams (Hono under @hono/node-server too).
describe.each(shims)('handler.close() with table answers in flight over $name', (shim) => {
  let handler: CrosstabHandler;
  let server: RunningShim;
  const log: Array<Record<string, unknown>> = [];

  async function start(): Promise<void> {
    log.length = 0;
    handler = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: join(dir, `${shim.name.replace(/\W+/g, '-')}-${Date.now()}.ndjson`), log: (entry) => log.push(entry as never) });
    server = await shim.start(handler);
  }
  afterAll(async () => {
    await server?.close();
  });

  it('delivers a large table being read whole before close() resolves, and refuses new requests meanwhile', async () => {
    await start();
    const answer = await openTable(server.origin, keys.all);
    let closed = false;
    const closing = handler.close({ timeoutMs: 600_000 }).then(() => (closed = true));
    // A request made during close is refused, the documented way.
    expect(await docsStatus(server.origin)).toEqual({ status: 503, code: 'unavailable' });
    // The answer is still held for its reader: close has not resolved.
    expect(closed).toBe(false);
    expect(answer.received()).toBeLessThan(answer.length);
    answer.res.resume();
    const { whole, body } = await answer.settled;
    expect(whole).toBe(true);
    expect(body.byteLength).toBe(answer.length);
    // Whole and well-formed: the JSON parses (a cut answer would not).
    expect(() => JSON.parse(body.toString('utf8'))).not.toThrow();
    await closing;
    expect(closed).toBe(true);
    expect(handler.stats?.answersCut).toBe(0);
    await server.close();
  });

  it('cuts a table whose reader stalled at the close time limit, and resolves', async () => {
    await start();
    const answer = await openTable(server.origin, keys.all);
    await handler.close({ timeoutMs: 200 });
    // A reader that reads again finds the answer cut short.
    answer.res.resume();
    const { whole, body } = await answer.settled;
    expect(whole).toBe(false);
    expect(body.byteLength).toBeLessThan(answer.length);
    expect(handler.stats?.answersCut).toBe(1);
    const closedLine = log.find((entry) => entry['event'] === 'handler_closed')?.['message'] as string;
    expect(closedLine).toMatch(/1 answers cut at the close time limit \(after \d+ ms\)/);
    expect(Number(/after (\d+) ms/.exec(closedLine)![1])).toBeGreaterThanOrEqual(200);
    await server.close();
  });
});

describe('handler.close() options', () => {
  it('refuses a time limit that is not a whole number of milliseconds', async () => {
    const handler = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: join(dir, 'options.ndjson') });
    await expect(handler.close({ timeoutMs: -1 })).rejects.toMatchObject({ code: 'invalid_option', message: expect.stringMatching(/^timeoutMs /) });
    await expect(handler.close({ timeoutMs: 1.5 })).rejects.toMatchObject({ code: 'invalid_option' });
    await handler.close();
  });
});
