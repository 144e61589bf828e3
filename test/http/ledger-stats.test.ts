// The usage ledger's closing measurements as data (the event's `stats`), for benchmarks and
// monitoring, beside the sentence for people.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NdjsonLedger, type DurableWriteStats } from '../../src/http/index.js';

const dir = mkdtempSync(join(tmpdir(), 'ledger-stats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('NdjsonLedger closing stats', () => {
  it('hands the records, durable writes and write time to onEvent as an object, the same figures its message says', async () => {
    const path = join(dir, 'usage.ndjson');
    const closed: Array<{ message: string; stats: DurableWriteStats | undefined }> = [];
    const ledger = await NdjsonLedger.open(path, { onEvent: (event, message, stats) => event === 'ledger_closed' && closed.push({ message, stats }) });
    const records = Array.from({ length: 50 }, (_, i) => ({ time: new Date().toISOString(), requestId: `r${i}`, keyId: 'key_x', survey: 'GSS', targets: 1 }));
    await Promise.all(records.map((record) => ledger.record(record)));
    await ledger.close();
    expect(closed).toHaveLength(1);
    const { message, stats } = closed[0]!;
    expect(stats).toEqual({ records: 50, durableWrites: ledger.stats.flushes, writeMs: ledger.stats.writeMs });
    const perWrite = (stats!.records / stats!.durableWrites).toFixed(1);
    expect(message).toContain(`${stats!.records} records in ${stats!.durableWrites} durable writes (${perWrite} billed calls per durable write, ${Math.round((stats!.writeMs * 1000) / stats!.durableWrites)} µs`);
  });
});
