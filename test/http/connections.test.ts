// Connections that cannot exhaust the server: sockets closed after error answers, idle
// sockets closed, per-address and total connection limits, uploads not drained once the
// answer is known, and a flood against `crosstab serve` running under `ulimit -n 256`.
import { connect, type Socket } from 'node:net';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type ListenOptions, type RunningServer } from '../../src/http/index.js';
import { CLI, startServe } from './serve-child.js';
import { makeKeyFile, shims, tempDir, type TestKeys } from './support.js';
import { join } from 'node:path';

const paths = inject('testDatasets');
const BODY = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] });
let keys: TestKeys;
let dir: string;
let dataset: Dataset;

beforeAll(async () => {
  dir = tempDir();
  keys = await makeKeyFile(dir);
  dataset = await openDataset(paths.gss);
});
afterAll(() => dataset?.close());

async function serveInProcess(limits: Omit<ListenOptions, 'port'> = {}): Promise<RunningServer> {
  const handler = await createCrosstabHandler({ datasets: [dataset], keys: keys.path, usage: join(dir, `ledger-${Math.random()}.ndjson`) });
  return listen(handler, { port: 0, ...limits });
}

/** A raw TCP connection to `port`, from `localAddress` (any 127.x.y.z is loopback on Linux). */
function open(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Resolves with what the peer sent once the socket closes, or rejects after `ms`. */
function closed(socket: Socket, ms = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('error', () => {});
    const timer = setTimeout(() => reject(new Error(`socket still open after ${ms} ms; received ${JSON.stringify(received.slice(0, 100))}`)), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
  });
}

async function post(origin: string): Promise<number> {
  const response = await fetch(`${origin}/v1/crosstab`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'service-engine-authorizer': keys.all },
    body: BODY,
    signal: AbortSignal.timeout(10_000),
  });
  await response.arrayBuffer();
  return response.status;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function connectionCount(server: RunningServer): Promise<number> {
  return new Promise((resolve, reject) => server.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

describe('listen(): sockets and limits (in-process node:http)', () => {
  it('closes the socket after answering a request it cannot parse, even if the peer never closes', async () => {
    const server = await serveInProcess();
    try {
      // A peer that keeps its half of the connection open (never sends FIN).
      const socket = await open(server.port);
      socket.allowHalfOpen = true;
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      const ended = new Promise((resolve) => socket.once('end', resolve));
      socket.write('NOT HTTP AT ALL\r\n\r\n');
      await ended;
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      // The server's side is gone, not left half-open holding a descriptor.
      for (let i = 0; i < 20 && (await connectionCount(server)) > 0; i++) await wait(100);
      expect(await connectionCount(server)).toBe(0);
      socket.destroy();
    } finally {
      await server.close();
    }
  });

  it('closes a connection idle for idleTimeoutMs', async () => {
    const server = await serveInProcess({ idleTimeoutMs: 300 });
    try {
      const socket = await open(server.port);
      await closed(socket, 5000);
      expect(await connectionCount(server)).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('refuses connections past maxConnectionsPerAddress with a 503, and still serves other addresses', async () => {
    const server = await serveInProcess({ maxConnectionsPerAddress: 4 });
    try {
      const held = await Promise.all(Array.from({ length: 4 }, () => open(server.port, '127.0.0.2')));
      const extra = await open(server.port, '127.0.0.2');
      expect(await closed(extra)).toMatch(/^HTTP\/1\.1 503 [^]*Too many open connections from this address/);
      expect(await post(server.url.replace(/\/v1$/, ''))).toBe(200);
      for (const socket of held) socket.destroy();
    } finally {
      await server.close();
    }
  });

  it('rejects invalid limits naming the option', async () => {
    const handler = await createCrosstabHandler({ datasets: [dataset], keys: keys.path, usage: join(dir, 'bad-limits.ndjson') });
    await expect(listen(handler, { port: 0, maxConnections: 0 })).rejects.toThrow(/maxConnections must be a positive integer/);
    await expect(listen(handler, { port: 0, idleTimeoutMs: 1.5 })).rejects.toThrow(/idleTimeoutMs/);
    await handler.close();
  });
});

/** One request on a kept-alive raw socket; resolves with the whole response (head and body). */
function exchange(socket: Socket, request: string, ms = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const done = (error?: Error): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      if (error) reject(error);
      else resolve(received);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.toString();
      const end = received.indexOf('\r\n\r\n');
      const length = /content-length: *(\d+)/i.exec(received.slice(0, end));
      if (end !== -1 && length && Buffer.byteLength(received) >= end + 4 + Number(length[1])) done();
    };
    const onClose = (): void => done(new Error(`connection closed before a whole response; received ${JSON.stringify(received.slice(0, 200))}`));
    const timer = setTimeout(() => done(new Error(`no whole response after ${ms} ms; received ${JSON.stringify(received.slice(0, 200))}`)), ms);
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.on('error', () => {});
    socket.write(request);
  });
}

const rawPost = (apiKey: string): string =>
  `POST /v1/crosstab HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nService-Engine-Authorizer: ${apiKey}\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`;

// What a reverse proxy with a pool of kept-alive connections sees during a shutdown: it may
// write its next request on an idle connection at any moment, so close() must never cut an
// idle connection under it, and tells the proxy to stop reusing a connection by answering
// with `Connection: close`.
describe('close(): a draining server answers every request that reaches it', () => {
  it('a request written on an idle kept-alive connection after close() began is answered, with Connection: close', async () => {
    const server = await serveInProcess();
    const socket = await open(server.port);
    const first = await exchange(socket, rawPost(keys.all));
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(first).not.toMatch(/\r\nconnection: close\r\n/i);
    const closing = server.close();
    await wait(200);
    const second = await exchange(socket, rawPost(keys.all));
    expect(second).toMatch(/^HTTP\/1\.1 200 /);
    expect(second).toMatch(/\r\nconnection: close\r\n/i);
    await closed(socket);
    await closing;
  });

  it('a request in flight when close() begins is answered with Connection: close; new connections are refused', async () => {
    const server = await serveInProcess();
    const socket = await open(server.port);
    const request = rawPost(keys.all);
    const half = request.length - 10;
    socket.write(request.slice(0, half));
    await wait(100);
    const closing = server.close();
    await expect(open(server.port)).rejects.toThrow(/ECONNREFUSED/);
    const answer = await exchange(socket, request.slice(half));
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    await closed(socket);
    await closing;
  });

  it('an idle connection that carries no further request is closed by the keep-alive timeout, and close() resolves', async () => {
    const server = await serveInProcess();
    const socket = await open(server.port);
    expect(await exchange(socket, rawPost(keys.all))).toMatch(/^HTTP\/1\.1 200 /);
    const started = Date.now();
    // Listen for the end before close(): the socket closes before close() resolves (it then closes the handler).
    const ended = closed(socket, 15_000);
    await server.close();
    expect(await ended).toBe('');
    expect(await connectionCount(server)).toBe(0);
    // Not before the peer had the keep-alive timeout (5 s, above nginx's 4 s) to use or close it.
    expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
  });
});

describe('uploads are not drained once the answer is known', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await serveInProcess();
  });
  afterAll(() => server?.close());

  /** Sends `head`, then body bytes as fast as the server takes them, up to `cap`; returns bytes taken and the answer. */
  async function push(head: string, cap: number): Promise<{ sent: number; answer: string }> {
    const socket = await open(server.port);
    const answer = closed(socket, 30_000);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    let failed = false;
    socket.once('error', () => (failed = true));
    await new Promise<void>((resolve) => socket.write(head, () => resolve()));
    while (sent < cap && !failed && !socket.destroyed) {
      const ok = await new Promise<boolean>((resolve) => socket.write(chunk, (error) => resolve(!error)));
      if (!ok) break;
      sent += chunk.length;
    }
    socket.destroy();
    return { sent, answer: await answer };
  }

  const CAP = 512 * 1024 * 1024;
  const LIMIT = 32 * 1024 * 1024;

  it.each([
    ['an unknown key, Content-Length 100 GB', `POST /v1/crosstab HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nService-Engine-Authorizer: ctk_${'A'.repeat(43)}\r\nContent-Length: 100000000000\r\n\r\n`, 401],
    ['a 404 path, chunked', 'POST /v1/nowhere HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4000000\r\n', 404],
    ['GET /docs, Content-Length 100 GB', 'GET /v1/docs HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000000\r\n\r\n', 200],
  ])('%s: answered, then the connection is closed', async (_name, head, status) => {
    const { sent, answer } = await push(head, CAP);
    expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(sent).toBeLessThan(LIMIT);
  });
});

describe.each(shims)('uploads past the limit are not drained ($name shim)', ({ start }) => {
  it('an unknown key with Content-Length 100 GB: answered 401, then the connection is closed', async () => {
    const handler = await createCrosstabHandler({ datasets: [dataset], keys: keys.path, usage: join(dir, `shim-${Math.random()}.ndjson`) });
    const shim = await start(handler);
    try {
      const socket = await open(Number(new URL(shim.origin).port));
      const answer = closed(socket, 30_000);
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      await new Promise<void>((resolve) => socket.write(`POST /v1/crosstab HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nService-Engine-Authorizer: ctk_${'A'.repeat(43)}\r\nContent-Length: 100000000000\r\n\r\n`, () => resolve()));
      while (sent < 512 * 1024 * 1024 && !socket.destroyed) {
        if (!(await new Promise<boolean>((resolve) => socket.write(chunk, (error) => resolve(!error))))) break;
        sent += chunk.length;
      }
      socket.destroy();
      expect(await answer).toMatch(/^HTTP\/1\.1 401 /);
      expect(sent).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await shim.close();
      await handler.close();
    }
  });
});

describe('`crosstab serve` under `ulimit -n 256`: a connection flood', () => {
  beforeAll(() => {
    expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
  });

  /** Opens `count` connections from `addresses` in turn: half send a bad request, half nothing; none read or close. */
  async function flood(port: number, count: number, addresses: string[]): Promise<Socket[]> {
    const sockets: Socket[] = [];
    for (let i = 0; i < count; i++) {
      const socket = connect({ host: '127.0.0.1', port, localAddress: addresses[i % addresses.length] as string });
      socket.on('error', () => {});
      socket.allowHalfOpen = true;
      socket.pause();
      if (i % 2 === 0) socket.write('GARBAGE\r\n\r\n');
      sockets.push(socket);
    }
    await wait(1000);
    return sockets;
  }

  it('600 connections from one address: real requests from another still succeed', async () => {
    const serve = await startServe(['--dataset', paths.gss, '--keys', keys.path, '--port', '0', '--ledger', join(dir, 'flood-one.ndjson')], { limits: 'ulimit -n 256' });
    const port = Number(new URL(serve.origin).port);
    const sockets = await flood(port, 600, ['127.0.0.2']);
    try {
      const statuses = [];
      for (let i = 0; i < 20; i++) statuses.push(await post(serve.origin));
      expect(statuses).toEqual(Array(20).fill(200));
    } finally {
      for (const socket of sockets) socket.destroy();
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('600 connections from 20 addresses: the server keeps its descriptors and serves again once they idle out', async () => {
    const ledger = join(dir, 'flood-many.ndjson');
    const serve = await startServe(['--dataset', paths.gss, '--keys', keys.path, '--port', '0', '--ledger', ledger, '--idle-timeout', '2'], { limits: 'ulimit -n 256' });
    const port = Number(new URL(serve.origin).port);
    const addresses = Array.from({ length: 20 }, (_, i) => `127.0.1.${i + 1}`);
    const sockets = await flood(port, 600, addresses);
    try {
      await wait(3000);
      const statuses = [];
      for (let i = 0; i < 20; i++) statuses.push(await post(serve.origin));
      expect(statuses).toEqual(Array(20).fill(200));
      expect(serve.output()).not.toMatch(/EMFILE/);
    } finally {
      for (const socket of sockets) socket.destroy();
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });
});
