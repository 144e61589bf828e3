// GET /v1/docs made cheap: bytes made once, gzip and brotli by Accept-Encoding, strong ETags with
// If-None-Match -> 304, Cache-Control and Vary, HEAD; over real HTTP behind every shim.
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset } from '../../src/index.js';
import { buildOpenApiDocument, createCrosstabHandler, type CrosstabHandler } from '../../src/http/index.js';
import { sendRaw as send, servedFixture, shims, type RunningShim } from './support.js';

const { gss, dir, keys } = await servedFixture();

const expectedDocument = (maxBodyBytes = 16384): string => JSON.stringify(buildOpenApiDocument({ serverUrl: '/v1', maxBodyBytes }));

describe.each(shims)('GET /v1/docs over $name', (shim) => {
  let handler: CrosstabHandler;
  let server: RunningShim;

  beforeAll(async () => {
    handler = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: join(dir, `${shim.name.replace(/\W+/g, '-')}.ndjson`) });
    server = await shim.start(handler);
  });
  afterAll(async () => {
    await server.close();
    await handler.close();
  });

  it('sends the document uncompressed without Accept-Encoding, with a strong ETag, Cache-Control and Vary', async () => {
    const answer = await send(server.origin, 'GET', '/v1/docs');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.body.toString('utf8')).toBe(expectedDocument());
    expect(Number(answer.headers['content-length'])).toBe(answer.body.byteLength);
    expect(answer.headers['etag']).toMatch(/^"[0-9a-f]{32}"$/);
    expect(answer.headers['cache-control']).toBe('no-cache');
    expect(String(answer.headers['vary'])).toMatch(/(^|, )Accept-Encoding($|,)/);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
  });

  it.each([
    ['gzip', 'gzip', gunzipSync],
    ['br', 'br', brotliDecompressSync],
    ['gzip, deflate, br', 'br', brotliDecompressSync],
    ['gzip;q=1, br;q=0.5', 'gzip', gunzipSync],
    ['*', 'br', brotliDecompressSync],
    ['br;q=0, *', 'gzip', gunzipSync],
  ] as const)('Accept-Encoding %s: sends %s, which decompresses to the same bytes', async (acceptEncoding, coding, decompress) => {
    const identity = await send(server.origin, 'GET', '/v1/docs');
    const answer = await send(server.origin, 'GET', '/v1/docs', { 'accept-encoding': acceptEncoding });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBe(coding);
    expect(Number(answer.headers['content-length'])).toBe(answer.body.byteLength);
    expect(answer.body.byteLength).toBeLessThan(identity.body.byteLength / 10);
    expect(decompress(answer.body).equals(identity.body)).toBe(true);
    // A strong tag names one byte sequence: each coding has its own.
    expect(answer.headers['etag']).toBe(`${String(identity.headers['etag']).slice(0, -1)}-${coding}"`);
    expect(String(answer.headers['vary'])).toMatch(/Accept-Encoding/);
  });

  it.each(['deflate', 'identity', 'gzip;q=0, br;q=0', 'compress, identity;q=0'])('Accept-Encoding %s: sends the document uncompressed', async (acceptEncoding) => {
    const answer = await send(server.origin, 'GET', '/v1/docs', { 'accept-encoding': acceptEncoding });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.body.toString('utf8')).toBe(expectedDocument());
  });

  it.each(['', 'gzip', 'br'])('answers 304 with no body to If-None-Match of the current ETag (Accept-Encoding "%s")', async (acceptEncoding) => {
    const encoding: Record<string, string> = acceptEncoding === '' ? {} : { 'accept-encoding': acceptEncoding };
    const first = await send(server.origin, 'GET', '/v1/docs', encoding);
    const etag = String(first.headers['etag']);
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await send(server.origin, 'GET', '/v1/docs', { ...encoding, 'if-none-match': ifNoneMatch });
      expect(again.status, ifNoneMatch).toBe(304);
      expect(again.body.byteLength).toBe(0);
      expect(again.headers['etag']).toBe(etag);
      expect(again.headers['cache-control']).toBe('no-cache');
      expect(String(again.headers['vary'])).toMatch(/Accept-Encoding/);
    }
    const head = await send(server.origin, 'HEAD', '/v1/docs', { ...encoding, 'if-none-match': etag });
    expect(head.status).toBe(304);
    // Another document's tag, or another coding's, gets the whole document.
    const stale = await send(server.origin, 'GET', '/v1/docs', { ...encoding, 'if-none-match': '"0123456789abcdef0123456789abcdef"' });
    expect(stale.status).toBe(200);
    expect(stale.body.equals(first.body)).toBe(true);
    const otherCoding = await send(server.origin, 'GET', '/v1/docs', { ...(acceptEncoding === 'gzip' ? {} : { 'accept-encoding': 'gzip' }), 'if-none-match': etag });
    expect(otherCoding.status).toBe(200);
    expect(otherCoding.headers['etag']).not.toBe(etag);
  });

  it('answers HEAD with the headers of GET (the compressed length) and no body', async () => {
    for (const acceptEncoding of ['', 'gzip', 'br']) {
      const encoding: Record<string, string> = acceptEncoding === '' ? {} : { 'accept-encoding': acceptEncoding };
      const get = await send(server.origin, 'GET', '/v1/docs', encoding);
      const head = await send(server.origin, 'HEAD', '/v1/docs', encoding);
      expect(head.status).toBe(200);
      expect(head.body.byteLength).toBe(0);
      for (const name of ['etag', 'content-length', 'content-encoding', 'cache-control', 'vary', 'content-type']) expect(head.headers[name], name).toEqual(get.headers[name]);
    }
  });

  it('serves the same bytes and tag for every spelling of the path', async () => {
    const plain = await send(server.origin, 'GET', '/v1/docs', { 'accept-encoding': 'gzip' });
    const spelled = await send(server.origin, 'GET', '/v1/%64ocs?x=1', { 'accept-encoding': 'gzip' });
    expect(spelled.status).toBe(200);
    expect(spelled.headers['etag']).toBe(plain.headers['etag']);
    expect(spelled.body.equals(plain.body)).toBe(true);
  });
});

describe('the ETag of GET /v1/docs', () => {
  const started: Array<{ handler: CrosstabHandler; server: RunningShim }> = [];
  afterAll(async () => {
    for (const { handler, server } of started) {
      await server.close();
      await handler.close();
    }
  });
  async function serve(maxBodyBytes?: number): Promise<{ handler: CrosstabHandler; origin: string }> {
    const handler = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: join(dir, `etag-${started.length}.ndjson`), ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }) });
    const server = await (shims[0] as (typeof shims)[number]).start(handler);
    started.push({ handler, server });
    return { handler, origin: server.origin };
  }

  it('changes when the document changes, and only then (not with a restart or a dataset reload)', async () => {
    const first = await serve();
    const restarted = await serve();
    const larger = await serve(32768);
    const tags = async (origin: string) => Promise.all(['', 'gzip', 'br'].map(async (coding) => (await send(origin, 'GET', '/v1/docs', coding === '' ? {} : { 'accept-encoding': coding })).headers['etag']));
    const before = await tags(first.origin);
    expect(await tags(restarted.origin)).toEqual(before);
    // maxBodyBytes is in the document ("At most 32768 bytes"): another document, other tags.
    const other = await tags(larger.origin);
    const largerDocument = await send(larger.origin, 'GET', '/v1/docs');
    expect(largerDocument.body.toString('utf8')).toBe(expectedDocument(32768));
    for (let i = 0; i < 3; i++) expect(other[i]).not.toBe(before[i]);
    // The document does not depend on the datasets: a reload keeps it, and its tags.
    const reloaded = await openDataset(inject('testDatasets').gss);
    // The replaced dataset is the file's shared one (closed after all tests).
    expect(first.handler.replaceDataset?.(reloaded)).toBe(gss);
    expect(await tags(first.origin)).toEqual(before);
    const stillCurrent = await send(first.origin, 'GET', '/v1/docs', { 'if-none-match': String(before[0]) });
    expect(stillCurrent.status).toBe(304);
    // A client holding the old document's tag gets the new one whole.
    const changed = await send(larger.origin, 'GET', '/v1/docs', { 'if-none-match': String(before[0]) });
    expect(changed.status).toBe(200);
    reloaded.close();
  });
});
