// An answer the headers decide goes out at once, before a body that may never arrive, and
// ends the connection; a body the answer needs but that arrives too slowly gets a 408.
// Real sockets against the node:http mount and listen().
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset } from '../../src/index.js';
import { createCrosstabHandler, createNodeListener, crosstabExpress, crosstabFastify, crosstabHono, listen, type CrosstabHandler } from '../../src/http/index.js';
import { openRaw, type RawConnection } from './raw-http.js';
import { CLI, startServe } from './serve-child.js';
import { keysAndGss, socketMounts, type StartedMount } from './socket-mounts.js';
import { readLedger, tempDir } from './support.js';

const paths = inject('testDatasets');
const BODY_TIMEOUT_MS = 300;
/** Only bounds a hang (the old code never answered): far above any answer's time. */
const HANG_MS = 15_000;
const gss = keysAndGss(openDataset);

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${HANG_MS} ms while the body is incomplete`)), HANG_MS);
  });
  return Promise.race([promise, hang]).finally(() => clearTimeout(timer));
}

const validBody = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] });

/** Headers announcing `declared` bytes, then only the first `sent` bytes of a body. */
function partialPost(connection: RawConnection, path: string, headers: Record<string, string>, declared = 4086, sent = 100): void {
  const lines = Object.entries({ host: '127.0.0.1', 'content-length': String(declared), ...headers }).map(([name, value]) => `${name}: ${value}`);
  connection.write(`POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${validBody.padEnd(sent, ' ').slice(0, sent)}`);
}

/** The mounts whose answers before the body these tests check. */
const mounts = socketMounts({ listen, createNodeListener, crosstabExpress, crosstabFastify, crosstabHono }).filter((mount) => mount.name === 'node:http' || mount.name === 'listen()');

describe.each(mounts)('on the $name', (mount) => {
  let handler: CrosstabHandler;
  let server: StartedMount;
  let ledger: string;
  const events: string[] = [];

  beforeAll(async () => {
    ledger = join(tempDir(), 'usage.ndjson');
    handler = await createCrosstabHandler({
      datasets: [gss.dataset],
      keys: gss.keys.path,
      usage: ledger,
      bodyTimeoutMs: BODY_TIMEOUT_MS,
      log: (entry) => {
        if ('event' in entry) events.push(`${entry.event}: ${entry.message}`);
      },
    });
    server = await mount.start(handler);
  });
  afterAll(async () => {
    await server?.close();
    await handler?.close();
  });

  async function answerWithoutBody(path: string, headers: Record<string, string>) {
    const connection = await openRaw(server.port);
    try {
      partialPost(connection, path, headers);
      const answer = await within(connection.answer(), `POST ${path}`);
      await within(connection.closed(), `close after POST ${path}`);
      return answer;
    } finally {
      connection.destroy();
    }
  }

  it('answers a partial body with an unknown key 401 at once, with Connection: close, and closes', async () => {
    const unknownKey = `ctk_${'A'.repeat(43)}`;
    const answer = await answerWithoutBody('/v1/crosstab', { 'content-type': 'application/json', 'service-engine-authorizer': unknownKey });
    expect(answer.status).toBe(401);
    expect(answer.headers['connection']).toBe('close');
    expect(JSON.parse(answer.body).error.code).toBe('unauthorized');
  });

  it('answers a partial body to an unknown path 404 at once, with Connection: close, and closes', async () => {
    const answer = await answerWithoutBody('/v1/nowhere', { 'content-type': 'application/json', 'service-engine-authorizer': gss.keys.all });
    expect(answer.status).toBe(404);
    expect(answer.headers['connection']).toBe('close');
  });

  it('answers the other header decisions at once too: wrong method, wrong Content-Type', async () => {
    const wrongMethod = await answerWithoutBody('/v1/docs', { 'content-type': 'application/json' });
    expect([wrongMethod.status, wrongMethod.headers['allow'], wrongMethod.headers['connection']]).toEqual([405, 'GET, HEAD', 'close']);
    const wrongType = await answerWithoutBody('/v1/crosstab', { 'content-type': 'text/plain', 'service-engine-authorizer': gss.keys.all });
    expect([wrongType.status, wrongType.headers['connection']]).toEqual([415, 'close']);
  });

  it('answers a valid request whose body arrives too slowly 408 after the body timeout, unbilled, and closes', async () => {
    const before = handler.stats?.bodyTimeouts ?? 0;
    const connection = await openRaw(server.port);
    try {
      partialPost(connection, '/v1/crosstab', { 'content-type': 'application/json', 'service-engine-authorizer': gss.keys.all }, validBody.length, 10);
      const answer = await within(connection.answer(), 'slow body');
      expect(answer.status).toBe(408);
      expect(answer.headers['connection']).toBe('close');
      expect(JSON.parse(answer.body).error).toMatchObject({ code: 'request_timeout', message: `The request body did not arrive within ${BODY_TIMEOUT_MS} ms of its headers.` });
      await within(connection.closed(), 'close after the 408');
    } finally {
      connection.destroy();
    }
    expect(handler.stats?.bodyTimeouts).toBe(before + 1);
    // The same request, whole, is answered and billed: the handler is fine.
    const whole = await fetch(`http://127.0.0.1:${server.port}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': gss.keys.all }, body: validBody });
    expect(whole.status).toBe(200);
    expect(readLedger(ledger)).toHaveLength(1);
  });

  it('counts body timeouts and unread bodies in the closing event', async () => {
    await server.close();
    await handler.close();
    expect(events.find((event) => event.startsWith('handler_closed'))).toMatch(/^handler_closed: 1 request bodies too slow \(408\), 5 bodies not read/);
  });
});

describe('crosstab serve --body-timeout', () => {
  it('answers a slow body 408 after the given time, counts it in the closing event, and refuses a bad value', async () => {
    const dir = tempDir();
    const serve = await startServe(['--dataset', paths.gss, '--keys', gss.keys.path, '--port', '0', '--ledger', join(dir, 'usage.ndjson'), '--body-timeout', '200']);
    try {
      const connection = await openRaw(Number(new URL(serve.origin).port));
      try {
        partialPost(connection, '/v1/crosstab', { 'content-type': 'application/json', 'service-engine-authorizer': gss.keys.all }, validBody.length, 10);
        const answer = await within(connection.answer(), 'slow body');
        expect([answer.status, answer.headers['connection']]).toEqual([408, 'close']);
        expect(JSON.parse(answer.body).error.message).toBe('The request body did not arrive within 200 ms of its headers.');
        await within(connection.closed(), 'close after the 408');
      } finally {
        connection.destroy();
      }
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    expect(serve.output()).toMatch(/"event":"handler_closed","message":"1 request bodies too slow \(408\), 1 bodies not read/);
    const refused = spawnSync(process.execPath, [CLI, 'serve', '--dataset', paths.gss, '--keys', gss.keys.path, '--port', '0', '--body-timeout', '0'], { encoding: 'utf8', cwd: dir });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/--body-timeout must be an integer from 1 to 30000; got "0"/);
  });
});
