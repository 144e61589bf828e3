// Who the caller is behind proxies, and what that is used for, over real HTTP: forwarded
// addresses in every form a proxy writes them (ip:port, bracketed IPv6, IPv4-mapped IPv6)
// count as one client; X-Forwarded-For and X-Forwarded-Proto count only from a trusted proxy
// (the portal's Secure cookie); and an address that sends too many unknown API keys gets 429
// with Retry-After before any key lookup, while keys the server knows keep working.
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientAddress, createCrosstabHandler, generateApiKey, listen, normalizeAddress, proxyTrust, type RunningServer } from '../../src/http/index.js';
import { DbKeyStore, DbUsageSink, openDatabase, type Database } from '../../src/access/index.js';
import { createPortal, mountPortal } from '../../src/portal/index.js';
import { servedFixture, tempDir } from './support.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const BODY = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] });
const { gss: dataset, dir, keys } = await servedFixture();

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request from a chosen loopback source address (127.0.0.x all reach 127.0.0.1). */
function send(url: string, options: { method?: string; from?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', localAddress: options.from ?? '127.0.0.1', headers: options.headers ?? {}, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const crosstab = (server: RunningServer, apiKey: string, from: string, headers: Record<string, string> = {}): Promise<Reply> =>
  send(`${server.url}/crosstab`, { method: 'POST', from, body: BODY, headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey, ...headers } });

describe('forwarded addresses', () => {
  it('normalizes the forms proxies write: ip:port, bracketed IPv6 with or without port, IPv4-mapped IPv6, zone ids', () => {
    expect(normalizeAddress('203.0.113.7:5555')).toBe('203.0.113.7');
    expect(normalizeAddress(' 203.0.113.7 ')).toBe('203.0.113.7');
    expect(normalizeAddress('[2001:DB8::1]:443')).toBe('2001:db8:0:0:0:0:0:1');
    expect(normalizeAddress('[2001:db8::1]')).toBe('2001:db8:0:0:0:0:0:1');
    expect(normalizeAddress('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(normalizeAddress('[::ffff:203.0.113.7]:80')).toBe('203.0.113.7');
    expect(normalizeAddress('::ffff:cb00:7107')).toBe('203.0.113.7');
    expect(normalizeAddress('fe80::1%eth0')).toBe('fe80:0:0:0:0:0:0:1');
    for (const junk of ['', 'unknown', '203.0.113.7:', '1.2.3', '[2001:db8::1', 'example.com:80', '2001:db8::1:80:1:2:3:4']) expect(normalizeAddress(junk)).toBeUndefined();
  });

  it('counts the client a trusted proxy appended, in any of those forms, as one address; an untrusted peer only as itself', () => {
    const at = (remoteAddress: string, forwarded: string, trusted: boolean | string[]) => clientAddress({ method: 'POST', path: '/', headers: { 'x-forwarded-for': forwarded }, remoteAddress }, proxyTrust(trusted));
    const proxy = ['10.0.0.7'];
    for (const forwarded of ['203.0.113.7', '203.0.113.7:5555', '::ffff:203.0.113.7', '[::ffff:203.0.113.7]:1', '198.51.100.1, 203.0.113.7']) {
      expect(at('10.0.0.7', forwarded, proxy)).toBe('203.0.113.7');
      expect(at('::ffff:10.0.0.7', forwarded, proxy)).toBe('203.0.113.7');
    }
    expect(at('10.0.0.7', '[2001:db8:0:1::5]:443', proxy)).toBe('2001:db8:0:1::/64');
    expect(at('10.0.0.7', '2001:db8:0:1:ffff::9', proxy)).toBe('2001:db8:0:1::/64');
    // Not the proxy: X-Forwarded-For is the caller's own text.
    expect(at('10.0.0.8', '203.0.113.7', proxy)).toBe('10.0.0.8');
    // A chain of trusted proxies is walked right to left; the client's own entries are not.
    expect(at('10.0.0.7', '198.51.100.1, 203.0.113.7, 10.0.0.9', ['10.0.0.0/24'])).toBe('203.0.113.7');
    // `true` trusts the peer, and only the entry it appended.
    expect(at('10.0.0.7', '203.0.113.7, 10.0.0.9', true)).toBe('10.0.0.9');
    // Garbage from a trusted proxy counts the proxy, not a text the client could vary.
    expect(at('10.0.0.7', 'garbage', proxy)).toBe('10.0.0.7');
  });

  it('refuses a trusted-proxy list entry that is no address, naming it', () => {
    expect(() => proxyTrust(['10.0.0.7', 'nginx'], '--trust-proxy')).toThrow(/--trust-proxy: "nginx" is not an IP address or CIDR range/);
    expect(() => proxyTrust(['10.0.0.0/33'])).toThrow(/"10.0.0.0\/33" is not an IP address or CIDR range/);
    expect(() => proxyTrust([])).toThrow(/trustProxy must be true, false or a list/);
  });
});

describe('the portal cookie is Secure only when a trusted proxy says https', () => {
  let db: Database;
  const servers: RunningServer[] = [];

  beforeAll(async () => {
    db = await openDatabase(await newEmbeddedFolder(join(tempDir('crosstab-proto-'), 'db')));
    const keyStore = new DbKeyStore(db);
    const api = await createCrosstabHandler({ datasets: [dataset], keys: keyStore, usage: new DbUsageSink(db) });
    for (const trustProxy of [false, ['127.0.0.2']]) {
      servers.push(await listen(mountPortal(api, createPortal({ db, keys: keyStore, apiUrl: 'http://127.0.0.1/v1', exampleBody: '{}', trustProxy })), { port: 0 }));
    }
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    await db?.close();
  });

  const cookieOf = async (server: RunningServer, from: string, proto: string): Promise<string> =>
    String((await send(`${server.url.replace(/\/v1$/, '')}/portal/sign-in`, { from, headers: { 'x-forwarded-proto': proto } })).headers['set-cookie']);

  it('ignores X-Forwarded-Proto from a peer that is not a trusted proxy', async () => {
    expect(await cookieOf(servers[0]!, '127.0.0.2', 'https')).not.toMatch(/; Secure/);
    expect(await cookieOf(servers[1]!, '127.0.0.3', 'https')).not.toMatch(/; Secure/);
  });

  it("reads a trusted proxy's X-Forwarded-Proto as a list, case-insensitively: the first entry is the client's scheme", async () => {
    expect(await cookieOf(servers[1]!, '127.0.0.2', 'https')).toMatch(/; Secure/);
    expect(await cookieOf(servers[1]!, '127.0.0.2', 'HTTPS, http')).toMatch(/; Secure/);
    expect(await cookieOf(servers[1]!, '127.0.0.2', 'http, https')).not.toMatch(/; Secure/);
  });
});

describe('an address that sends too many unknown API keys', () => {
  const MAX = 5;
  let server: RunningServer;

  beforeAll(async () => {
    const handler = await createCrosstabHandler({
      datasets: [dataset],
      keys: keys.path,
      usage: join(dir, 'ledger.ndjson'),
      trustProxy: ['127.0.0.9'],
      authFailures: { maxFailures: MAX, windowSeconds: 60 },
    });
    server = await listen(handler, { port: 0 });
  });
  afterAll(() => server?.close(0));

  it('gets 429 with Retry-After and the error body, before any lookup; its known keys and other addresses still work', async () => {
    for (let i = 0; i < MAX; i++) {
      const reply = await crosstab(server, i % 2 === 0 ? generateApiKey() : keys.revoked, '127.0.0.2');
      expect(reply.status).toBe(401);
    }
    const refused = await crosstab(server, generateApiKey(), '127.0.0.2');
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const body = JSON.parse(refused.body) as { ResultCode: number; ResultDescription: string; error: { code: string; message: string; hint: string } };
    expect(body.ResultCode).toBe(429);
    expect(body.error.code).toBe('too_many_failed_keys');
    expect(body.ResultDescription).toBe(body.error.message);
    expect(body.error.message).toMatch(/unknown, revoked or expired API key from your address/);
    expect(body.error.hint).toMatch(/Retry-After/);
    // A malformed key costs no lookup: still the plain 401.
    expect((await crosstab(server, 'not-a-key', '127.0.0.2')).status).toBe(401);
    // A key the server knows still works from the refused address.
    expect((await crosstab(server, keys.all, '127.0.0.2')).status).toBe(200);
    // Other addresses are not affected.
    expect((await crosstab(server, generateApiKey(), '127.0.0.3')).status).toBe(401);
  });

  it('behind a trusted proxy, counts the forwarded client in every form as one address, and not the proxy', async () => {
    const forms = ['203.0.113.7', '203.0.113.7:5555', '::ffff:203.0.113.7', '[::ffff:203.0.113.7]:443'];
    for (let i = 0; i < MAX; i++) {
      expect((await crosstab(server, generateApiKey(), '127.0.0.9', { 'x-forwarded-for': forms[i % forms.length] as string })).status).toBe(401);
    }
    expect((await crosstab(server, generateApiKey(), '127.0.0.9', { 'x-forwarded-for': '198.51.100.1, 203.0.113.7:1' })).status).toBe(429);
    // Another client behind the same proxy is not refused.
    expect((await crosstab(server, generateApiKey(), '127.0.0.9', { 'x-forwarded-for': '203.0.113.8' })).status).toBe(401);
    // A peer that is not the proxy cannot claim to be another client.
    for (let i = 0; i < MAX; i++) await crosstab(server, generateApiKey(), '127.0.0.4', { 'x-forwarded-for': `198.51.100.${i}` });
    expect((await crosstab(server, generateApiKey(), '127.0.0.4', { 'x-forwarded-for': '198.51.100.99' })).status).toBe(429);
  });
});
