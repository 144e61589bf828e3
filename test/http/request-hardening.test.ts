// Client input the API must refuse, or answer without revealing what the key may not see:
// group metadata in errors, duplicate JSON keys, non-canonical numbers, costly expressions,
// HEAD on /docs, a key whose only group the survey does not have. Real HTTP via listen().
import { join } from 'node:path';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { addApiKey, createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { openRaw } from './raw-http.js';
import { makeKeyFile, readLedger, tempDir, type TestKeys } from './support.js';

const paths = inject('testDatasets');
let keys: TestKeys;
let noGroupKey: string;
let dataset: Dataset;
let server: RunningServer;
let ledger: string;

beforeAll(async () => {
  const dir = tempDir();
  keys = await makeKeyFile(dir);
  noGroupKey = (await addApiKey(keys.path, { surveys: ['GSS'], groups: ['no-such-group'], name: 'no-group' })).apiKey;
  dataset = await openDataset(paths.gss);
  ledger = join(dir, 'usage.ndjson');
  server = await listen(await createCrosstabHandler({ datasets: [dataset], keys: keys.path, usage: ledger }), { port: 0 });
});
afterAll(async () => {
  await server?.close();
  dataset?.close();
});

interface Answer {
  status: number;
  text: string;
  error?: { code: string; message: string; hint: string };
}

async function send(body: string, key = keys.all): Promise<Answer> {
  const response = await fetch(`${server.url}/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': key }, body });
  const text = await response.text();
  const parsed = JSON.parse(text) as { error?: Answer['error'] };
  return { status: response.status, text, ...(parsed.error ? { error: parsed.error } : {}) };
}

const ask = (targets: string[], key = keys.all, base = '*') => send(JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: base, TargetCodes: targets }), key);

describe('a key limited to demographics learns nothing of other groups', () => {
  it.each([
    ['a value of a design variable', 'vpsu=4228.5', /4227|4228/],
    ['a misspelt attitudes variable', 'reli=1', /relig/],
    ['a misspelt attitudes code', 'LIBERL', /LIBERAL|polviews/],
    ['a label of an attitudes variable', 'relig=Catholik', /Protestant|Catholic|did you mean/i],
  ])('%s', async (_what, target, leak) => {
    const answer = await ask([target], keys.gssDemographics);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    const { message, hint } = answer.error!;
    expect(`${message} ${hint}`).not.toMatch(leak);
  });

  it('refuses a variable of another group before looking at its values', async () => {
    // Refused as a name GSS does not have: a value of it (4228.5) is neither confirmed nor suggested.
    const answer = await ask(['vpsu=4228.5'], keys.gssDemographics);
    expect(answer.status).toBe(400);
    expect(answer.error?.code).toBe('unknown_variable');
    expect(answer.error).toEqual((await ask(['vpsx=4228.5'], keys.gssDemographics)).error && JSON.parse(JSON.stringify((await ask(['vpsx=4228.5'], keys.gssDemographics)).error).replaceAll('vpsx', 'vpsu')));
  });

  it('hints name the valid values, or GET /surveys/{SurveyCode}, never a server command', async () => {
    for (const target of ['sexx=1', 'sex=7', 'sex=Femal', 'age=200', 'NOPE']) {
      const answer = await ask([target], keys.gssDemographics);
      expect(answer.status, target).toBe(400);
      expect(answer.error?.hint, target).not.toMatch(/crosstab /);
    }
    expect((await ask(['sex=7'], keys.gssDemographics)).error?.hint).toContain('1 (Male), 2 (Female)');
    expect((await ask(['sexx=1'], keys.gssDemographics)).error?.hint).toMatch(/GET \/v1\/surveys\/GSS lists the variables your key may use\./);
  });

  it('still suggests names and values of its own groups', async () => {
    expect((await ask(['agee=30'], keys.gssDemographics)).error?.message).toMatch(/"age"/);
    expect((await ask(['age=200'], keys.gssDemographics)).error?.message).toMatch(/did you mean/);
  });

  it('an expression another key used first is refused the same way (bound expressions are cached per dataset)', async () => {
    const fresh = await ask(['relig=1..4', 'sex=2'], keys.gssDemographics);
    expect((await ask(['relig=1..4', 'sex=2'])).status).toBe(200);
    const cached = await ask(['relig=1..4', 'sex=2'], keys.gssDemographics);
    expect(cached.status).toBe(400);
    expect(cached.error).toEqual(fresh.error);
  });

  it('a key whose only group the survey does not have cannot query at all', async () => {
    const answer = await ask(['*'], noGroupKey);
    expect(answer.status).toBe(403);
    expect(answer.error?.message).toMatch(/not entitled to any authorization group of survey GSS/);
  });
});

describe('input that must be refused', () => {
  it('a body naming a field twice', async () => {
    const answer = await send('{"SurveyCode":"GSS","PopulationBaseCode":"*","TargetCodes":["sex=2"],"TargetCodes":["sex=1"]}');
    expect(answer.status).toBe(400);
    expect(answer.error?.code).toBe('invalid_json');
    expect(answer.error?.message).toMatch(/"TargetCodes" twice/);
    // The same names in different objects, or a key-like string value, are fine.
    expect((await send('{"SurveyCode":"GSS","PopulationBaseCode":"*","TargetCodes":["SurveyCode:"]}')).error?.code).not.toBe('invalid_json');
    // A name written with an escape is the same name.
    expect((await send('{"SurveyCode":"GSS","PopulationBaseCode":"*","TargetCodes":["sex=2"],"Target\\u0043odes" :["sex=1"]}')).error?.message).toMatch(/"TargetCodes" twice/);
  });

  it('a body with a UTF-8 byte order mark is read without it', async () => {
    const answer = await send(`\ufeff${JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] })}`);
    expect(answer.status).toBe(200);
  });

  it.each(['sex=0x2', 'sex=" 2"', 'sex=+2', 'sex=2.', 'age=0x1e..40'])('a number in a notation the grammar does not have: %s', async (target) => {
    const answer = await ask([target]);
    expect(answer.status).toBe(400);
    expect(answer.error?.code).toBe('invalid_expression');
  });

  it('a compressed body (Content-Encoding) is refused as such, not as text that is not UTF-8', async () => {
    const json = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] });
    for (const [coding, body] of [['gzip', gzipSync(json)], ['deflate', deflateSync(json)], ['br', brotliCompressSync(json)], ['gzip', Buffer.from(json)]] as const) {
      const response = await fetch(`${server.url}/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': coding, 'service-engine-authorizer': keys.all }, body });
      const answer = JSON.parse(await response.text()) as { error: { code: string; message: string; hint: string } };
      expect(response.status).toBe(415);
      expect(answer.error.code).toBe('unsupported_media_type');
      expect(answer.error.message).toContain(`Content-Encoding "${coding}"`);
      expect(answer.error.hint).toMatch(/uncompressed/);
    }
    // A transfer coding other than chunked is passed on by node:http as it came: refused likewise.
    for (const [coding, body] of [['gzip, chunked', `${gzipSync(json).length.toString(16)}\r\n`], ['gzip, chunked', `${Buffer.byteLength(json).toString(16)}\r\n${json}\r\n0\r\n\r\n`]] as const) {
      const connection = await openRaw(server.port);
      connection.write(`POST /v1/crosstab HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: ${coding}\r\nservice-engine-authorizer: ${keys.all}\r\n\r\n${body}`);
      const answer = await connection.answer();
      connection.destroy();
      expect(answer.status, answer.body).toBe(415);
      expect(JSON.parse(answer.body).error.message).toContain(`Transfer-Encoding "${coding}"`);
    }
    const before = readLedger(ledger).length;
    const plain = await fetch(`${server.url}/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'identity', 'service-engine-authorizer': keys.all }, body: json });
    expect(plain.status).toBe(200);
    await plain.text();
    expect(readLedger(ledger).length).toBe(before + 1);
  });

  it('an expression with more than 100 terms', async () => {
    const target = `age=${Array.from({ length: 101 }, (_, i) => i + 18).join(',')}`;
    const answer = await ask([target]);
    expect(answer.status).toBe(400);
    expect(answer.error?.message).toMatch(/more than 100 terms/);
    expect((await ask([`age=${Array.from({ length: 70 }, (_, i) => i + 18).join(',')}`])).status).toBe(200);
  });
});

describe('answers', () => {
  it('value labels stand for their values: sex=Female is sex=2', async () => {
    const byLabel = JSON.parse((await ask(['sex=Female', 'degree="Graduate"'])).text);
    const byValue = JSON.parse((await ask(['sex=2', 'degree=4'])).text);
    expect(byLabel.Results ?? byLabel).toEqual(byValue.Results ?? byValue);
  });

  it('HEAD /docs: the headers of GET, no body, no charge', async () => {
    const before = readLedger(ledger).length;
    // Uncompressed, so that the length is the text's (fetch would decode a compressed body).
    const identity = { 'accept-encoding': 'identity' };
    const head = await fetch(`${server.url}/docs`, { method: 'HEAD', headers: identity });
    const get = await fetch(`${server.url}/docs`, { headers: identity });
    const body = await get.text();
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
    expect(await head.text()).toBe('');
    // Compressed (fetch asks for gzip): the headers of the compressed GET.
    const headGzip = await fetch(`${server.url}/docs`, { method: 'HEAD' });
    const getGzip = await fetch(`${server.url}/docs`);
    await getGzip.arrayBuffer();
    expect(headGzip.headers.get('content-encoding')).toBe('gzip');
    for (const name of ['content-length', 'content-encoding', 'etag']) expect(headGzip.headers.get(name), name).toBe(getGzip.headers.get(name));
    expect(await headGzip.text()).toBe('');
    expect(readLedger(ledger).length).toBe(before);
  });
});
