// What the mount itself decides, once per mount (node:http, Fastify, Express, Hono, listen()):
// which paths reach the handler, an upload the client aborts, and HTTP the server cannot parse.
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCrosstabHandler, type AccessLogEntry, type CrosstabHandler } from '../../src/http/index.js';
import { readLedger, servedFixture, shims, type RunningShim } from './support.js';

const { gss, dir, keys } = await servedFixture();

/** Writes `parts` on a raw connection to `origin`, then `after` (e.g. destroys it); resolves with all the server sent once it closes the connection. */
function exchange(origin: string, parts: string[], after: (socket: ReturnType<typeof connect>) => void = () => {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(origin).port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => {});
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server did not close the connection within 10 s; received ${JSON.stringify(received.slice(0, 200))}`));
    }, 10_000);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.on('connect', () => {
      for (const part of parts) socket.write(part);
      after(socket);
    });
  });
}

const bodyOf = (answer: string): unknown => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));

/** The answers to HTTP the server cannot parse: who owns them, as docs/http.md says. */
const UNPARSABLE: Record<string, { garbage(answer: string): void; headerOverflow(answer: string): void }> = {
  // node:http's own clientError answer: the application owns the server.
  'node:http': {
    garbage: (answer) => expect(answer).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'),
    headerOverflow: (answer) => expect(answer).toBe('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n'),
  },
  // Fastify answers with its own JSON body.
  fastify: {
    garbage: (answer) => {
      expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(bodyOf(answer)).toEqual({ error: 'Bad Request', message: 'Client Error', statusCode: 400 });
    },
    headerOverflow: (answer) => {
      expect(answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
      expect(bodyOf(answer)).toMatchObject({ statusCode: 431 });
    },
  },
  // listen() owns its server: the service's error body.
  'listen()': {
    garbage: (answer) => {
      expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(bodyOf(answer)).toMatchObject({ ResultCode: 400, error: { code: 'invalid_request' } });
    },
    headerOverflow: (answer) => {
      expect(answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
      expect(bodyOf(answer)).toMatchObject({ ResultCode: 431, error: { code: 'request_header_too_large' } });
    },
  },
};
// Express and @hono/node-server leave node:http's answer as it is.
UNPARSABLE['express'] = UNPARSABLE['node:http'] as (typeof UNPARSABLE)[string];
UNPARSABLE['hono'] = UNPARSABLE['node:http'] as (typeof UNPARSABLE)[string];
UNPARSABLE['hono (fetch only)'] = UNPARSABLE['node:http'] as (typeof UNPARSABLE)[string];

const SLOW_BODY_TIMEOUT_MS = 1000;

describe.each(shims)('mounted on $name', (shim) => {
  let handler: CrosstabHandler;
  let server: RunningShim;
  const log: AccessLogEntry[] = [];

  beforeAll(async () => {
    handler = await createCrosstabHandler({
      datasets: [gss],
      keys: keys.path,
      usage: join(dir, `usage-${shim.name}.ndjson`),
      // Short, so that a slow body meets it within the test; long enough for a body sent at once.
      bodyTimeoutMs: SLOW_BODY_TIMEOUT_MS,
      log: (entry) => {
        if ('requestId' in entry) log.push(entry);
      },
    });
    server = await shim.start(handler);
  });
  afterAll(async () => {
    await server?.close();
    await handler?.close();
  });
  afterEach(() => vi.restoreAllMocks());

  it.each([
    ['GET', '/v1', 404],
    ['POST', '/v1', 404],
    ['GET', '/v1?x=1', 404],
    ['GET', '/v1/', 404],
    ['GET', '/v1/docs?x=1', 200],
    ['HEAD', '/v1/docs', 200],
    ['OPTIONS', '/v1/crosstab', 200],
    ['GET', '/v1//docs', 404],
    ['GET', '/v1/docs/', 404],
    ['GET', `/v1/${'a'.repeat(300)}`, 404],
    ['GET', '/v1/a%2Fb', 404],
    ['GET', '/v1/a;b=c', 404],
    ['DELETE', '/v1/crosstab', 405],
  ])('%s %s reaches the handler (%i with its headers)', async (method, path, status) => {
    expect(handler.owns(path)).toBe(true);
    const response = await fetch(`${server.origin}${path}`, { method });
    const text = await response.text();
    const body = (text === '' ? {} : JSON.parse(text)) as { error?: { code: string } };
    expect(response.status, JSON.stringify(body)).toBe(status);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    if (status === 404) expect(body.error?.code).toBe('not_found');
  });

  it('a path with malformed percent-encoding: the handler, except on Fastify, whose router answers it first (docs/http.md)', async () => {
    const path = '/v1/%zz';
    expect(handler.owns(path)).toBe(true);
    const response = await fetch(`${server.origin}${path}`);
    const body = (await response.json()) as Record<string, unknown>;
    if (shim.name === 'fastify') {
      expect(response.status).toBe(400);
      expect(body).toMatchObject({ code: 'FST_ERR_BAD_URL', statusCode: 400 });
      expect(response.headers.get('x-request-id')).toBeNull();
    } else {
      expect(response.status).toBe(404);
      expect(body).toMatchObject({ error: { code: 'not_found' } });
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('an upload the client aborts reaches no error handler; the service logs it once', async () => {
    const printed = [vi.spyOn(console, 'error'), vi.spyOn(console, 'warn'), vi.spyOn(console, 'info'), vi.spyOn(console, 'log')];
    const before = log.length;
    const head = `POST /v1/crosstab HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nService-Engine-Authorizer: ${keys.all}\r\nContent-Length: 1000\r\n\r\n`;
    await exchange(server.origin, [head, '{"SurveyCode": "GSS", '], (socket) => setTimeout(() => socket.destroy(), 200));
    await expect.poll(() => log.length - before, { timeout: 5000 }).toBeGreaterThan(0);
    // Whatever else was to come has come by the time a request that follows is answered.
    expect((await fetch(`${server.origin}/v1/docs`)).status).toBe(200);
    const aborted = log.slice(before).filter((entry) => entry.method === 'POST');
    expect(aborted).toMatchObject([{ path: '/v1/crosstab', status: 400, code: 'invalid_request' }]);
    expect(server.frameworkErrors).toEqual([]);
    for (const spy of printed) expect(spy).not.toHaveBeenCalled();
  });

  it.each([
    ['an unknown key', 'POST /v1/crosstab', `Service-Engine-Authorizer: ctk_${'A'.repeat(43)}`, 401],
    ['an unknown path', 'POST /v1/nowhere', `Service-Engine-Authorizer: ctk_${'A'.repeat(43)}`, 404],
    ['GET /docs', 'GET /v1/docs', '', 200],
  ])('a body that never completes, with %s: answered at once with Connection: close, then closed', async (_name, requestLine, header, status) => {
    const head = `${requestLine} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${header === '' ? '' : `${header}\r\n`}Content-Length: 1000\r\n\r\n`;
    // 10 of the 1000 bytes, and the connection left open: only the server can end the exchange.
    const answer = await exchange(server.origin, [head, '{"Survey":']);
    const headers = `${answer.slice(0, answer.indexOf('\r\n\r\n')).toLowerCase()}\r\n`;
    expect(headers).toMatch(new RegExp(`^http/1\\.1 ${status} `));
    expect(headers).toContain('\r\nconnection: close\r\n');
    expect(headers).toContain('\r\nx-request-id: ');
  });

  it('a valid request whose body is too slow: 408 request_timeout with Connection: close, then closed, not billed', async () => {
    const body = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] });
    const head = `POST /v1/crosstab HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nService-Engine-Authorizer: ${keys.all}\r\nContent-Length: ${body.length}\r\n\r\n`;
    const before = log.length;
    // The first 10 bytes, the rest never: only the body timeout can end the exchange.
    const answer = await exchange(server.origin, [head, body.slice(0, 10)]);
    const headers = `${answer.slice(0, answer.indexOf('\r\n\r\n')).toLowerCase()}\r\n`;
    expect(headers).toMatch(/^http\/1\.1 408 /);
    expect(headers).toContain('\r\nconnection: close\r\n');
    expect(bodyOf(answer)).toMatchObject({ ResultCode: 408, error: { code: 'request_timeout' } });
    expect(log.slice(before).filter((entry) => entry.method === 'POST')).toMatchObject([{ path: '/v1/crosstab', status: 408, code: 'request_timeout' }]);
    expect(readLedger(join(dir, `usage-${shim.name}.ndjson`))).toEqual([]);
    // The same request sent whole is answered (the timeout is per request, from its headers).
    const whole = await fetch(`${server.origin}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': keys.all }, body });
    expect(whole.status).toBe(200);
    expect(readLedger(join(dir, `usage-${shim.name}.ndjson`))).toHaveLength(1);
    expect(server.frameworkErrors).toEqual([]);
  });

  it('a request target in absolute form is routed by its path and query, whatever host it names (docs/http.md)', async () => {
    const port = new URL(server.origin).port;
    const body = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] });
    const post = (target: string): Promise<string> =>
      exchange(server.origin, [
        `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nService-Engine-Authorizer: ${keys.all}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      ]);
    const originForm = await post('/v1/crosstab');
    expect(originForm).toMatch(/^HTTP\/1\.1 200 /);
    for (const target of [`http://127.0.0.1:${port}/v1/crosstab`, 'http://elsewhere.example/v1/crosstab']) {
      const answer = await post(target);
      expect(answer, target).toMatch(/^HTTP\/1\.1 200 /);
      expect(bodyOf(answer), target).toEqual(bodyOf(originForm));
    }
    // The query goes with the path; a path the handler does not own goes on to the framework.
    const docs = await exchange(server.origin, [`GET http://elsewhere.example/v1/docs?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`]);
    expect(docs).toMatch(/^HTTP\/1\.1 200 /);
    expect(bodyOf(docs)).toMatchObject({ openapi: expect.any(String) });
    const unknown = await exchange(server.origin, [`GET http://127.0.0.1:${port}/v1/nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`]);
    expect(unknown).toMatch(/^HTTP\/1\.1 404 /);
    expect(bodyOf(unknown)).toMatchObject({ error: { code: 'not_found' } });
    expect(server.frameworkErrors).toEqual([]);
  });

  it('HTTP the server cannot parse gets the answer docs/http.md names for this mount', async () => {
    const expected = UNPARSABLE[shim.name];
    if (expected === undefined) throw new Error(`docs/http.md and this test name no answer for mount ${shim.name}`);
    expected.garbage(await exchange(server.origin, ['GARBAGE\r\n\r\n']));
    expected.headerOverflow(await exchange(server.origin, [`GET /v1/docs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`]));
  });
});
