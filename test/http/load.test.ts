// Bounded load on loopback, and what happens to billing when the server dies or drains
// in the middle of it. Every 200 a client received must be in the ledger; after a graceful
// shutdown the ledger holds exactly the 200s received.
import autocannon from 'autocannon';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen } from '../../src/http/index.js';
import { CLI, startServe } from './serve-child.js';
import { makeKeyFile, readLedger, tempDir, type TestKeys } from './support.js';

const BODY = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2', 'degree=3..4'] });

function loadRequest(key: string, okIds: string[]) {
  return {
    method: 'POST',
    path: '/v1/crosstab',
    headers: { 'content-type': 'application/json', 'service-engine-authorizer': key },
    body: BODY,
    onResponse: (status: number, _body: string, _context: unknown, headers: Record<string, string>) => {
      if (status === 200) okIds.push(headers['x-request-id'] as string);
    },
  };
}

const paths = inject('testDatasets');
let keys: TestKeys;
let dir: string;

beforeAll(async () => {
  dir = tempDir();
  keys = await makeKeyFile(dir);
});

describe('bounded load (autocannon, 10 connections, 6,000 requests, in-process node:http)', () => {
  let dataset: Dataset;
  afterAll(() => dataset?.close());

  it('answers every request with 200 and bills exactly the 200s', async () => {
    dataset = await openDataset(paths.gss);
    const ledger = join(dir, 'load.ndjson');
    const handler = await createCrosstabHandler({ datasets: [dataset], keys: keys.path, usage: ledger });
    const server = await listen(handler, { port: 0 });
    const okIds: string[] = [];
    // A fixed amount, not a duration: autocannon then waits for every answer instead of
    // abandoning the last in-flight requests, so client and ledger counts can be compared.
    const result = await autocannon({ url: server.url.replace(/\/v1$/, ''), connections: 10, amount: 6000, requests: [loadRequest(keys.all, okIds)] });
    await server.close();
    expect(result.errors).toBe(0);
    expect(result.timeouts).toBe(0);
    expect(result.non2xx).toBe(0);
    expect(result['2xx']).toBe(6000);
    const records = readLedger(ledger);
    expect(records.length).toBe(result['2xx']);
    expect(new Set(records.map((record) => record.requestId))).toEqual(new Set(okIds));
  });
});

describe('crash and drain of a `crosstab serve` child process', () => {
  beforeAll(() => {
    expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
  });

  const serveLedger = (ledger: string) => startServe(['--dataset', paths.gss, '--keys', keys.path, '--port', '0', '--ledger', ledger]);

  it('SIGKILL mid-load: the ledger holds a record for every 200 the client received', async () => {
    const ledger = join(dir, 'killed.ndjson');
    const { child, origin, exited } = await serveLedger(ledger);
    const okIds: string[] = [];
    const load = autocannon({ url: origin, connections: 10, duration: 3, timeout: 2, requests: [loadRequest(keys.all, okIds)] });
    setTimeout(() => child.kill('SIGKILL'), 1500);
    const result = await load;
    expect(await exited).toBe(null);
    expect(result['2xx']).toBeGreaterThan(20);
    expect(result['5xx']).toBe(0);
    const billed = new Set(readLedger(ledger).map((record) => record.requestId));
    const unbilled = okIds.filter((id) => !billed.has(id));
    expect(unbilled).toEqual([]);
    expect(billed.size).toBeGreaterThanOrEqual(result['2xx']);
  });

  it('SIGTERM mid-load: in-flight requests drain and the ledger equals the 200s received', async () => {
    const ledger = join(dir, 'drained.ndjson');
    const { child, origin, exited } = await serveLedger(ledger);
    const okIds: string[] = [];
    const load = autocannon({ url: origin, connections: 10, duration: 3, timeout: 2, requests: [loadRequest(keys.all, okIds)] });
    setTimeout(() => child.kill('SIGTERM'), 1500);
    const result = await load;
    expect(await exited).toBe(0);
    expect(result['2xx']).toBeGreaterThan(20);
    expect(result['5xx']).toBe(0);
    const records = readLedger(ledger);
    expect(records.length).toBe(result['2xx']);
    expect(new Set(records.map((record) => record.requestId))).toEqual(new Set(okIds));
  });
});
