// A request that meets a fault of a served dataset file (here: written over in place under a
// lazily opened dataset) is a 500 that names nothing of the server's files, and the access log
// line says which file and what is wrong (the engine's code and message), not only "internal".
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addApiKey, createCrosstabHandler, listen, type AccessLogEntry, type RunningServer } from '../../src/http/index.js';
import { openDataset, type Dataset } from '../../src/index.js';
import { WAVE_QUERY, writeWave } from '../support/survey-waves.js';
import { tempDir } from './support.js';

let server: RunningServer;
let dataset: Dataset;
let apiKey: string;
let served: string;
let other: string;
const entries: AccessLogEntry[] = [];

beforeAll(async () => {
  const dir = tempDir('crosstab-fault-log-');
  served = join(dir, 'waves.arrow');
  copyFileSync(await writeWave(20_000), served);
  other = await writeWave(24_000);
  apiKey = (await addApiKey(join(dir, 'keys.json'), { surveys: ['_ALL_'], groups: ['_ALL_'], name: 'fault' })).apiKey;
  dataset = await openDataset(served, { cellCache: 0 });
  const handler = await createCrosstabHandler({ datasets: [dataset], keys: join(dir, 'keys.json'), usage: join(dir, 'usage.ndjson'), log: (entry) => void ('status' in entry && entries.push(entry)) });
  server = await listen(handler, { port: 0 });
});
afterAll(async () => {
  await server?.close();
  await dataset?.close();
});

describe('a served dataset file that cannot be read', () => {
  it('is a 500 naming no file to the client, and the log line names the file and the fault', async () => {
    copyFileSync(other, served);
    const response = await fetch(`${server.url}/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey }, body: JSON.stringify(WAVE_QUERY) });
    const text = await response.text();
    expect(response.status).toBe(500);
    expect(text).not.toContain('waves.arrow');
    const entry = entries.find((candidate) => candidate.status === 500);
    expect(entry?.code).toBe('internal');
    expect(entry?.error).toMatch(/^corrupt_dataset: .*waves\.arrow was written over in place after it was opened/);
  });
});
