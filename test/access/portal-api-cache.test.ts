// The portal's public API reference (/portal/api) over real HTTP on the embedded database: the
// OpenAPI document is read and rendered once per portal, not per request (the API's access log
// sees one GET /docs however many pages are served); the public page has a strong ETag per
// coding and answers If-None-Match with 304, gzip and brotli forms that decode to the same
// bytes, and Vary on the coding and the cookie; a signed-in user's page holds the same
// reference inside their own navigation, unstored and without a tag.
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AccessLogEntry } from '../../src/http/index.js';
import { sendRaw } from '../http/support.js';
import { startPortalServer, type PortalServer } from './portal-server.js';

const paths = inject('testDatasets');

describe('portal API reference made once', () => {
  let portal: PortalServer | undefined;
  let origin: string;
  let cookie: string;
  const log: AccessLogEntry[] = [];
  const docsReads = (): number => log.filter((entry) => entry.operation === 'docs').length;

  beforeAll(async () => {
    portal = await startPortalServer({
      datasets: [paths.gss],
      prefix: 'crosstab-portal-api-',
      mustChangePassword: false,
      exampleBody: '{}',
      handler: {
        log: (entry) => {
          if (!('event' in entry)) log.push(entry);
        },
      },
    });
    ({ origin } = portal);
    cookie = await portal.signInCookie('analyst@acme.example');
  });
  afterAll(() => portal?.close());

  it('reads and renders the document once for every page, public and signed in, at once and one after another', async () => {
    const before = docsReads();
    const first = await Promise.all(Array.from({ length: 5 }, () => sendRaw(origin, 'GET', '/portal/api')));
    for (let i = 0; i < 5; i++) await sendRaw(origin, 'GET', '/portal/api', i % 2 === 0 ? {} : { cookie });
    expect(docsReads() - before).toBe(1);
    const bodies = new Set(first.map((reply) => reply.body.toString('utf8')));
    expect(bodies.size).toBe(1);
    const page = [...bodies][0]!;
    expect(first[0]!.status).toBe(200);
    expect(page).toContain('<h1>API reference</h1>');
    expect(page).toContain(`<a href="${(portal as PortalServer).server.url}/docs">OpenAPI document (JSON)</a>`);
    expect(page).toContain('POST</span> <code>/tables</code>');
  });

  it('answers the public page with a strong ETag, 304 on If-None-Match, and gzip and brotli forms of the same bytes', async () => {
    const plain = await sendRaw(origin, 'GET', '/portal/api');
    expect(plain.status).toBe(200);
    expect(plain.headers['etag']).toMatch(/^"[0-9a-f]{32}"$/);
    expect(plain.headers['cache-control']).toBe('no-cache');
    expect(plain.headers['vary']).toBe('Accept-Encoding, Cookie');
    expect(plain.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(plain.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(Number(plain.headers['content-length'])).toBe(plain.body.byteLength);

    const again = await sendRaw(origin, 'GET', '/portal/api', { 'if-none-match': plain.headers['etag'] as string });
    expect(again.status).toBe(304);
    expect(again.body.byteLength).toBe(0);
    expect(again.headers['etag']).toBe(plain.headers['etag']);
    // Another tag (or none) gets the page.
    expect((await sendRaw(origin, 'GET', '/portal/api', { 'if-none-match': '"other"' })).status).toBe(200);

    const gzip = await sendRaw(origin, 'GET', '/portal/api', { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers['etag']).toBe(`${(plain.headers['etag'] as string).slice(0, -1)}-gzip"`);
    expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
    const br = await sendRaw(origin, 'GET', '/portal/api', { 'accept-encoding': 'gzip, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    expect(br.body.byteLength).toBeLessThan(plain.body.byteLength / 5);
    expect((await sendRaw(origin, 'GET', '/portal/api', { 'accept-encoding': 'br', 'if-none-match': br.headers['etag'] as string })).status).toBe(304);
    // The plain tag does not stand for the compressed bytes.
    expect((await sendRaw(origin, 'GET', '/portal/api', { 'accept-encoding': 'br', 'if-none-match': plain.headers['etag'] as string })).status).toBe(200);
  });

  it("gives a signed-in user the same reference in their own navigation, unstored and without a tag (If-None-Match does not apply)", async () => {
    const plain = (await sendRaw(origin, 'GET', '/portal/api')).body.toString('utf8');
    const signed = await sendRaw(origin, 'GET', '/portal/api', { cookie, 'if-none-match': '*' });
    expect(signed.status).toBe(200);
    expect(signed.headers['etag']).toBeUndefined();
    expect(signed.headers['cache-control']).toBe('no-store');
    expect(signed.headers['content-encoding']).toBeUndefined();
    const text = signed.body.toString('utf8');
    expect(text).toContain('analyst@acme.example');
    expect(text).toContain('aria-current="page">API reference</a>');
    const main = (page: string): string => page.slice(page.indexOf('<main'), page.indexOf('</main>'));
    expect(main(text)).toBe(main(plain));
    expect(plain).not.toContain('analyst@acme.example');
  });
});
