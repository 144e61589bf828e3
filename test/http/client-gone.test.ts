// A POST /crosstab whose client closes its connection before the answer is not billed (499 in
// the access log, no ledger record), on every node-based mount; the next request on a new
// connection is billed. Real sockets, the real GSS dataset, key file and fsync'd ledger; the
// dataset's crosstab is held until the client has gone, so the order is fixed, not raced.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { serve as honoServe } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, createNodeListener, crosstabExpress, crosstabFastify, crosstabHono, listen, type AccessLogEntry, type CrosstabDataset, type CrosstabHandler } from '../../src/http/index.js';
import { openRaw } from './raw-http.js';
import { makeKeyFile, readLedger, tempDir, type TestKeys } from './support.js';

const paths = inject('testDatasets');
let keys: TestKeys;
let dataset: Dataset;

beforeAll(async () => {
  keys = await makeKeyFile(tempDir());
  dataset = await openDataset(paths.gss);
});
afterAll(() => dataset?.close());

interface Mount {
  name: string;
  start(handler: CrosstabHandler): Promise<{ port: number; sockets: Set<Socket>; close(): Promise<void> }>;
}

/** The server's sockets, to see when the server has noticed the client's close. */
function tracked(server: Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return sockets;
}

/** A listening node:http server of a mount: its port, its sockets, and a close that cuts them and closes `handler`. */
function served(server: Server, handler: CrosstabHandler): Awaited<ReturnType<Mount['start']>> {
  return {
    port: (server.address() as AddressInfo).port,
    sockets: tracked(server),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await handler.close();
    },
  };
}

const mounts: Mount[] = [
  {
    name: 'listen()',
    async start(handler) {
      const running = await listen(handler, { port: 0 });
      return { port: running.port, sockets: tracked(running.server), close: () => running.close(100) };
    },
  },
  {
    name: 'node:http mount',
    async start(handler) {
      const server = createServer(createNodeListener(handler));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return served(server, handler);
    },
  },
  {
    name: 'Express mount',
    async start(handler) {
      const app = express();
      app.use(crosstabExpress(handler));
      const server = createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return served(server, handler);
    },
  },
  {
    name: 'Fastify mount',
    async start(handler) {
      const app = Fastify();
      await app.register(crosstabFastify(handler));
      await app.listen({ port: 0, host: '127.0.0.1' });
      const sockets = tracked(app.server);
      return {
        port: (app.server.address() as AddressInfo).port,
        sockets,
        close: async () => {
          await app.close();
          await handler.close();
        },
      };
    },
  },
  {
    name: 'Hono mount (@hono/node-server)',
    async start(handler) {
      const app = new Hono();
      app.use(crosstabHono(handler));
      const server = await new Promise<Server>((resolve) => {
        const listening = honoServe({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(listening as Server)) as Server;
      });
      return served(server, handler);
    },
  },
  {
    // Hono as on runtimes without node:http (no `env.incoming`): the fetch Request, whose signal says the client has gone.
    name: 'Hono mount (fetch only)',
    async start(handler) {
      const app = new Hono();
      app.use(crosstabHono(handler));
      const server = await new Promise<Server>((resolve) => {
        const listening = honoServe({ fetch: (request: Request) => app.fetch(request), port: 0, hostname: '127.0.0.1' }, () => resolve(listening as Server)) as Server;
      });
      return served(server, handler);
    },
  },
];

const body = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2'] });

describe.each(mounts)('a client gone before its crosstab answer ($name)', (mount) => {
  it('is not billed (499, no ledger record); the next request is billed', async () => {
    const dir = tempDir();
    const ledger = join(dir, 'usage.ndjson');
    // The real dataset; its crosstab waits for `release` once `held` is set.
    let held: { started: () => void; release: Promise<void> } | undefined;
    const holding: CrosstabDataset = {
      info: dataset.info,
      async crosstab(query) {
        const hold = held;
        held = undefined;
        if (hold !== undefined) {
          hold.started();
          await hold.release;
        }
        return dataset.crosstab(query);
      },
    };
    const log: AccessLogEntry[] = [];
    const handler = await createCrosstabHandler({ datasets: [holding], keys: keys.path, usage: ledger, log: (entry) => 'status' in entry && log.push(entry) });
    const server = await mount.start(handler);
    try {
      let release!: () => void;
      const started = new Promise<void>((resolve) => {
        held = { started: resolve, release: new Promise<void>((done) => (release = done)) };
      });
      const client = await openRaw(server.port);
      client.write(`POST /v1/crosstab HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nservice-engine-authorizer: ${keys.all}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
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

      const next = await fetch(`http://127.0.0.1:${server.port}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': keys.all }, body });
      expect(next.status).toBe(200);
      await next.text();
      expect(readLedger(ledger).map((record) => record['keyId'])).toEqual([keys.allId]);
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
    const handler = await createCrosstabHandler({ datasets: [dataset], keys: keys.path, usage: ledger, log: (entry) => 'status' in entry && log.push(entry) });
    const server = await mount.start(handler);
    try {
      const sent = 10;
      for (let i = 0; i < sent; i++) {
        const client = await openRaw(server.port);
        client.write(`POST /v1/crosstab HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nservice-engine-authorizer: ${keys.all}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
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
