// The bound on table answer bytes in flight (maxTableBytesInFlight, serve's
// --max-table-bytes-in-flight) over real HTTP behind every shim, Hono under @hono/node-server
// included: a streamed answer whose client has stopped reading holds its window of the bound
// until the socket has taken it, so once as many such answers as the bound holds are open the
// next table is refused 503 with Retry-After and not billed; read, they arrive whole, and
// tables fit again. (A shim that collected the answer whole gave the bound back before sending.)
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
// The built package: from the sources a table answer is made whole (no table worker file to
// stream from), and takes all its bytes of the bound, not a stream's window.
import { openDataset, STREAM_BYTES_IN_FLIGHT, type Dataset } from '../../dist/index.js';
import { createCrosstabHandler, type CrosstabHandler } from '../../dist/http/index.js';
import { STALLED_TABLE, stalledTableSize } from './stalled-table.js';
import { makeKeyFile, readLedger, shims, tempDir, type RunningShim, type TestKeys } from './support.js';

const paths = inject('testDatasets');

const TABLE = STALLED_TABLE;

let gss: Dataset;
let keys: TestKeys;
let dir: string;
/** The answer's size. */
let size: number;

beforeAll(async () => {
  gss = await openDataset(paths.gss);
  dir = tempDir('crosstab-bytes-in-flight-');
  keys = await makeKeyFile(dir);
  size = await stalledTableSize(gss, keys.path, keys.all, dir);
}, 120_000);
afterAll(() => gss?.close());

/** Streamed answers whose windows the bound (the answer's size) holds at once. */
const heldAnswers = (): number => Math.floor(size / STREAM_BYTES_IN_FLIGHT);

interface HeldAnswer {
  res: IncomingMessage;
  /** Resolves with the bytes received once the response has ended. */
  rest(): Promise<number>;
}

/** A POST /tables: a 200 is paused once its first bytes arrive (the client stops reading); any other status is read whole. */
function postTable(origin: string, key: string): Promise<{ status: number; headers: IncomingMessage['headers']; held?: HeldAnswer; body?: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}/v1/tables`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': key }, agent: false }, (res) => {
      let bytes = 0;
      const chunks: Buffer[] = [];
      const ended = new Promise<number>((done, fail) => {
        res.on('end', () => done(bytes));
        res.on('error', fail);
      });
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (res.statusCode !== 200) chunks.push(chunk);
      });
      if (res.statusCode !== 200) {
        void ended.then(() => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }), reject);
        return;
      }
      res.once('data', () => {
        res.pause();
        resolve({
          status: 200,
          headers: res.headers,
          held: {
            res,
            rest: () => {
              res.resume();
              return ended;
            },
          },
        });
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(TABLE));
  });
}

describe.each(shims)('maxTableBytesInFlight over $name', (shim) => {
  let handler: CrosstabHandler;
  let server: RunningShim;
  let ledger: string;

  beforeAll(async () => {
    ledger = join(dir, `${shim.name.replace(/\W+/g, '-')}.ndjson`);
    // Room for `held` streamed answers' windows, not one more; any answer fits alone. A streamed
    // answer keeps its table thread until it is sent: one thread per held answer, and one more.
    handler = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: ledger, tableLimits: { answerBytes: size }, maxTableBytesInFlight: size, tableWorkers: { threads: heldAnswers() + 1 } });
    server = await shim.start(handler);
  });
  afterAll(async () => {
    await server?.close();
    await handler?.close({ timeoutMs: 0 });
  });

  it('holds a stalled answer in the bound until it is sent: the table past the bound is refused 503, unbilled; read, they arrive whole and tables fit again', async () => {
    const held = heldAnswers();
    expect(held).toBeGreaterThanOrEqual(2);
    const open: HeldAnswer[] = [];
    for (let i = 0; i < held; i++) {
      const answer = await postTable(server.origin, keys.all);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-length']).toBe(String(size));
      open.push(answer.held!);
    }
    const refused = await postTable(server.origin, keys.gss);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.body!).error).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/as many table answers as it holds at once/) });
    expect(readLedger(ledger).filter((line) => line['operation'] === 'table')).toHaveLength(held);
    // Read to their ends: each whole, and their bytes given back.
    expect(await Promise.all(open.map((answer) => answer.rest()))).toEqual(open.map(() => size));
    const again = await postTable(server.origin, keys.gss);
    expect(again.status).toBe(200);
    expect(await again.held!.rest()).toBe(size);
    expect(readLedger(ledger).filter((line) => line['operation'] === 'table')).toHaveLength(held + 1);
  }, 180_000);
});
