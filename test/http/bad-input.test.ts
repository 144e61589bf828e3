// Property-based bad-input battery: whatever a client sends, the handler answers with a
// declared status below 500 and a body matching the OpenAPI schema, and stays healthy.
import fc from 'fast-check';
import { createServer, METHODS, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CrosstabError, ErrorCode, openDataset, type Dataset } from '../../src/index.js';
import { fieldError } from '../../src/errors.js';
import { fromEngineError, statusOf } from '../../src/http/service-error.js';
import { createCrosstabHandler, createNodeListener, type CrosstabHandler, type HandlerRequest, type HandlerResponse } from '../../src/http/index.js';
import { ContractJudge, makeKeyFile, readLedger, tempDir, textOf, type TestKeys } from './support.js';

const paths = inject('testDatasets');
let gss: Dataset;
let nhanes: Dataset;
let judge: ContractJudge;
let keys: TestKeys;
let handler: CrosstabHandler;
let ledgerPath: string;
let billed = 0;

beforeAll(async () => {
  gss = await openDataset(paths.gss);
  nhanes = await openDataset(paths.nhanes);
  judge = await ContractJudge.create();
  const dir = tempDir();
  keys = await makeKeyFile(dir);
  ledgerPath = join(dir, 'usage.ndjson');
  handler = await createCrosstabHandler({ datasets: [gss, nhanes], keys: keys.path, usage: ledgerPath, maxBodyBytes: 4096 });
});
afterAll(async () => {
  await handler.close();
  gss.close();
  nhanes.close();
});

const TOKENS = ['(', ')', '=', ',', '..', ' AND ', ' OR ', 'NOT ', ' ', 'sex', 'year', 'age', 'degree', '1', '2', '2024', '89', '-3', '1e308', '*', '-', '"', 'NA', 'F18-34', 'LIBERAL', 'polviews', 'HIGH-CHOL', '\u0000', 'é', '\ud800', '\\', 'and', 'or'];
const tokenSoup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 40 }).map((parts) => parts.join(''));
/** Grammatical expressions over real and unknown names, values and codes. */
const grammatical = fc.letrec<{ expr: string; term: string }>((tie) => ({
  term: fc.oneof(
    fc.constantFrom('*', 'F18-34', 'LIBERAL', 'HIGH-CHOL', 'NOPE', 'sex=NA'),
    fc.tuple(fc.constantFrom('sex', 'year', 'age', 'degree', 'polviews', 'relig', 'RIAGENDR', 'bogus'), fc.constantFrom('1', '2', '2024', '1,2', '18..34', '65..', '..3', '99', 'x')).map(([name, value]) => `${name}=${value}`),
  ),
  expr: fc.oneof(
    { weight: 3, arbitrary: tie('term') },
    { weight: 1, arbitrary: fc.tuple(tie('expr'), fc.constantFrom(' AND ', ' OR '), tie('expr')).map(([a, op, b]) => `(${a}${op}${b})`) },
    { weight: 1, arbitrary: tie('expr').map((inner) => `NOT ${inner}`) },
  ),
})).expr;
const expression = fc.oneof({ weight: 3, arbitrary: grammatical }, { weight: 2, arbitrary: tokenSoup });
const anything = fc.anything({ maxDepth: 3, withObjectString: true, withNullPrototype: true });

const requestBody = fc
  .record(
    {
      SurveyCode: fc.oneof(fc.constantFrom('GSS', 'NHANES', 'gss', '', 'ACS'), fc.string(), anything),
      AuthorizationGroup: fc.oneof(fc.constantFrom('_ALL_', 'demographics', 'attitudes', 'design', 'x'), fc.constant(null), anything),
      PopulationBaseCode: fc.oneof(expression, fc.string({ maxLength: 3000 }), anything),
      TargetCodes: fc.oneof(fc.array(expression, { maxLength: 3 }), fc.array(anything, { maxLength: 3 }), anything),
      constructor: anything,
      Extra: anything,
    },
    { requiredKeys: [] },
  )
  .chain((fields) => fc.tuple(fc.constant(JSON.stringify(fields)), fc.boolean()))
  // An own "__proto__" key, as JSON.parse creates it.
  .map(([text, proto]) => (proto ? text.replace(/^\{/, '{"__proto__":{"polluted":true},').replace(/,\}$/, '}') : text));

/** Mostly well-formed requests whose expressions are random: this drives the engine's parser and resolver. */
const engineBody = fc
  .record(
    {
      SurveyCode: fc.oneof({ weight: 8, arbitrary: fc.constant('GSS') }, { weight: 1, arbitrary: fc.constant('NHANES') }),
      AuthorizationGroup: fc.constantFrom('_ALL_', 'demographics', 'attitudes', 'design'),
      PopulationBaseCode: fc.oneof({ weight: 5, arbitrary: expression }, { weight: 1, arbitrary: fc.string({ maxLength: 50 }) }),
      TargetCodes: fc.array(fc.oneof({ weight: 5, arbitrary: expression }, { weight: 1, arbitrary: fc.string({ maxLength: 50 }) }), { minLength: 1, maxLength: 2 }),
    },
    { requiredKeys: ['SurveyCode', 'PopulationBaseCode', 'TargetCodes'] },
  )
  .map((fields) => JSON.stringify(fields));

const deepNesting = fc.integer({ min: 1, max: 200_000 }).chain((depth) => fc.constantFrom('[', '{"a":').map((open) => open.repeat(depth)));
const truncate = (text: fc.Arbitrary<string>) => fc.tuple(text, fc.nat()).map(([body, cut]) => body.slice(0, body.length === 0 ? 0 : cut % body.length));

const body: fc.Arbitrary<string | Uint8Array | undefined> = fc.oneof(
  { weight: 6, arbitrary: requestBody },
  { weight: 2, arbitrary: truncate(requestBody) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 600 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
  { weight: 1, arbitrary: fc.json({ maxDepth: 4 }) },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: requestBody.map((text) => Buffer.concat([Buffer.from(text), Buffer.from([0xc3, 0x28, 0xff])])) },
);

const requestArb: fc.Arbitrary<HandlerRequest> = fc.record({
  method: fc.oneof({ weight: 6, arbitrary: fc.constant('POST') }, { weight: 2, arbitrary: fc.constantFrom('GET', 'OPTIONS', 'PUT', 'DELETE', 'HEAD', 'PATCH', 'post') }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }) }),
  path: fc.oneof(
    { weight: 8, arbitrary: fc.constant('/v1/crosstab') },
    { weight: 1, arbitrary: fc.constantFrom('/v1/docs', '/v1/crosstab?x=1', '/v1', '/v2/crosstab', '/v1/crosstab/../docs', '/V1/CROSSTAB', '') },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((rest) => `/v1/${rest}`) },
  ),
  headers: fc.record(
    {
      'content-type': fc.oneof({ weight: 6, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/json; charset=utf-16', '') }, { weight: 1, arbitrary: fc.string({ maxLength: 40 }) }),
      'service-engine-authorizer': fc.oneof({ weight: 6, arbitrary: fc.constantFrom('all', 'gssDemographics', 'gss', 'expired', 'revoked') }, { weight: 1, arbitrary: fc.string({ maxLength: 80 }) }),
      cookie: fc.string({ maxLength: 40 }),
      origin: fc.oneof(fc.constant('https://app.example'), fc.string({ maxLength: 40 })),
      'content-length': fc.oneof(fc.nat().map(String), fc.string({ maxLength: 10 })),
    },
    { requiredKeys: [] },
  ),
  body,
}).map((request) => {
  const headers = { ...request.headers } as Record<string, string>;
  const role = headers['service-engine-authorizer'];
  if (role !== undefined && role in keys) headers['service-engine-authorizer'] = keys[role as keyof TestKeys];
  return { ...request, headers };
});

/** The contract every answer must keep, whatever the request. */
function checkAnswer(request: HandlerRequest, response: HandlerResponse): void {
  expect(response.status, textOf(response.body)).toBeLessThan(500);
  const path = request.path.split('?')[0] as string;
  if (response.status === 200) {
    if (path === '/v1/docs' && request.method.toUpperCase() === 'HEAD') expect([response.body, Number(response.headers['content-length']) > 0]).toEqual(['', true]);
    else if (path === '/v1/docs') judge.check('get', '/docs', 200, JSON.parse(textOf(response.body)));
    else if (request.method === 'OPTIONS') expect(response.body).toBe('');
    else {
      judge.check('post', '/crosstab', 200, JSON.parse(textOf(response.body)));
      billed++;
    }
    return;
  }
  expect([400, 401, 403, 404, 405, 413, 415]).toContain(response.status);
  const parsed = JSON.parse(textOf(response.body));
  judge.check('post', '/crosstab', response.status, parsed);
  expect(parsed.ResultCode).toBe(response.status);
  expect(parsed.ResultDescription).toBe(parsed.error.message);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(response.body).not.toMatch(/ctk_[A-Za-z0-9_-]{43}/);
}

describe('bad-input battery', () => {
  it('answers any request with a declared 4xx (or a valid 200), never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(requestArb, async (request) => {
        checkAnswer(request, await handler.handle(request));
      }),
      { numRuns: 1500 },
    );
    expect(readLedger(ledgerPath).length).toBe(billed);
  });

  it('answers random expressions with 200 or a declared 4xx from the engine, never a 5xx', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(engineBody, fc.constantFrom('all', 'gssDemographics'), async (text, role) => {
        const request: HandlerRequest = {
          method: 'POST',
          path: '/v1/crosstab',
          headers: { 'content-type': 'application/json', 'service-engine-authorizer': keys[role as 'all' | 'gssDemographics'] },
          body: text,
        };
        const response = await handler.handle(request);
        checkAnswer(request, response);
        seen.add(response.status === 200 ? '200' : (JSON.parse(textOf(response.body)).error.code as string));
      }),
      { numRuns: 1500 },
    );
    // The battery reached the engine and its refusals, not only the request checks.
    for (const code of ['200', 'invalid_expression', 'unknown_variable', 'unknown_value', 'unknown_code', 'forbidden_survey']) expect(seen).toContain(code);
    expect(readLedger(ledgerPath).length).toBe(billed);
  });

  it('never rejects, even when called with values that are not requests at all', async () => {
    const shapes = fc.oneof(
      fc.anything(),
      fc.record({ method: fc.anything(), path: fc.anything(), headers: fc.anything(), body: fc.anything() }, { requiredKeys: [] }),
      fc.record({ method: fc.constant('POST'), path: fc.constant('/v1/crosstab'), headers: fc.dictionary(fc.string(), fc.anything()), body: fc.anything() }),
    );
    await fc.assert(
      fc.asyncProperty(shapes, async (value) => {
        const response = await handler.handle(value as HandlerRequest);
        expect(response.status).toBeLessThan(500);
      }),
      { numRuns: 500 },
    );
  });

  it('answers a rejected request identically when retried unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(requestArb, async (request) => {
        const first = await handler.handle(request);
        fc.pre(first.status >= 400);
        const second = await handler.handle(request);
        expect(second.status).toBe(first.status);
        expect(second.body).toBe(first.body);
      }),
      { numRuns: 300 },
    );
  });

  it('survives hostile bytes over real HTTP and stays healthy', async () => {
    const server: Server = createServer(createNodeListener(handler));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const send = (method: string, path: string, headers: Record<string, string>, payload?: string | Uint8Array) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const length = payload === undefined ? {} : { 'content-length': String(Buffer.byteLength(payload)) };
        const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { ...headers, ...length } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on('error', reject);
        req.end(payload);
      });
    try {
      await fc.assert(
        fc.asyncProperty(requestArb, async (request) => {
          const headers = Object.fromEntries(
            Object.entries(request.headers as Record<string, string>).filter(([name, value]) => name !== 'content-length' && /^[\t\x20-\x7e]*$/.test(value)),
          );
          const method = METHODS.includes(request.method) ? request.method : 'POST';
          const path = /^\/[\x21-\x7e]*$/.test(request.path) ? request.path : '/v1/crosstab';
          const reply = await send(method, path, headers, method === 'GET' || method === 'HEAD' ? undefined : request.body as string | Uint8Array | undefined);
          expect(reply.status).toBeLessThan(500);
          if (method !== 'HEAD' && reply.status >= 400) checkAnswer({ ...request, method, path }, { status: reply.status, headers: { 'content-type': 'application/json' }, body: reply.text });
        }),
        { numRuns: 200 },
      );
      const docs = await send('GET', '/v1/docs', {});
      expect(docs.status).toBe(200);
      const ok = await send('POST', '/v1/crosstab', { 'content-type': 'application/json', 'service-engine-authorizer': keys.all }, JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] }));
      expect(ok.status).toBe(200);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('engine errors the adapter maps', () => {
  it('out of kernel memory is 503 unavailable saying so, never a 500', () => {
    const error = fromEngineError(new CrosstabError(ErrorCode.outOfMemory, 'out of kernel memory: 5368709120 bytes needed, 4 GiB is the limit of one process'));
    expect(statusOf(error)).toBe(503);
    expect(error.code).toBe('unavailable');
    expect(error.message).toMatch(/out of query memory/);
  });

  it('re-labels the field from details.problem, not by matching the message text', () => {
    const forbidden = fromEngineError(fieldError(ErrorCode.forbiddenGroup, 'targets[1]', 'uses variable relig of authorization group "attitudes", which is not allowed'));
    expect(forbidden.field).toBe('TargetCodes');
    expect(forbidden.message).toBe('TargetCodes[1]: uses variable relig of authorization group "attitudes", which is not allowed');
    // A message that does not start with its field is kept whole.
    const unknown = fromEngineError(new CrosstabError(ErrorCode.unknownVariable, 'unknown variable "Sex"; did you mean "sex"?', { field: 'base' }));
    expect(unknown.message).toBe('PopulationBaseCode: unknown variable "Sex"; did you mean "sex"?');
  });
});
