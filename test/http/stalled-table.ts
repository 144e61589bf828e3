// The table the bound on answer bytes in flight is tested with, and its answer's size, for the
// tests that hold such answers unread over HTTP/1.1 and HTTP/2.
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Dataset } from '../../dist/index.js';
import { createCrosstabHandler } from '../../dist/http/index.js';

/** Every respondent by sex with every per-cell statistic: about 5.7 MB of JSON, more than loopback's socket buffers take from a client that does not read (about 3.8 MB here). */
export const STALLED_TABLE = { SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Variable: 'id' }], Columns: [{ Variable: 'sex' }], Statistics: ['vpct', 'hpct', 'tpct', 'index', 'ebase', 'deff', 'se', 'moe'] };

/** STALLED_TABLE's answer size in bytes, asked of a handler of its own (its ledger in `dir`). */
export async function stalledTableSize(gss: Dataset, keysPath: string, apiKey: string, dir: string): Promise<number> {
  const probe = await createCrosstabHandler({ datasets: [gss], keys: keysPath, usage: join(dir, 'probe.ndjson') });
  try {
    const answer = await probe.handle({ method: 'POST', path: '/v1/tables', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey }, body: JSON.stringify(STALLED_TABLE) });
    expect(answer.status).toBe(200);
    return (answer.body as Uint8Array).byteLength;
  } finally {
    await probe.close();
  }
}
