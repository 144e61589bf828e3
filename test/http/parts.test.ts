// The adapter's parts on their own: CORS policy, options, ledger, key file and key store,
// and how the shims share a host application with other routes.
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { connect } from 'node:net';
import { appendFileSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, CrosstabError, ErrorCode, openDataset, toServiceResponse } from '../../src/index.js';
import { nhanesCsv } from '../support/paths.js';
import {
  addApiKey,
  createCrosstabHandler,
  crosstabExpress,
  listen,
  crosstabFastify,
  crosstabHono,
  FileKeyStore,
  hashApiKey,
  NdjsonLedger,
  readKeyFile,
  type ApiKeyRecord,
  type CrosstabHandler,
  type HandlerRequest,
  type KeyStore,
  type UsageSink,
} from '../../src/http/index.js';
import { createCorsPolicy } from '../../src/http/cors.js';
import { readLedger, servedFixture, textOf } from './support.js';

const { gss, dir, keys } = await servedFixture();

function crosstabRequest(key: string, origin?: string): HandlerRequest {
  return {
    method: 'POST',
    path: '/v1/crosstab',
    headers: { 'content-type': 'application/json', 'service-engine-authorizer': key, ...(origin ? { origin } : {}) },
    body: JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] }),
  };
}

describe('AudienceReportUnits', () => {
  it('reports WgtAud in the units of the dataset', async () => {
    const out = join(dir, 'nhanes-thousands.arrow');
    await buildDataset(nhanesCsv, { weights: ['WTMEC2YR'], survey: 'NHANES', units: 1000, out });
    const thousands = await openDataset(out);
    const handler = await createCrosstabHandler({ datasets: [thousands], keys: keys.path, usage: join(dir, 'units.ndjson') });
    try {
      const request = { method: 'POST', path: '/v1/crosstab', headers: { 'content-type': 'application/json', 'service-engine-authorizer': keys.all } };
      const response = await handler.handle({ ...request, body: JSON.stringify({ SurveyCode: 'NHANES', PopulationBaseCode: '*', TargetCodes: ['RIAGENDR=2'] }) });
      const body = JSON.parse(textOf(response.body));
      const direct = await thousands.crosstab({ base: '*', targets: ['RIAGENDR=2'] });
      expect(body.AudienceReportUnits).toBe(1000);
      expect(body).toEqual(toServiceResponse(direct));
      expect(body.Results[0].WgtAud * body.AudienceReportUnits).toBeCloseTo(direct.targets[0]!.weighted, 3);
    } finally {
      await handler.close();
      thousands.close();
    }
  });
});

describe('CORS policy', () => {
  it('echoes an allowed origin, answers others with an allowed one, and varies on Origin', () => {
    const cors = createCorsPolicy(['https://app.example', 'http://localhost:3000']);
    expect(cors.responseHeaders('http://localhost:3000')).toMatchObject({ 'access-control-allow-origin': 'http://localhost:3000', vary: 'Origin' });
    expect(cors.responseHeaders('https://evil.example')['access-control-allow-origin']).toBe('https://app.example');
    expect(cors.responseHeaders(undefined)['access-control-allow-origin']).toBe('https://app.example');
    expect(createCorsPolicy('*').preflightHeaders('https://x.example', ['POST', 'OPTIONS'])).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST, OPTIONS',
      'access-control-allow-headers': 'Content-Type, Service-Engine-Authorizer, Authorization',
    });
  });

  it.each([['https://app.example/'], ['app.example'], ['https://app.example/path'], ['null']])('refuses %s as an origin', (origin) => {
    expect(() => createCorsPolicy([origin])).toThrow(/corsOrigins/);
  });
});

describe('createCrosstabHandler options', () => {
  const base = () => ({ datasets: [gss], keys: keys.path, usage: join(dir, 'options.ndjson') });

  it.each([
    [{ basePath: '/api' }, /basePath/],
    [{ basePath: 'v1' }, /basePath/],
    [{ maxBodyBytes: 10 }, /maxBodyBytes/],
    [{ datasets: [] }, /datasets/],
    [{ corsOrigins: ['https://x.example/'] }, /corsOrigins/],
    [{ usage: undefined }, /^usage must be the path of the usage ledger/],
    [{ usage: {} }, /^usage must be/],
    [{ keys: undefined }, /^keys must be the path of a key file, or a KeyStore/],
  ])('rejects %j', async (override, message) => {
    await expect(createCrosstabHandler({ ...base(), ...(override as object) })).rejects.toThrow(message);
  });

  it('rejects two datasets of one survey and a missing key file, naming the fix', async () => {
    await expect(createCrosstabHandler({ ...base(), datasets: [gss, gss] })).rejects.toThrow(/survey GSS/);
    const missing = createCrosstabHandler({ ...base(), keys: join(dir, 'nope.json') });
    await expect(missing).rejects.toBeInstanceOf(CrosstabError);
    await expect(missing).rejects.toMatchObject({ code: 'file_not_found', details: { hint: expect.stringMatching(/keys add/) } });
  });

  it('mounts under another base path with a v1 segment and advertises it', async () => {
    const handler = await createCrosstabHandler({ ...base(), basePath: '/audience/v1/', serverUrl: 'https://api.example/audience/v1' });
    const docs = await handler.handle({ method: 'GET', path: '/audience/v1/docs', headers: {} });
    expect(docs.status).toBe(200);
    expect(JSON.parse(textOf(docs.body)).servers[0].url).toBe('https://api.example/audience/v1');
    expect((await handler.handle({ method: 'GET', path: '/v1/docs', headers: {} })).status).toBe(404);
    await handler.close();
  });

  it('refuses new requests with 503 once closing, and never bills them', async () => {
    const ledger = join(dir, 'closing.ndjson');
    const handler = await createCrosstabHandler({ ...base(), usage: ledger });
    const inFlight = handler.handle(crosstabRequest(keys.all));
    const closed = handler.close();
    const late = await handler.handle(crosstabRequest(keys.all));
    expect((await inFlight).status).toBe(200);
    await closed;
    expect(late.status).toBe(503);
    expect(JSON.parse(textOf(late.body)).error.code).toBe('unavailable');
    expect(readLedger(ledger)).toHaveLength(1);
  });

  it('answers 503 and no result when usage cannot be recorded', async () => {
    const failing: UsageSink = { record: () => Promise.reject(new Error('disk full')), close: async () => {} };
    const entries: Array<{ status?: number }> = [];
    const handler = await createCrosstabHandler({ ...base(), usage: failing, log: (entry) => entries.push(entry as { status?: number }) });
    const response = await handler.handle(crosstabRequest(keys.all));
    expect(response.status).toBe(503);
    expect(response.body).not.toContain('Results');
    expect(entries[0]?.status).toBe(503);
    await handler.close();
  });

  it('takes a custom KeyStore and logs no API key', async () => {
    const record: ApiKeyRecord = { id: 'key_custom', hash: 'sha256:' + '0'.repeat(64), surveys: ['GSS'], groups: ['_ALL_'], createdAt: '', revoked: false };
    const store: KeyStore = { lookup: async (apiKey) => (apiKey === keys.all ? record : undefined), close: async () => {} };
    const lines: string[] = [];
    const handler = await createCrosstabHandler({ ...base(), keys: store, log: (entry) => lines.push(JSON.stringify(entry)) });
    const ok = await handler.handle(crosstabRequest(keys.all, 'https://app.example'));
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('*');
    expect((await handler.handle(crosstabRequest(keys.gss))).status).toBe(401);
    expect(lines.join('\n')).toContain('key_custom');
    expect(lines.join('\n')).not.toMatch(/ctk_/);
    await handler.close();
  });
});

describe('listen()', () => {
  function raw(port: number, request: string): Promise<string> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request));
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('close', () => resolve(received));
      socket.on('error', () => resolve(received));
    });
  }

  it('answers requests node:http cannot parse with the error body', async () => {
    const handler = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: join(dir, 'listen.ndjson') });
    const server = await listen(handler, { port: 0 });
    try {
      const garbage = await raw(server.port, 'NOT HTTP AT ALL\r\n\r\n');
      expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(garbage.slice(garbage.indexOf('\r\n\r\n') + 4))).toMatchObject({ ResultCode: 400, error: { code: 'invalid_request' } });
      const huge = await raw(server.port, `GET /v1/docs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(huge).toMatch(/^HTTP\/1\.1 431 /);
      expect(huge).toContain('"request_header_too_large"');
      expect((await fetch(`${server.url}/docs`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('NdjsonLedger', () => {
  it('groups concurrent records into few write + fdatasync batches, one line each', async () => {
    const path = join(dir, 'group-commit.ndjson');
    const events: string[] = [];
    const ledger = await NdjsonLedger.open(path, { onEvent: (event, message) => events.push(`${event}: ${message}`) });
    const records = Array.from({ length: 200 }, (_, i) => ({ time: new Date().toISOString(), requestId: `r${i}`, keyId: 'key_x', survey: 'GSS', targets: 1 }));
    await Promise.all(records.map((record) => ledger.record(record)));
    expect(ledger.stats.records).toBe(200);
    expect(ledger.stats.flushes).toBeLessThan(200);
    expect(ledger.stats.writeMs).toBeGreaterThan(0);
    await ledger.close();
    // On close it says how many records shared a durable write and how long one took.
    const { flushes, writeMs } = ledger.stats;
    expect(events).toEqual([
      `ledger_closed: Closed usage ledger ${path}: 200 records in ${flushes} durable writes (${(200 / flushes).toFixed(1)} billed calls per durable write, ${Math.round((writeMs * 1000) / flushes)} µs per write on average).`,
    ]);
    await expect(ledger.record(records[0]!)).rejects.toThrow(/closed/);
    expect(readLedger(path).map((record) => record.requestId)).toEqual(records.map((record) => record.requestId));
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('starts on a fresh line after a torn last line', async () => {
    const path = join(dir, 'torn.ndjson');
    writeFileSync(path, '{"time":"t","requestId":"a","keyId":"k","survey":"GSS","targets":1}\n{"time":"t","requestId":"b","ke');
    const ledger = await NdjsonLedger.open(path);
    await ledger.record({ time: 't', requestId: 'c', keyId: 'k', survey: 'GSS', targets: 2 });
    await ledger.close();
    expect(readLedger(path).map((record) => record.requestId)).toEqual(['a', 'c']);
  });
});

describe('key file and key store', () => {
  it('stores only hashes, with owner-only permissions', async () => {
    const path = join(dir, 'hashes.json');
    const { apiKey, record } = await addApiKey(path, { surveys: ['GSS'], groups: ['_ALL_'] });
    expect(apiKey).toMatch(/^ctk_[A-Za-z0-9_-]{43}$/);
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain(apiKey.slice(4));
    expect(record.hash).toBe(hashApiKey(apiKey));
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('a key file locked by another command is `locked`, naming the lock file, not an invalid option', async () => {
    const path = join(dir, 'locked.json');
    await addApiKey(path, { surveys: ['GSS'], groups: ['_ALL_'] });
    writeFileSync(`${path}.lock`, ''); // fresh, so not stale: the command waits its 5 s, then gives up
    try {
      const error = await addApiKey(path, { surveys: ['GSS'], groups: ['_ALL_'] }).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(CrosstabError);
      expect((error as CrosstabError).code).toBe(ErrorCode.locked);
      expect((error as CrosstabError).details.file).toBe(`${path}.lock`);
      expect((error as CrosstabError).details.hint).toMatch(/delete the lock file/);
    } finally {
      rmSync(`${path}.lock`, { force: true });
    }
  }, 20_000);

  it('loses no key when commands add keys concurrently', async () => {
    const path = join(dir, 'concurrent.json');
    await Promise.all(Array.from({ length: 8 }, (_, i) => addApiKey(path, { surveys: ['GSS'], groups: ['_ALL_'], name: `k${i}` })));
    expect((await readKeyFile(path)).keys).toHaveLength(8);
  });

  it.each([
    ['not json', /not valid JSON/],
    ['{"format":"crosstab-keys/1","keys":[{"id":"a","hash":"md5:x","surveys":["GSS"],"groups":["_ALL_"],"revoked":false}]}', /hash/],
    ['{"format":"crosstab-keys/1","keys":[{"id":"a","hash":"sha256:' + 'a'.repeat(64) + '","surveys":[],"groups":["_ALL_"],"revoked":false}]}', /surveys/],
    ['{"format":"other","keys":[]}', /format/],
  ])('refuses an invalid key file: %s', async (text, message) => {
    const path = join(dir, `invalid-${Math.random()}.json`);
    writeFileSync(path, text);
    await expect(readKeyFile(path)).rejects.toThrow(message);
  });

  it('keeps the last good keys when the file turns invalid, and reloads when it is fixed', async () => {
    const path = join(dir, 'reload.json');
    const first = await addApiKey(path, { surveys: ['GSS'], groups: ['_ALL_'] });
    const errors: unknown[] = [];
    const store = await FileKeyStore.open(path, { reloadIntervalMs: 0, onReloadError: (error) => errors.push(error) });
    expect((await store.lookup(first.apiKey))?.id).toBe(first.record.id);
    const good = readFileSync(path, 'utf8');
    writeFileSync(path, '{ broken');
    expect((await store.lookup(first.apiKey))?.id).toBe(first.record.id);
    expect(errors).toHaveLength(1);
    writeFileSync(path, good);
    appendFileSync(path, ' ');
    const second = await addApiKey(path, { surveys: ['GSS'], groups: ['_ALL_'] });
    expect((await store.lookup(second.apiKey))?.id).toBe(second.record.id);
    await store.close();
  });
});

describe('shims share a host application', () => {
  let handler: CrosstabHandler;
  beforeAll(async () => {
    handler = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: join(dir, 'host.ndjson') });
  });
  afterAll(() => handler.close());

  it('Express: other routes and body parsers keep working', async () => {
    const app = express();
    app.use(crosstabExpress(handler));
    app.post('/other', express.json(), (req, res) => res.json({ echoed: req.body }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const other = await fetch(`${origin}/other`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(await other.json()).toEqual({ echoed: { a: 1 } });
    expect((await fetch(`${origin}/v1/docs`)).status).toBe(200);
    server.closeAllConnections();
    server.close();
  });

  it('Fastify: the plugin leaves JSON parsing of other routes alone', async () => {
    const app = Fastify();
    await app.register(crosstabFastify(handler));
    app.post('/other', async (request) => ({ echoed: request.body }));
    const other = await app.inject({ method: 'POST', url: '/other', payload: { a: 1 } });
    expect(other.json()).toEqual({ echoed: { a: 1 } });
    const crosstab = await app.inject({ method: 'POST', url: '/v1/crosstab', headers: crosstabRequest(keys.all).headers as Record<string, string>, payload: crosstabRequest(keys.all).body as string });
    expect(crosstab.statusCode).toBe(200);
    await app.close();
  });

  it('Hono: other routes keep working', async () => {
    const app = new Hono();
    app.use(crosstabHono(handler));
    app.get('/other', (c) => c.text('other'));
    expect(await (await app.request('/other')).text()).toBe('other');
    const crosstab = await app.request('/v1/crosstab', { method: 'POST', headers: crosstabRequest(keys.all).headers as Record<string, string>, body: crosstabRequest(keys.all).body as string });
    expect(crosstab.status).toBe(200);
  });
});
