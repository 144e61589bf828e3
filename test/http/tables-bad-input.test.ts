// Property-based bad input for the survey catalog and POST /tables: whatever a client sends,
// the answer is a declared status below 500 with a body matching the OpenAPI document, and
// exactly the 200s of POST /tables are billed.
import fc from 'fast-check';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, type CrosstabHandler, type HandlerRequest, type HandlerResponse } from '../../src/http/index.js';
import { ContractJudge, makeKeyFile, readLedger, tempDir, textOf, type TestKeys } from './support.js';

const paths = inject('testDatasets');
let gss: Dataset;
let nhanes: Dataset;
let judge: ContractJudge;
let keys: TestKeys;
let handler: CrosstabHandler;
let ledgerPath: string;

beforeAll(async () => {
  gss = await openDataset(paths.gss);
  nhanes = await openDataset(paths.nhanes);
  judge = await ContractJudge.create();
  const dir = tempDir();
  keys = await makeKeyFile(dir);
  ledgerPath = join(dir, 'usage.ndjson');
  handler = await createCrosstabHandler({ datasets: [gss, nhanes], keys: keys.path, usage: ledgerPath, maxBodyBytes: 8192 });
});
afterAll(async () => {
  await handler.close();
  await gss.close();
  await nhanes.close();
});

const anything = fc.anything({ maxDepth: 3, withObjectString: true, withNullPrototype: true });
const TOKENS = ['(', ')', '=', ',', '..', ' AND ', ' OR ', 'NOT ', 'sex', 'age', 'degree', 'polviews', '1', '2', '18..34', '*', '"', 'NA', 'BA+', 'LIBERAL', 'HIGH-CHOL', 'RIAGENDR', '\u0000', '\\'];
const expression = fc.oneof(
  fc.constantFrom('*', 'sex=1', 'sex=2', 'BA+', 'LIBERAL', 'degree=3..4', 'age=18..34', 'HIGH-CHOL', 'RIAGENDR=2', 'nope=1', 'sex=9'),
  fc.array(fc.constantFrom(...TOKENS), { maxLength: 12 }).map((parts) => parts.join('')),
);
const axisItem = fc.oneof(
  { weight: 4, arbitrary: expression },
  { weight: 2, arbitrary: fc.record({ Variable: fc.oneof(fc.constantFrom('sex', 'degree', 'race', 'polviews', 'age', 'id', 'RIAGENDR', 'agecat', 'Sex', ''), anything) }) },
  { weight: 1, arbitrary: fc.record({ Expression: fc.oneof(expression, anything), Label: fc.oneof(fc.string({ maxLength: 10 }), anything) }, { requiredKeys: ['Expression'] }) },
  { weight: 1, arbitrary: anything },
);
const axis = fc.oneof({ weight: 6, arbitrary: fc.array(axisItem, { maxLength: 4 }) }, { weight: 1, arbitrary: anything });
const tableBody = fc
  .record(
    {
      SurveyCode: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('GSS', 'NHANES') }, { weight: 1, arbitrary: fc.oneof(fc.constantFrom('gss', '', 'ACS'), anything) }),
      AuthorizationGroup: fc.oneof(fc.constantFrom('_ALL_', 'demographics', 'attitudes', 'health', 'x'), fc.constant(null), anything),
      PopulationBaseCode: fc.oneof({ weight: 4, arbitrary: expression }, { weight: 1, arbitrary: anything }),
      Rows: axis,
      Columns: axis,
      Weight: fc.oneof(fc.constantFrom('wtssps', 'WTMEC2YR', 'wtssall', 'sex'), fc.constant(null), anything),
      Statistics: fc.oneof(fc.subarray(['vpct', 'hpct', 'tpct', 'index', 'ebase', 'deff', 'se', 'moe', 'sig', 'chisq']), fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 }), anything),
      Missing: fc.oneof(fc.constantFrom('show', 'hide', 'Show'), anything),
      Extra: anything,
    },
    { requiredKeys: [] },
  )
  .map((fields) => JSON.stringify(fields));

/** Mostly well-formed tables whose expressions are random: this drives the engine's parser, resolver and statistics. */
const wellFormed = fc
  .record(
    {
      SurveyCode: fc.constant('GSS'),
      PopulationBaseCode: expression,
      Rows: fc.array(fc.oneof(expression, fc.constantFrom({ Variable: 'sex' }, { Variable: 'degree' }, { Variable: 'polviews' })), { minLength: 1, maxLength: 3 }),
      Columns: fc.array(fc.oneof(expression, fc.constantFrom({ Variable: 'race' }, { Expression: 'age=18..34', Label: 'young' })), { minLength: 1, maxLength: 3 }),
      Weight: fc.constantFrom('wtssps', null),
      Statistics: fc.subarray(['vpct', 'hpct', 'tpct', 'index', 'ebase', 'deff', 'se', 'moe', 'sig', 'chisq']),
    },
    { requiredKeys: ['SurveyCode', 'PopulationBaseCode', 'Rows', 'Columns'] },
  )
  .map((fields) => JSON.stringify(fields));

const requestArb: fc.Arbitrary<HandlerRequest> = fc
  .record({
    method: fc.oneof({ weight: 6, arbitrary: fc.constant('POST') }, { weight: 2, arbitrary: fc.constantFrom('GET', 'HEAD', 'OPTIONS', 'PUT') }),
    path: fc.oneof(
      { weight: 6, arbitrary: fc.constant('/v1/tables') },
      { weight: 2, arbitrary: fc.constantFrom('/v1/surveys', '/v1/surveys/GSS', '/v1/surveys/NHANES', '/v1/surveys/', '/v1/surveys/GSS/x', '/v1/surveys/%', '/v1/surveys/%E0%A4%A', '/v1/surveys/G%53S') },
      { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((rest) => `/v1/surveys/${encodeURIComponent(rest)}`) },
    ),
    role: fc.constantFrom('all', 'gss', 'gssDemographics', 'expired', 'none'),
    accept: fc.oneof(fc.constantFrom('application/json', 'text/csv', '*/*', 'text/*;q=0.5, application/json;q=0', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'text/html'), fc.string({ maxLength: 30 })),
    ifNoneMatch: fc.oneof(fc.constant(undefined), fc.constantFrom('*', '"x"', 'W/"x"'), fc.string({ maxLength: 20 })),
    body: fc.oneof({ weight: 6, arbitrary: wellFormed }, { weight: 6, arbitrary: tableBody }, { weight: 1, arbitrary: fc.string({ maxLength: 100 }) }, { weight: 1, arbitrary: fc.constant(undefined) }),
  })
  .map(({ method, path, role, accept, ifNoneMatch, body }) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept };
    if (role !== 'none') headers['service-engine-authorizer'] = keys[role as 'all' | 'gss' | 'gssDemographics' | 'expired'];
    if (ifNoneMatch !== undefined) headers['if-none-match'] = ifNoneMatch;
    return body === undefined ? { method, path, headers } : { method, path, headers, body };
  });

function checkAnswer(request: HandlerRequest, response: HandlerResponse): boolean {
  expect(response.status, textOf(response.body)).toBeLessThan(500);
  expect([200, 304, 400, 401, 403, 404, 405, 406, 413, 415]).toContain(response.status);
  const path = (request.path.split('?')[0] as string).slice('/v1'.length);
  const template = path === '/tables' ? '/tables' : path === '/surveys' ? '/surveys' : '/surveys/{SurveyCode}';
  const method = path === '/tables' ? 'post' : 'get';
  if (response.status === 304 || response.body === '') return false;
  if (response.status === 200 && response.headers['content-type']?.startsWith('text/csv')) return request.method === 'POST';
  if (response.status === 200 && response.headers['content-type'] === 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet') {
    // A workbook is a zip: its bytes start with the local file header signature.
    expect(response.body instanceof Uint8Array && Buffer.from(response.body.subarray(0, 4)).toString('hex')).toBe('504b0304');
    return request.method === 'POST';
  }
  const parsed = JSON.parse(textOf(response.body));
  if (response.status >= 400) expect(parsed.ResultCode).toBe(response.status);
  if (response.status !== 405) judge.check(method, template, response.status, parsed);
  return response.status === 200 && request.method === 'POST';
}

describe('catalog and tables bad input', () => {
  it('never answers 5xx, every body matches the document, and only 200s of POST /tables are billed', async () => {
    const before = readLedger(ledgerPath).length;
    let billed = before;
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(requestArb, async (request) => {
        const response = await handler.handle(request);
        statuses.add(response.status);
        if (checkAnswer(request, response)) billed++;
      }),
      { numRuns: 600, seed: 20261126 },
    );
    expect(readLedger(ledgerPath).length).toBe(billed);
    // The battery reaches results as well as refusals.
    expect(billed).toBeGreaterThan(before);
    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 400, 401, 403, 406]));
  }, 120_000);
});
