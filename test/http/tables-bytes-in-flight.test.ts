// The global bound on table answer bytes held at once (maxTableBytesInFlight): a table whose
// answer does not fit beside those still being sent is refused 503 with Retry-After before its
// usage record (not billed); once the earlier answer is sent or cancelled, tables fit again.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, type CrosstabHandler, type HandlerRequest } from '../../src/http/index.js';
import { makeKeyFile, readLedger, tempDir, type TestKeys } from './support.js';

const paths = inject('testDatasets');
const TABLE = { SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Variable: 'id' }], Columns: [{ Variable: 'sex' }], Statistics: ['vpct'] };

describe('maxTableBytesInFlight', () => {
  let gss: Dataset;
  let keys: TestKeys;
  let ledger: string;
  let handler: CrosstabHandler;
  let size: number;

  const request = (key: string): HandlerRequest => ({ method: 'POST', path: '/v1/tables', headers: { 'content-type': 'application/json', 'service-engine-authorizer': key }, body: JSON.stringify(TABLE), streaming: true });

  beforeAll(async () => {
    gss = await openDataset(paths.gss);
    const dir = tempDir();
    keys = await makeKeyFile(dir);
    // The answer's size, from a handler without the bound.
    const probe = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: join(dir, 'probe.ndjson') });
    const answer = await probe.handle({ ...request(keys.all), streaming: false });
    expect(answer.status).toBe(200);
    size = (answer.body as Uint8Array).byteLength;
    await probe.close();
    ledger = join(dir, 'usage.ndjson');
    // Room for one such answer, not two.
    const bound = Math.floor(size * 1.5);
    handler = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: ledger, tableLimits: { answerBytes: bound }, maxTableBytesInFlight: bound });
  });
  afterAll(async () => {
    await handler?.close();
    gss?.close();
  });

  it('refuses a table that does not fit beside one being sent with 503 and Retry-After, unbilled; admits it once the first is sent', async () => {
    const first = await handler.handle(request(keys.all));
    expect(first.status).toBe(200);
    expect(first.stream?.byteLength).toBe(size);
    expect(first.headers['content-length']).toBe(String(size));
    // Another account's table while the first answer is still held (its stream not yet read).
    const second = await handler.handle(request(keys.gss));
    expect(second.status).toBe(503);
    expect(second.headers['retry-after']).toBe('1');
    expect(JSON.parse(second.body as string).error).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/table answers/) });
    expect(readLedger(ledger).filter((line) => line['operation'] === 'table')).toHaveLength(1);
    // The first answer sent: its bytes are given back, and the next table fits.
    let sent = 0;
    for await (const chunk of first.stream!) sent += chunk.byteLength;
    expect(sent).toBe(size);
    const third = await handler.handle(request(keys.gss));
    expect(third.status).toBe(200);
    // Cancelled (a client that left) gives them back too.
    third.stream!.cancel();
    const fourth = await handler.handle(request(keys.all));
    expect(fourth.status).toBe(200);
    fourth.stream!.cancel();
    expect(readLedger(ledger).filter((line) => line['operation'] === 'table')).toHaveLength(3);
  });

  it('refuses a bound below the largest answer', async () => {
    await expect(createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: ledger, tableLimits: { answerBytes: 2_000_000 }, maxTableBytesInFlight: 1_000_000 })).rejects.toMatchObject({ code: 'invalid_option', details: { field: 'maxTableBytesInFlight' } });
  });
});
