// The portal reads a form as the API reads a body: within the body timeout (408 after it,
// not held until the server's 30 s request timeout) and at most maxBodyBytes (413 "Form too
// large", not 403 "Form refused").
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { csrfOf, send } from './portal-client.js';
import { startPortalServer, type PortalServer } from './portal-server.js';

describe('portal form bodies', () => {
  let served: PortalServer;
  let origin: string;
  let cookie: string;
  let csrf: string;

  beforeAll(async () => {
    served = await startPortalServer({
      datasets: [inject('testDatasets').gss],
      prefix: 'crosstab-portal-body-',
      licences: [['GSS'], ['GSS:demographics']],
      mustChangePassword: false,
      handler: { bodyTimeoutMs: 400 },
    });
    origin = served.origin;
    cookie = await served.signInCookie('analyst@acme.example');
    csrf = csrfOf(await send(origin, 'GET', '/portal/keys', { cookie }));
  });
  afterAll(() => served?.close());

  it('answers a form larger than maxBodyBytes with 413, naming the limit', async () => {
    const reply = await send(origin, 'POST', '/portal/keys', { cookie, form: { csrf, name: 'x'.repeat(20_000) } });
    expect(reply.status).toBe(413);
    expect(reply.body).toContain('larger than 16384 bytes');
    expect(reply.headers['connection']).toBe('close');
    // A form within the limit still works.
    expect((await send(origin, 'POST', '/portal/keys', { cookie, form: { csrf, name: 'ci' } })).status).toBe(200);
  });

  it('answers a form whose body stops coming with 408 after the body timeout', async () => {
    const { port } = new URL(origin);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(`POST /portal/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 200\r\n\r\ncsrf=`);
      });
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('did not arrive within 400 ms');
  });
});
