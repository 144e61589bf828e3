// A billed answer that is then not delivered is voided: a second ledger record naming the
// request ("void": true and a reason), never for an answer delivered whole, never twice. On
// every mount, over real sockets, with the real GSS dataset, key file and fsync'd ledger.
// The record's flush is held by the test (the real ledger's record resolves only once the
// test lets it: the flush as seen by the handler takes that long), so the order is fixed.
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
// The built package: from the sources a table answer is made whole (no table worker file to stream from).
import { openDataset, type Dataset } from '../../dist/index.js';
import { createCrosstabHandler, createNodeListener, crosstabExpress, crosstabFastify, crosstabHono, listen, NdjsonLedger, ServiceMetrics } from '../../dist/http/index.js';
import { openRaw } from './raw-http.js';
import { keysAndGss, socketMounts } from './socket-mounts.js';
import { readLedger, tempDir } from './support.js';
import { held, until } from '../support/held-usage.js';

const paths = inject('testDatasets');
const gss = keysAndGss(openDataset);

const mounts = socketMounts({ listen, createNodeListener, crosstabExpress, crosstabFastify, crosstabHono });

const crosstabBody = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2'] });
const crosstabRequest = (key: string): string =>
  `POST /v1/crosstab HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nservice-engine-authorizer: ${key}\r\ncontent-length: ${Buffer.byteLength(crosstabBody)}\r\n\r\n${crosstabBody}`;
/** Every respondent by year and sex: about 24 MB of JSON, far more than the socket buffers hold. */
const LARGE_TABLE = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Variable: 'id' }], Columns: [{ Variable: 'year' }, { Variable: 'sex' }], Statistics: ['vpct', 'hpct'] });
const SMALL_TABLE = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', Rows: [{ Variable: 'sex' }], Columns: [{ Variable: 'race' }] });

/** Records and voids of the ledger, as [requestId, void?, reason?]. */
const entries = (path: string): Array<[unknown, unknown, unknown]> => readLedger(path).map((record) => [record['requestId'], record['void'], record['reason']]);

describe.each(mounts)('billed answers not delivered ($name)', (mount) => {
  it('a client that closes during its record\'s flush ends with the record and its void', async () => {
    const ledger = join(tempDir(), 'usage.ndjson');
    const sink = held(await NdjsonLedger.open(ledger));
    const log: Array<Record<string, unknown>> = [];
    const metrics = new ServiceMetrics({ processMetrics: false });
    const handler = await createCrosstabHandler({ datasets: [gss.dataset], keys: gss.keys.path, usage: sink, metrics, log: (entry) => void log.push(entry as never) });
    const server = await mount.start(handler);
    let release!: () => void;
    const recorded = new Promise<void>((resolve) => {
      sink.hold = { recorded: resolve, release: new Promise<void>((done) => (release = done)) };
    });
    const client = await openRaw(server.port);
    client.write(crosstabRequest(gss.keys.all));
    await recorded;
    // Durable: the record is in the file while its call waits.
    expect(entries(ledger)).toHaveLength(1);
    client.destroy();
    await until(() => server.sockets.size === 0, 'the server to see the close');
    release();
    await until(() => log.some((entry) => entry['status'] === 200), 'the answer');
    await server.close();
    const [record, ...rest] = readLedger(ledger);
    expect(record).toMatchObject({ keyId: gss.keys.allId, survey: 'GSS', operation: 'crosstab' });
    expect(record!['void']).toBeUndefined();
    // The client was gone before the answer was given to any mount: even fetch-only Hono knows.
    expect(rest).toEqual([{ ...record, time: rest[0]?.['time'], void: true, reason: 'client_closed' }]);
    expect(Date.parse(rest[0]!['time'] as string)).toBeGreaterThan(Date.parse(record!['time'] as string));
    // Billed, then voided: the two counters say so (their difference is what is billed in the end).
    const scrape = await metrics.registry.metrics();
    expect(scrape).toMatch(/^crosstab_billed_calls_total\{operation="crosstab",survey="GSS"\} 1$/m);
    expect(scrape).toMatch(/^crosstab_voided_calls_total\{operation="crosstab",survey="GSS",reason="client_closed"\} 1$/m);
    expect(log.filter((entry) => entry['event'] === 'usage_voided').map((entry) => entry['message'])).toEqual([
      `Request ${String(record!['requestId'])} (key ${gss.keys.allId}) was billed and not delivered (client_closed): its void record is durable.`,
    ]);
  });

  it('a streamed table answer cut mid-body is voided' + (mount.seesDelivery ? '' : ' (not here: the mount cannot tell)'), async () => {
    const ledger = join(tempDir(), 'usage.ndjson');
    const handler = await createCrosstabHandler({ datasets: [gss.dataset], keys: gss.keys.path, usage: ledger });
    const server = await mount.start(handler);
    const cut = await new Promise<{ length: number; received: number }>((resolve, reject) => {
      const req = httpRequest(`http://127.0.0.1:${server.port}/v1/tables`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': gss.keys.all }, agent: false }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`POST /v1/tables answered ${res.statusCode}`));
        res.once('data', (chunk: Buffer) => {
          res.destroy();
          resolve({ length: Number(res.headers['content-length']), received: chunk.length });
        });
      });
      req.on('error', () => {});
      req.end(LARGE_TABLE);
    });
    expect(cut.received).toBeLessThan(cut.length);
    await until(() => server.sockets.size === 0, 'the server to see the close');
    await server.close();
    const [record, ...rest] = entries(ledger);
    expect(record).toEqual([expect.any(String), undefined, undefined]);
    expect(rest).toEqual(mount.seesDelivery ? [[record![0], true, 'client_closed']] : []);
  });

  it.runIf(mount.seesDelivery)('an answer pipelined behind another, billed and waiting its turn when the connection closes, is voided', async () => {
    const ledger = join(tempDir(), 'usage.ndjson');
    // The real dataset; the first crosstab waits until the test releases it.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let first = true;
    const holding = {
      info: gss.dataset.info,
      async crosstab(query: Parameters<Dataset['crosstab']>[0]) {
        if (first) {
          first = false;
          await released;
        }
        return gss.dataset.crosstab(query);
      },
    };
    const log: Array<Record<string, unknown>> = [];
    const handler = await createCrosstabHandler({ datasets: [holding], keys: gss.keys.path, usage: ledger, log: (entry) => void log.push(entry as never) });
    const server = await mount.start(handler);
    const client = await openRaw(server.port);
    client.write(crosstabRequest(gss.keys.all) + crosstabRequest(gss.keys.all));
    // The second answer is billed (its record durable) while the first is still being made.
    await until(() => entries(ledger).length === 1, 'the second record');
    client.destroy();
    await until(() => server.sockets.size === 0, 'the server to see the close');
    release();
    await until(() => log.filter((entry) => 'status' in entry).length === 2, 'both answers');
    await server.close();
    const [record, ...rest] = entries(ledger);
    expect(rest).toEqual([[record![0], true, 'client_closed']]);
    expect(log.filter((entry) => 'status' in entry).map((entry) => entry['status']).sort()).toEqual([200, 499]);
  });

  it('an answer delivered whole is never voided, also when its client closes right after the last byte', async () => {
    const ledger = join(tempDir(), 'usage.ndjson');
    const handler = await createCrosstabHandler({ datasets: [gss.dataset], keys: gss.keys.path, usage: ledger });
    const server = await mount.start(handler);
    for (let i = 0; i < 5; i++) {
      const client = await openRaw(server.port);
      client.write(crosstabRequest(gss.keys.all));
      expect((await client.answer()).status).toBe(200);
      client.socket.resetAndDestroy();
    }
    // A large streamed table read to its last byte, then the connection reset at once.
    const whole = await new Promise<{ length: number; received: number }>((resolve, reject) => {
      const req = httpRequest(`http://127.0.0.1:${server.port}/v1/tables`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': gss.keys.all }, agent: false }, (res) => {
        let received = 0;
        const length = Number(res.headers['content-length']);
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received === length) {
            res.socket.resetAndDestroy();
            resolve({ length, received });
          }
        });
        res.on('error', () => {});
        res.on('close', () => received < length && reject(new Error(`cut at ${received} of ${length}`)));
      });
      req.on('error', () => {});
      req.end(LARGE_TABLE);
    });
    expect(whole.received).toBe(whole.length);
    const small = await fetch(`http://127.0.0.1:${server.port}/v1/tables`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': gss.keys.all }, body: SMALL_TABLE });
    expect(small.status).toBe(200);
    await small.arrayBuffer();
    await server.close();
    const records = entries(ledger);
    expect(records.filter(([, isVoid]) => isVoid !== undefined)).toEqual([]);
    expect(records).toHaveLength(7);
  });
});

// `crosstab serve` killed with SIGKILL while billed table answers are being cut and their
// voids written: the ledger stays readable (records whole or skipped as not JSON), every void
// names a record before it, none twice; a call whose void did not reach the disk stays billed.
describe('a crash between a record and its void (kill -9 of crosstab serve)', () => {
  it('leaves a readable ledger: whole records, each void after its record, none twice; it is appended to after a restart', async () => {
    const { startServe } = await import('./serve-child.js');
    const dir = tempDir('crosstab-void-crash-');
    const ledger = join(dir, 'usage.ndjson');
    const args = ['--dataset', paths.gss, '--keys', gss.keys.path, '--port', '0', '--ledger', ledger];
    const cutTable = (origin: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(`${origin}/v1/tables`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': gss.keys.all }, agent: false }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`POST /v1/tables answered ${res.statusCode}`));
          res.once('data', () => {
            res.destroy();
            resolve();
          });
        });
        req.on('error', () => {});
        req.end(LARGE_TABLE);
      });
    const serve = await startServe(args);
    try {
      // One cut answer voided, durably, while the server runs.
      await cutTable(serve.origin);
      await until(() => readLedger(ledger).some((record) => record['void'] === true), 'the first void');
      // Then several at once, and the kill right after their cuts: some voids in flight.
      await Promise.all(Array.from({ length: 4 }, () => cutTable(serve.origin)));
      serve.child.kill('SIGKILL');
      await serve.exited;
    } finally {
      serve.child.kill('SIGKILL');
    }
    const check = (): void => {
      const records = readLedger(ledger);
      const billed = new Set<unknown>();
      const voided = new Set<unknown>();
      for (const record of records) {
        expect(typeof record['requestId']).toBe('string');
        expect(record['keyId']).toBe(gss.keys.allId);
        if (record['void'] === true) {
          expect(billed.has(record['requestId'])).toBe(true);
          expect(voided.has(record['requestId'])).toBe(false);
          voided.add(record['requestId']);
        } else {
          expect(billed.has(record['requestId'])).toBe(false);
          billed.add(record['requestId']);
        }
      }
      expect(billed.size).toBeGreaterThanOrEqual(2);
      expect(voided.size).toBeGreaterThanOrEqual(1);
    };
    check();
    // After a restart the ledger starts on a fresh line: a new call's record is whole and read.
    const again = await startServe(args);
    try {
      const answer = await fetch(`${again.origin}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': gss.keys.all }, body: crosstabBody });
      expect(answer.status).toBe(200);
      const requestId = answer.headers.get('x-request-id');
      await answer.text();
      expect(readLedger(ledger).at(-1)).toMatchObject({ requestId, operation: 'crosstab' });
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
    check();
  });
});
