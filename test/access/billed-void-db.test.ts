// Void (credit) rows in the accounts database, on the embedded PGlite and a PostgreSQL server:
// a client that closes while its usage row is being committed ends with the row and its void
// row (migration 8), and the usage report, the portal's detail and the monthly quota count
// the call 0; a call delivered counts 1. Real HTTP (listen()), real sockets, the real GSS
// dataset. On the server the commit is held by a lock the test takes on the usage table; the
// embedded database has one connection, so there the real sink's record is held once committed.
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { addAccount, addKey, DbKeyStore, DbUsageSink, openDatabase, usageDetail, usageReport, type Database } from '../../src/access/index.js';
import { AccountLimiter } from '../../src/access/account-limits.js';
import { createCrosstabHandler, listen } from '../../src/http/index.js';
import { openRaw } from '../http/raw-http.js';
import { tempDir } from '../http/support.js';
import { held, until, type HeldSink } from '../support/held-usage.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const paths = inject('testDatasets');
let postgres: PostgresServer;
let dataset: Dataset;
beforeAll(async () => {
  postgres = await startPostgres();
  dataset = await openDataset(paths.gss);
});
afterAll(async () => {
  await dataset?.close();
  postgres?.stop();
});

const body = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2'] });
const crosstabRequest = (key: string): string =>
  `POST /v1/crosstab HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nservice-engine-authorizer: ${key}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;


interface Store {
  name: string;
  location(): Promise<string>;
  /**
   * Holds the commit of the next usage row until the returned release is called; resolves
   * `holding` once the row's statement is waiting (server) or committed (embedded).
   */
  hold(db: Database, location: string, sink: HeldSink): Promise<{ holding: Promise<void>; release: () => Promise<void> }>;
}



const stores: Store[] = [
  {
    name: 'embedded PGlite',
    location: async () => newEmbeddedFolder(join(tempDir('crosstab-void-db-'), 'db')),
    async hold(_db, _location, sink) {
      let release!: () => void;
      const holding = new Promise<void>((resolve) => {
        sink.hold = { recorded: resolve, release: new Promise<void>((done) => (release = done)) };
      });
      return { holding, release: async () => release() };
    },
  },
  {
    name: 'PostgreSQL server',
    location: () => postgres.createDatabase(`void_${Date.now()}`),
    async hold(db, location) {
      // Another connection holds a lock that the usage INSERT waits for (SHARE conflicts with ROW EXCLUSIVE).
      const locker = await openDatabase(location);
      let release!: () => void;
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const held = locker.transaction(async (tx) => {
        await tx.query('LOCK TABLE usage IN SHARE MODE');
        locked();
        await new Promise<void>((done) => (release = done));
      });
      await isLocked;
      // Holding: the handler's INSERT is waiting for the lock.
      const holding = until(async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND locktype = 'relation'")).rows[0]!.n > 0, 'the INSERT to wait');
      return {
        holding,
        release: async () => {
          release();
          await held;
          await locker.close();
        },
      };
    },
  },
];

describe.each(stores)('void rows on the $name', (store) => {
  it('a client that closes while its row is committed: the row and its void, counted 0 by the usage report, the detail and the quota', async () => {
    const location = await store.location();
    const db = await openDatabase(location);
    await addAccount(db, 'acme', new Map([['GSS', ['_ALL_']]]));
    const { apiKey, key } = await addKey(db, { account: 'acme', name: 'production' });
    const sink = held(new DbUsageSink(db));
    const log: Array<Record<string, unknown>> = [];
    const handler = await createCrosstabHandler({ datasets: [dataset], keys: new DbKeyStore(db), usage: sink, log: (entry) => void log.push(entry as never) });
    const running = await listen(handler, { port: 0 });
    const sockets = new Set<Socket>();
    running.server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    try {
      const held = await store.hold(db, location, sink);
      const client = await openRaw(running.port);
      client.write(crosstabRequest(apiKey));
      await held.holding;
      client.destroy();
      await until(() => sockets.size === 0, 'the server to see the close');
      await held.release();
      await until(() => log.some((entry) => entry['status'] === 200), 'the answer');
      await until(() => log.some((entry) => entry['event'] === 'usage_voided'), 'the void');

      const rows = (await db.query<{ request_id: string; key_id: string; void_reason: string | null; time: Date }>('SELECT request_id, key_id, void_reason, time FROM usage ORDER BY time')).rows;
      expect(rows.map((row) => [row.key_id, row.void_reason])).toEqual([
        [key.id, null],
        [key.id, 'client_closed'],
      ]);
      expect(rows[1]!.request_id).toBe(rows[0]!.request_id);
      expect((await usageReport(db, { account: 'acme' })).calls).toBe(0);
      for (const by of ['key', 'day', 'survey', 'operation']) expect((await usageReport(db, { account: 'acme', by })).rows).toEqual([]);
      expect((await usageDetail(db, 'acme', null, null)).calls).toBe(0);
      const accountId = (await db.query<{ id: string }>('SELECT id FROM accounts')).rows[0]!.id;
      // A quota of 1 is not used up by the voided call (a new limiter reads the rows).
      expect(await new AccountLimiter(db).admit(accountId, { ratePerMinute: null, monthlyQuota: 1 })).toBeUndefined();

      // A call delivered counts.
      const next = await fetch(`${running.url}/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey }, body });
      expect(next.status).toBe(200);
      await next.text();
      expect((await usageReport(db, { account: 'acme' })).calls).toBe(1);
      expect((await usageReport(db, { account: 'acme', by: 'operation' })).rows).toEqual([{ operation: 'crosstab', calls: 1 }]);
      expect((await usageDetail(db, 'acme', null, null)).calls).toBe(1);
      expect(await new AccountLimiter(db).admit(accountId, { ratePerMinute: null, monthlyQuota: 1 })).toMatchObject({ code: 'quota_exceeded' });
    } finally {
      await running.close(100);
      await db.close();
    }
  });
});
