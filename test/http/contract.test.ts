// The REST contract (docs/http.md, spec crosstab-service.md) over real HTTP, once per shim, and once
// more through Stoplight Prism, which fails the suite on any answer that breaks GET /v1/docs.
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toServiceResponse } from '../../src/index.js';
import { addApiKey, createCrosstabHandler, revokeApiKey, rotateApiKey, type CrosstabHandler } from '../../src/http/index.js';
import { prismShim, type PrismFindings } from './prism-proxy.js';
import { ContractJudge, makeKeyFile, readLedger, servedFixture, shims, tempDir, type RunningShim, type TestKeys } from './support.js';

const { gss, nhanes, judge } = await servedFixture({ nhanes: true, judge: true });

/** Every shim, and node:http once more behind Prism, which judges each answer against GET /v1/docs. */
const entries: Array<{ name: string; validating?: boolean; start(handler: CrosstabHandler): Promise<RunningShim & { findings?: PrismFindings }> }> = [...shims, prismShim];

describe.each(entries)('REST contract over $name', (shim) => {
  let dir: string;
  let keys: TestKeys;
  let handler: CrosstabHandler;
  let server: RunningShim & { findings?: PrismFindings };
  let ledgerPath: string;
  /** 200s of POST /crosstab received so far: the ledger must hold exactly as many records. */
  let billed = 0;

  beforeAll(async () => {
    dir = tempDir();
    keys = await makeKeyFile(dir);
    ledgerPath = join(dir, 'usage.ndjson');
    handler = await createCrosstabHandler({ datasets: [gss, nhanes], keys: keys.path, usage: ledgerPath, keyReloadIntervalMs: 50 });
    server = await shim.start(handler);
  });
  afterAll(async () => {
    await server.close();
    await handler.close();
  });

  interface Reply {
    status: number;
    headers: Headers;
    body: any;
    text: string;
  }

  async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: string | Uint8Array } = {}): Promise<Reply> {
    const response = await fetch(`${server.origin}${path}`, { method, headers: init.headers ?? {}, ...(init.body === undefined ? {} : { body: init.body }) });
    const text = await response.text();
    let body: any;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, headers: response.headers, body, text };
  }

  async function post(body: unknown, key: string | null = keys.all, headers: Record<string, string> = {}): Promise<Reply> {
    const reply = await call('POST', '/v1/crosstab', {
      headers: { 'content-type': 'application/json', ...(key === null ? {} : { 'service-engine-authorizer': key }), ...headers },
      body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
    });
    if (reply.status === 200) billed++;
    return reply;
  }

  /** Asserts the error body (ResultCode = status, ResultDescription = error.message, a hint) and the declared schema; returns error. */
  function expectError(reply: Reply, status: number, code: string, field?: string): { code: string; message: string; field?: string; hint: string } {
    expect(reply.status, reply.text).toBe(status);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body.ResultCode).toBe(status);
    expect(reply.body.error.code).toBe(code);
    expect(reply.body.ResultDescription).toBe(reply.body.error.message);
    expect(reply.body.error.hint.length).toBeGreaterThan(0);
    if (field === undefined) expect(reply.body.error).not.toHaveProperty('field');
    else expect(reply.body.error.field).toBe(field);
    judge.check('post', '/crosstab', status, reply.body);
    return reply.body.error;
  }

  describe('GET /docs', () => {
    it('returns a valid OpenAPI 3.0.1 document, free and without a key', async () => {
      const before = readLedger(ledgerPath).length;
      const reply = await call('GET', '/v1/docs');
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      await ContractJudge.create(reply.body);
      expect(reply.body.openapi).toBe('3.0.1');
      expect(reply.body.info).toMatchObject({ version: '1.0.0', title: expect.any(String), description: expect.any(String) });
      expect(reply.body.paths['/docs'].get.operationId).toBe('docs');
      expect(reply.body.paths['/crosstab'].post.operationId).toBe('crosstab');
      expect(reply.body.paths['/crosstab'].options.operationId).toBe('crosstabOptions');
      expect(reply.body.components.securitySchemes.ServiceEngineAuthorizer).toMatchObject({ type: 'apiKey', in: 'header', name: 'Service-Engine-Authorizer' });
      expect(reply.body.servers[0].url).toMatch(/(^|\/)v1$/);
      judge.check('get', '/docs', 200, reply.body);
      expect(readLedger(ledgerPath).length).toBe(before);
    });

    it('answers If-None-Match of its ETag with 304 and no body', async () => {
      const first = await call('GET', '/v1/docs', { headers: { 'accept-encoding': 'gzip' } });
      const etag = first.headers.get('etag') as string;
      expect(etag).toMatch(/^"[0-9a-f]{32}-gzip"$/);
      const again = await call('GET', '/v1/docs', { headers: { 'accept-encoding': 'gzip', 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
    });
  });

  describe('POST /crosstab', () => {
    it('answers one target with the engine figures, CORS header and units', async () => {
      const reply = await post({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2'] });
      expect(reply.status, reply.text).toBe(200);
      judge.check('post', '/crosstab', 200, reply.body);
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
      const expected = toServiceResponse(await gss.crosstab({ base: 'year=2024', targets: ['sex=2'] }));
      expect(reply.body).toEqual(expected);
      expect(reply.body.Results).toHaveLength(1);
      expect(reply.body.AudienceReportUnits).toBe(gss.info.units);
      expect(reply.body.ResultCode).toBe(0);
      expect(reply.body.ResultDescription).toBe('');
    });

    it('answers two targets in request order', async () => {
      const targets = ['F18-34', 'sex=1'];
      const forward = await post({ SurveyCode: 'GSS', AuthorizationGroup: '_ALL_', PopulationBaseCode: '*', TargetCodes: targets });
      const backward = await post({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: [...targets].reverse() });
      expect(forward.status).toBe(200);
      expect(forward.body.Results).toHaveLength(2);
      expect(backward.body.Results).toEqual([...forward.body.Results].reverse());
      expect(forward.body).toEqual(toServiceResponse(await gss.crosstab({ base: '*', targets })));
      judge.check('post', '/crosstab', 200, forward.body);
    });

    it('serves another survey with its own units', async () => {
      const reply = await post({ SurveyCode: 'NHANES', AuthorizationGroup: null, PopulationBaseCode: 'RIAGENDR=2', TargetCodes: ['HIGH-CHOL'] });
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body).toEqual(toServiceResponse(await nhanes.crosstab({ base: 'RIAGENDR=2', targets: ['HIGH-CHOL'] })));
      expect(reply.body.AudienceReportUnits).toBe(nhanes.info.units);
    });

    it('flags an empty base with ResultCode 1 and an unstable base with ResultCode 2', async () => {
      const empty = await post({ SurveyCode: 'GSS', PopulationBaseCode: 'sex=1 AND sex=2', TargetCodes: ['sex=2'] });
      expect(empty.status).toBe(200);
      expect(empty.body).toMatchObject({ ResultCode: 1, Results: [{ WgtAud: 0, Resps: 0, Stbl: 1 }] });
      expect(empty.body.ResultDescription).not.toBe('');
      judge.check('post', '/crosstab', 200, empty.body);
      const small = await post({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024 AND age=89 AND sex=1', TargetCodes: ['degree=4'] });
      expect(small.status).toBe(200);
      expect(small.body.ResultCode).toBe(2);
      expect(small.body.ResultDescription).toMatch(/unstable/);
      judge.check('post', '/crosstab', 200, small.body);
    });

    it.each([[[]], [['sex=1', 'sex=2', 'degree=3']], ['sex=1'], [[1]], [['']]])('refuses TargetCodes %j with invalid_target_codes', async (targets) => {
      const reply = await post({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: targets });
      const error = expectError(reply, 400, 'invalid_target_codes', 'TargetCodes');
      expect(error.message).toMatch(/between 1 and 2/);
    });

    it('refuses malformed JSON, missing fields and wrong types with 400', async () => {
      expectError(await post('{"SurveyCode": "GSS", '), 400, 'invalid_json');
      expectError(await post('not json'), 400, 'invalid_json');
      expectError(await post(''), 400, 'invalid_json');
      expectError(await post('[1,2]'), 400, 'invalid_request');
      expectError(await post({ PopulationBaseCode: '*', TargetCodes: ['sex=1'] }), 400, 'invalid_request', 'SurveyCode');
      expectError(await post({ SurveyCode: 'GSS', TargetCodes: ['sex=1'] }), 400, 'invalid_request', 'PopulationBaseCode');
      expectError(await post({ SurveyCode: 'GSS', PopulationBaseCode: '*' }), 400, 'invalid_target_codes', 'TargetCodes');
      expectError(await post({ SurveyCode: 7, PopulationBaseCode: '*', TargetCodes: ['sex=1'] }), 400, 'invalid_request', 'SurveyCode');
      expectError(await post({ SurveyCode: 'GSS', AuthorizationGroup: 3, PopulationBaseCode: '*', TargetCodes: ['sex=1'] }), 400, 'invalid_request', 'AuthorizationGroup');
      expectError(await post({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=1'], Extra: 1 }), 400, 'invalid_request', 'Extra');
      expectError(await post('{"__proto__": {"x": 1}, "SurveyCode": "GSS", "PopulationBaseCode": "*", "TargetCodes": ["sex=1"]}'), 400, 'invalid_request', '__proto__');
      const invalidUtf8 = Buffer.concat([Buffer.from('{"SurveyCode": "'), Buffer.from([0xff, 0xfe]), Buffer.from('", "PopulationBaseCode": "*", "TargetCodes": ["sex=1"]}')]);
      expectError(await post(invalidUtf8), 400, 'invalid_json');
    });

    it('refuses bad expressions and unknown names with 400 and the field at fault', async () => {
      const syntax = expectError(await post({ SurveyCode: 'GSS', PopulationBaseCode: 'year=(', TargetCodes: ['sex=1'] }), 400, 'invalid_expression', 'PopulationBaseCode');
      expect(syntax.message).toMatch(/^PopulationBaseCode: /);
      const code = expectError(await post({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=1', 'F18-35'] }), 400, 'unknown_code', 'TargetCodes');
      expect(code.message).toMatch(/^TargetCodes\[1\]: /);
      expect(code.hint).toMatch(/F18-34/);
      expectError(await post({ SurveyCode: 'GSS', PopulationBaseCode: 'yeer=2024', TargetCodes: ['sex=1'] }), 400, 'unknown_variable', 'PopulationBaseCode');
      expectError(await post({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=7'] }), 400, 'unknown_value', 'TargetCodes');
      expectError(await post({ SurveyCode: 'GSS', PopulationBaseCode: '('.repeat(1000), TargetCodes: ['sex=1'] }), 400, 'invalid_expression', 'PopulationBaseCode');
      expectError(await post({ SurveyCode: 'GSS', PopulationBaseCode: 'x'.repeat(5000), TargetCodes: ['sex=1'] }), 400, 'invalid_request', 'PopulationBaseCode');
    });

    it('refuses unknown surveys and groups', async () => {
      expectError(await post({ SurveyCode: 'ACS', PopulationBaseCode: '*', TargetCodes: ['sex=1'] }), 400, 'unknown_survey', 'SurveyCode');
      expectError(await post({ SurveyCode: 'GSS', AuthorizationGroup: 'secret', PopulationBaseCode: '*', TargetCodes: ['sex=1'] }), 400, 'unknown_authorization_group', 'AuthorizationGroup');
    });

    it('refuses a missing, malformed, unknown, expired or revoked key, and a cookie alone, with 401', async () => {
      const body = { SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=1'] };
      for (const key of [null, 'nope', `ctk_${'A'.repeat(43)}`, keys.expired, keys.revoked, ` ${keys.all}x`]) {
        const reply = await post(body, key);
        expectError(reply, 401, 'unauthorized');
        // HTTP requires the challenge on a 401: the key's header (no single sign-on on a key file).
        expect(reply.headers.get('www-authenticate')).toBe('ApiKey realm="crosstab", header="Service-Engine-Authorizer"');
      }
      const cookie = expectError(await post(body, null, { cookie: 'portal_session=abc123' }), 401, 'unauthorized');
      expect(cookie.message).toMatch(/cookie/);
      expectError(await post(body, null, { authorization: `Bearer ${keys.all}` }), 401, 'unauthorized');
      expectError(await post(body, `Bearer ${keys.all}`), 401, 'unauthorized');
    });

    it('refuses a survey or group outside the key entitlement with 403 forbidden_survey, another group\'s names as unknown (400)', async () => {
      const error = expectError(await post({ SurveyCode: 'NHANES', PopulationBaseCode: '*', TargetCodes: ['HIGH-CHOL'] }, keys.gss), 403, 'forbidden_survey', 'SurveyCode');
      expect(error.hint).toMatch(/GSS/);
      // Not entitled: 403 even for a survey that does not exist, so keys cannot probe.
      expectError(await post({ SurveyCode: 'ACS', PopulationBaseCode: '*', TargetCodes: ['x=1'] }, keys.gss), 403, 'forbidden_survey', 'SurveyCode');
      const restricted = keys.gssDemographics;
      expect((await post({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['F18-34', 'sex=1'] }, restricted)).status).toBe(200);
      expect((await post({ SurveyCode: 'GSS', AuthorizationGroup: 'demographics', PopulationBaseCode: '*', TargetCodes: ['sex=1'] }, restricted)).status).toBe(200);
      expectError(await post({ SurveyCode: 'GSS', AuthorizationGroup: 'attitudes', PopulationBaseCode: '*', TargetCodes: ['sex=1'] }, restricted), 403, 'forbidden_survey', 'AuthorizationGroup');
      // A code or variable of another group is to the key a name the survey does not have: 400 as a made-up name, naming no group.
      expectError(await post({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=1', 'LIBERAL'] }, restricted), 400, 'unknown_code', 'TargetCodes');
      const hidden = expectError(await post({ SurveyCode: 'GSS', PopulationBaseCode: 'polviews=1', TargetCodes: ['sex=1'] }, restricted), 400, 'unknown_variable', 'PopulationBaseCode');
      expect(JSON.stringify(hidden)).not.toMatch(/attitudes/);
      // A key entitled to every group, narrowed by the request.
      expectError(await post({ SurveyCode: 'GSS', AuthorizationGroup: 'demographics', PopulationBaseCode: '*', TargetCodes: ['polviews=1'] }), 400, 'unknown_variable', 'TargetCodes');
    });

    it('refuses wrong content types (415) and oversized bodies (413)', async () => {
      const body = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=1'] });
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']) {
        const reply = await call('POST', '/v1/crosstab', { headers: { 'content-type': type, 'service-engine-authorizer': keys.all }, body });
        expectError(reply, 415, 'unsupported_media_type');
      }
      const noType = await call('POST', '/v1/crosstab', { headers: { 'service-engine-authorizer': keys.all }, body: new TextEncoder().encode(body) });
      expectError(noType, 415, 'unsupported_media_type');
      const huge = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=1'], pad: 'x'.repeat(100_000) });
      expectError(await post(huge), 413, 'payload_too_large');
      expect((await post({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=1'] })).status).toBe(200);
    });

    it('refuses an oversized chunked body without Content-Length', async () => {
      // A raw socket to the server itself (not through a proxy in front of it).
      const port = Number(new URL(server.direct ?? server.origin).port);
      const response = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let received = '';
        socket.on('data', (chunk) => (received += chunk.toString()));
        socket.on('end', () => resolve(received));
        socket.on('close', () => resolve(received));
        socket.on('error', () => resolve(received));
        setTimeout(() => reject(new Error(`no answer: ${received}`)), 5000);
        socket.write(`POST /v1/crosstab HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nService-Engine-Authorizer: ${keys.all}\r\nTransfer-Encoding: chunked\r\n\r\n`);
        const chunk = 'x'.repeat(8000);
        for (let i = 0; i < 4; i++) socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
        socket.write('0\r\n\r\n');
      });
      expect(response).toMatch(/^HTTP\/1\.1 413 /);
      expect(response).toMatch(/"payload_too_large"/);
    });

    it('answers a retried rejected request identically and bills only successes', async () => {
      const before = readLedger(ledgerPath).length;
      const bad = { SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['a', 'b', 'c'] };
      const first = await post(bad);
      const second = await post(bad);
      expect(second.status).toBe(first.status);
      expect(second.text).toBe(first.text);
      const forbidden = { SurveyCode: 'NHANES', PopulationBaseCode: '*', TargetCodes: ['HIGH-CHOL'] };
      expect((await post(forbidden, keys.gss)).text).toBe((await post(forbidden, keys.gss)).text);
      expect(readLedger(ledgerPath).length).toBe(before);
    });
  });

  describe('OPTIONS /crosstab', () => {
    it('answers the CORS preflight without a key and without billing', async () => {
      const before = readLedger(ledgerPath).length;
      const reply = await call('OPTIONS', '/v1/crosstab', {
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,service-engine-authorizer' },
      });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('access-control-allow-origin')).toBe('*');
      expect(reply.headers.get('access-control-allow-methods')).toMatch(/POST/);
      const allowed = (reply.headers.get('access-control-allow-headers') ?? '').toLowerCase();
      expect(allowed).toContain('content-type');
      expect(allowed).toContain('service-engine-authorizer');
      // A browser client signed in by single sign-on sends its bearer token in Authorization.
      expect(allowed.split(/,\s*/)).toContain('authorization');
      expect(Number(reply.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      expect(readLedger(ledgerPath).length).toBe(before);
    });
  });

  describe('other paths and methods', () => {
    it('answers 405 with Allow for a wrong method and 404 for an unknown path', async () => {
      const get = await call('GET', '/v1/crosstab');
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST, OPTIONS');
      judge.check('get', '/crosstab', 405, get.body);
      expect(get.body.error.code).toBe('method_not_allowed');
      const put = await call('PUT', '/v1/docs', { headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(put.status).toBe(405);
      expect(put.headers.get('allow')).toBe('GET, HEAD');
      judge.check('put', '/docs', 405, put.body);
      for (const path of ['/v1/nope', '/v1/crosstab/x', '/v1/', '/v1/docs/']) {
        const missing = await call('GET', path);
        expect(missing.status, path).toBe(404);
        expect(missing.body.error.code).toBe('not_found');
        judge.check('get', path, 404, missing.body);
      }
    });
  });

  describe('API keys', () => {
    it('applies revocation and rotation without a restart', async () => {
      const body = { SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=1'] };
      const { apiKey, record } = await addApiKey(keys.path, { surveys: ['GSS'], groups: ['_ALL_'], name: `rotating-${shim.name}` });
      await expect.poll(async () => (await post(body, apiKey)).status, { timeout: 3000, interval: 50 }).toBe(200);
      const rotated = await rotateApiKey(keys.path, record.id);
      await expect.poll(async () => (await post(body, apiKey)).status, { timeout: 3000, interval: 50 }).toBe(401);
      expect((await post(body, rotated.apiKey)).status).toBe(200);
      await revokeApiKey(keys.path, rotated.record.id);
      await expect.poll(async () => (await post(body, rotated.apiKey)).status, { timeout: 3000, interval: 50 }).toBe(401);
    });
  });

  describe('usage ledger', () => {
    it('holds exactly one record per 200 of POST /crosstab', async () => {
      const records = readLedger(ledgerPath);
      expect(records.length).toBe(billed);
      const first = records[0] as Record<string, unknown>;
      expect(Object.keys(first).sort()).toEqual(['keyId', 'operation', 'requestId', 'survey', 'targets', 'time']);
      expect(first).toMatchObject({ keyId: keys.allId, survey: 'GSS', targets: 1, operation: 'crosstab' });
      expect(JSON.stringify(records)).not.toContain('ctk_');
      expect(new Set(records.map((record) => record.requestId)).size).toBe(records.length);
    });
  });

  if (shim.validating) {
    // Last: after every request of the suite went through Prism.
    it('gave no answer that breaks the OpenAPI document it publishes (Prism as a validating proxy)', () => {
      const findings = server.findings as PrismFindings;
      expect(findings.failures).toEqual([]);
      // Answers of the document's operations were judged (404s and 405s match none): 66 of 72 in one run.
      expect(findings.judged).toBeGreaterThan(0);
    });
  }
});
