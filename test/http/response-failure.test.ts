// A handler that throws, rejects or answers with a header node:http refuses to write must
// cost that one response (500, logged), never the server: the next request is served.
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listen, type CrosstabHandler, type HandlerResponse, type RunningServer } from '../../src/http/index.js';

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A handler whose answer depends on the path: fine, a header value with CR LF, a throw, a rejection. */
function handler(): CrosstabHandler {
  const ok: HandlerResponse = { status: 200, headers: { 'content-type': 'text/plain' }, body: 'fine' };
  return {
    basePath: '/v1',
    maxBodyBytes: 1024,
    owns: () => true,
    handle(request) {
      if (request.path === '/bad-header') return Promise.resolve({ ...ok, headers: { 'content-disposition': 'attachment; filename="a\r\nX: 1"' } });
      if (request.path === '/bad-char') return Promise.resolve({ ...ok, headers: { 'content-disposition': 'attachment; filename="\u0100"' } });
      if (request.path === '/bad-status') return Promise.resolve({ ...ok, status: 9999 });
      if (request.path === '/rejects') return Promise.reject(new Error('handler failed'));
      return Promise.resolve(ok);
    },
    close: () => Promise.resolve(),
  };
}

describe('a response that cannot be written', () => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    vi.restoreAllMocks();
  });

  it('is a 500 for that request, logged once on stderr; the server keeps serving', async () => {
    const logged: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      logged.push(String(chunk));
      return true;
    });
    server = await listen(handler(), { port: 0 });
    const origin = server.url.replace(/\/v1$/, '');
    for (const path of ['/bad-header', '/bad-char', '/bad-status', '/rejects']) {
      const reply = await get(`${origin}${path}`);
      expect(reply.status, path).toBe(500);
      expect(JSON.parse(reply.body)).toMatchObject({ ResultCode: 500, error: { code: 'internal' } });
      expect((await get(`${origin}/fine`)).body).toBe('fine');
    }
    const lines = logged.filter((line) => line.includes('response_failed'));
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/GET \/bad-header/);
  });
});
