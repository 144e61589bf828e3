// DbUsageSink on both stores: the embedded database takes batches as COPY FROM STDIN, a
// PostgreSQL server as INSERT ... unnest. Either way a record resolves only once its row is
// committed, a failed batch inserts nothing and rejects every record in it, and the usage
// table has one index (migration 3).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DbUsageSink, openDatabase, type Database } from '../../src/access/index.js';
import type { UsageRecord } from '../../src/http/index.js';
import { tempDir } from '../http/support.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

let postgres: PostgresServer;
beforeAll(async () => {
  postgres = await startPostgres();
});
afterAll(() => postgres?.stop());

const stores: Array<[string, () => Promise<string>, number]> = [
  ['embedded PGlite', async () => newEmbeddedFolder(join(tempDir('crosstab-usage-sink-'), 'db')), 1],
  ['PostgreSQL server', async () => postgres.createDatabase(`usage_sink_${Date.now()}`), 4],
];

function usage(overrides: Partial<UsageRecord> = {}): UsageRecord {
  return { time: new Date().toISOString(), requestId: randomUUID(), keyId: 'key_1', survey: 'GSS', targets: 1, accountId: 'acc_1', ...overrides };
}

describe.each(stores)('DbUsageSink on %s', (_name, location, concurrency) => {
  let db: Database;
  const count = async (): Promise<number> => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM usage')).rows[0]!.n;

  beforeAll(async () => {
    db = await openDatabase(await location());
  });
  afterAll(async () => {
    await db?.close();
  });

  it('commits every record of concurrent callers, in few statements, before resolving them', async () => {
    const events: string[] = [];
    const sink = new DbUsageSink(db, concurrency, { onEvent: (event, message) => events.push(`${event}: ${message}`) });
    const before = await count();
    await Promise.all(Array.from({ length: 500 }, () => sink.record(usage())));
    expect(await count()).toBe(before + 500);
    expect(sink.stats.records).toBe(500);
    // The 500 records of one event-loop turn share statements.
    expect(sink.stats.commits).toBeLessThanOrEqual(concurrency);
    expect(sink.stats.commitMs).toBeGreaterThan(0);
    await sink.close();
    await sink.close(); // a second close waits for nothing and says nothing again
    const { commits, commitMs } = sink.stats;
    expect(events).toEqual([
      `usage_closed: Closed the usage sink: 500 rows in ${commits} statements (${(500 / commits).toFixed(1)} billed calls per durable write, ${Math.round((commitMs * 1000) / commits)} µs per write on average).`,
    ]);
  });

  it('flushes a record sent as soon as the previous one resolved, and one sent just before close()', async () => {
    const sink = new DbUsageSink(db, concurrency);
    const before = await count();
    for (let i = 0; i < 30; i++) await sink.record(usage());
    const last = sink.record(usage());
    await sink.close();
    await last;
    expect(await count()).toBe(before + 31);
    await expect(sink.record(usage())).rejects.toThrow(/closed/);
  });

  it('stores text with tabs, newlines, backslashes and quotes as it was given', async () => {
    const sink = new DbUsageSink(db, concurrency);
    const odd = usage({ survey: 'a\tb\nc\r\\N\\d\'e"f', keyId: 'key\\\t2', accountId: 'acc_ü\\' });
    await sink.record(odd);
    const { rows } = await db.query<{ survey: string; key_id: string; account_id: string; time: Date; targets: number }>(
      'SELECT survey, key_id, account_id, time, targets FROM usage WHERE request_id = $1',
      [odd.requestId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ survey: odd.survey, key_id: odd.keyId, account_id: odd.accountId, targets: 1 });
    expect(new Date(rows[0]!.time).toISOString()).toBe(odd.time);
    await sink.close();
  });

  it('rejects every record of a batch that fails, inserts none of it, and goes on with the next', async () => {
    const sink = new DbUsageSink(db, 1);
    const committed = usage();
    await sink.record(committed);
    const before = await count();
    // The same record again (what billing twice would be) and two others in the same batch.
    const batch = [usage(), { ...committed }, usage()].map((record) => sink.record(record));
    const outcomes = await Promise.allSettled(batch);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' });
    expect(await count()).toBe(before);
    await sink.record(usage());
    expect(await count()).toBe(before + 1);
    await sink.close();
  });

  it('stores a void record as a second row of the same request, with its reason', async () => {
    const sink = new DbUsageSink(db, concurrency);
    const billed = usage({ time: '2026-11-29T10:00:00.000Z', operation: 'table', targets: 3 });
    await sink.record(billed);
    await sink.record({ ...billed, time: '2026-11-29T10:00:00.001Z', void: true, reason: 'client_closed' });
    const rows = (await db.query<{ operation: string; targets: number; void_reason: string | null }>('SELECT operation, targets, void_reason FROM usage WHERE request_id = $1 ORDER BY time', [billed.requestId])).rows;
    expect(rows).toEqual([
      { operation: 'table', targets: 3, void_reason: null },
      { operation: 'table', targets: 3, void_reason: 'client_closed' },
    ]);
    await sink.close();
  });

  it('keeps billing rows in one index, the primary key (account_id, time, request_id); void rows also in a partial index of their own', async () => {
    const { rows } = await db.query<{ indexname: string; indexdef: string }>("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'usage' ORDER BY indexname");
    expect(rows).toEqual([
      { indexname: 'usage_pkey', indexdef: expect.stringMatching(/UNIQUE INDEX usage_pkey ON (public\.)?usage USING btree \(account_id, "?time"?, request_id\)/) },
      { indexname: 'usage_voids', indexdef: expect.stringMatching(/INDEX usage_voids ON (public\.)?usage USING btree \(account_id, request_id\) WHERE \(void_reason IS NOT NULL\)/) },
    ]);
    // The monthly quota's and the usage report's reads go through it.
    const plan = await db.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      return tx.query<{ 'QUERY PLAN': string }>("EXPLAIN SELECT count(*) FROM usage WHERE account_id = 'acc_1' AND time >= now() - interval '1 month'");
    });
    expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/usage_pkey/);
  });
});

describe('statements on a PostgreSQL server', () => {
  it('prepares a parameterized statement once per connection and reuses it (usage batches, key lookups)', async () => {
    const db = await openDatabase(await postgres.createDatabase(`prepared_${Date.now()}`), { poolSize: 1 });
    try {
      const sink = new DbUsageSink(db, 1);
      for (let i = 0; i < 3; i++) await sink.record(usage());
      await sink.close();
      // One connection: the session that ran the batches answers this query too.
      const { rows } = await db.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements WHERE statement LIKE $1', ['INSERT INTO usage%']);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.name).toMatch(/^crosstab_\d+$/);
      expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM usage')).rows[0]!.n).toBe(3);
      // A statement without parameters (DDL, several commands) is not prepared.
      await db.query('CREATE TABLE scratch (x int); DROP TABLE scratch;');
      const unnamed = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE $1', ['CREATE TABLE scratch%']);
      expect(unnamed.rows[0]!.n).toBe(0);
    } finally {
      await db.close();
    }
  });
});
