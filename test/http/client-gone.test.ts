// A POST /crosstab whose client closes its connection before the answer is not billed (499 in
// the access log, no ledger record), on every node-based mount; the next request on a new
// connection is billed. Real sockets, the real GSS dataset, key file and fsync'd ledger; the
// dataset's crosstab is held until the client has gone, so the order is fixed, not raced.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDataset } from '../../src/index.js';
import { createCrosstabHandler, createNodeListener, crosstabExpress, crosstabFastify, crosstabHono, listen, type AccessLogEntry, type CrosstabDataset } from '../../src/http/index.js';
import { openRaw } from './raw-http.js';
import { keysAndGss, socketMounts } from './socket-mounts.js';
import { readLedger, tempDir } from './support.js';

const gss = keysAndGss(openDataset);

const mounts = socketMounts({ listen, createNodeListener, crosstabExpress, crosstabFastify, crosstabHono });

const body = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2'] });

describe.each(mounts)('a client gone before its crosstab answer ($name)', (mount) => {
  it('is not billed (499, no ledger record); the next request is billed', async () => {
    const dir = tempDir();
    const ledger = join(dir, 'usage.ndjson');
    // The real dataset; its crosstab waits for `release` once `held` is set.
    let held: { started: () => void; release: Promise<void> } | undefined;
    const holding: CrosstabDataset = {
      info: gss.dataset.info,
      async crosstab(query) {
        const hold = held;
        held = undefined;
        if (hold !== undefined) {
          hold.started();
          await hold.release;
        }
        return gss.dataset.crosstab(query);
      },
    };
    const log: AccessLogEntry[] = [];
    const handler = await createCrosstabHandler({ datasets: [holding], keys: gss.keys.path, usage: ledger, log: (entry) => 'status' in entry && log.push(entry) });
    const server = await mount.start(handler);
    try {
      let release!: () => void;
      const started = new Promise<void>((resolve) => {
        held = { started: resolve, release: new Promise<void>((done) => (release = done)) };
      });
      const client = await openRaw(server.port);
      client.write(`POST /v1/crosstab HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nservice-engine-authorizer: ${gss.keys.all}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      await started;
      expect(server.sockets.size).toBe(1);
      client.destroy();
      // The server has seen the connection close before the crosstab returns.
      for (let waited = 0; server.sockets.size > 0 && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(server.sockets.size).toBe(0);
      release();
      for (let waited = 0; log.length === 0 && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(log.map((entry) => [entry.status, entry.billed])).toEqual([[499, undefined]]);
      expect(readLedger(ledger)).toEqual([]);

      const next = await fetch(`http://127.0.0.1:${server.port}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': gss.keys.all }, body });
      expect(next.status).toBe(200);
      await next.text();
      expect(readLedger(ledger).map((record) => record['keyId'])).toEqual([gss.keys.allId]);
    } finally {
      await server.close();
    }
  });
});

// A client that resets its connection right after sending: its answer (a small crosstab,
// made without waiting on I/O) is ready before node:http has read the reset that followed the
// request, so it must be asked for after the event loop has turned, not in the same step.
describe.each(mounts)('a client that resets its connection right after sending ($name)', (mount) => {
  it('is not billed (499, no ledger record)', async () => {
    const ledger = join(tempDir(), 'usage.ndjson');
    const log: AccessLogEntry[] = [];
    const handler = await createCrosstabHandler({ datasets: [gss.dataset], keys: gss.keys.path, usage: ledger, log: (entry) => 'status' in entry && log.push(entry) });
    const server = await mount.start(handler);
    try {
      const sent = 10;
      for (let i = 0; i < sent; i++) {
        const client = await openRaw(server.port);
        client.write(`POST /v1/crosstab HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nservice-engine-authorizer: ${gss.keys.all}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        // In the same step as the request: both are in the server's socket before it reads either.
        client.socket.resetAndDestroy();
      }
      for (let waited = 0; log.length < sent && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(log.map((entry) => [entry.status, entry.billed])).toEqual(Array.from({ length: sent }, () => [499, undefined]));
      expect(readLedger(ledger)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
