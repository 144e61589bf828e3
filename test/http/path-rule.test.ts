// One rule for percent-encoded paths on every mount: each segment is decoded once.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, type CrosstabHandler } from '../../src/http/index.js';
import { rawGet } from './raw-http.js';
import { makeKeyFile, shims, tempDir, type RunningShim } from './support.js';

const paths = inject('testDatasets');
let dataset: Dataset;
let dir: string;
let keyFile: string;
const handlers: CrosstabHandler[] = [];

/** A handler of its own for each mount: listen()'s close() closes the handler it serves. */
async function newHandler(): Promise<CrosstabHandler> {
  const handler = await createCrosstabHandler({ datasets: [dataset], keys: keyFile, usage: join(dir, `usage-${handlers.length}.ndjson`) });
  handlers.push(handler);
  return handler;
}

beforeAll(async () => {
  dir = tempDir();
  keyFile = (await makeKeyFile(dir)).path;
  dataset = await openDataset(paths.gss);
});
afterAll(async () => {
  for (const handler of handlers) await handler.close();
  dataset?.close();
});

describe.each(shims)('percent-encoded paths on $name', (shim) => {
  let running: RunningShim;
  let port: number;
  beforeAll(async () => {
    running = await shim.start(await newHandler());
    port = Number(new URL(running.origin).port);
  });
  afterAll(() => running?.close());

  it('decodes each segment once', async () => {
    const encoded = await rawGet(port, '/v1/%64ocs');
    expect(encoded.status).toBe(200);
    expect(JSON.parse(encoded.body)).toMatchObject({ openapi: '3.0.1' });
    // Decoded once only: %2564 is "%64", not "d".
    const twice = await rawGet(port, '/v1/%2564ocs');
    expect(twice.status).toBe(404);
    expect(JSON.parse(twice.body).error.code).toBe('not_found');
  });
});

describe('percent-encoded paths on node:http', () => {
  let running: RunningShim;
  let port: number;
  beforeAll(async () => {
    running = await (shims.find((candidate) => candidate.name === 'node:http') as (typeof shims)[number]).start(await newHandler());
    port = Number(new URL(running.origin).port);
  });
  afterAll(() => running?.close());

  it('decodes within segments, once, and resolves no dot segments', async () => {
    const cases: Array<[string, number]> = [
      ['/v1/%64%6F%63%73', 200],
      ['/%761/docs', 200],
      ['/v1/docs%2F', 404],
      ['/v1/%2Fdocs', 404],
      ['/v1/%zzdocs', 404],
      ['/v1/%C3%28', 404],
      ['/v1/x/../docs', 404],
      ['/v1/./docs', 404],
    ];
    for (const [target, status] of cases) {
      const answer = await rawGet(port, target);
      expect(answer.status, target).toBe(status);
      if (status === 404) expect(JSON.parse(answer.body).error.code, target).toBe('not_found');
    }
    // An unknown path is named as sent.
    expect(JSON.parse((await rawGet(port, '/v1/%64ocz')).body).error.message).toBe('No operation at "/v1/%64ocz".');
  });
});
