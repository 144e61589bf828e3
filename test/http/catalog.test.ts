// GET /surveys, GET /surveys/{SurveyCode} and POST /tables over real HTTP: a real key file,
// a real ledger, the real datasets, the OpenAPI document as the judge of every body.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, tableStatistics, tableToCSV, tableToJSON, type Dataset } from '../../src/index.js';
import { buildOpenApiDocument, createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { ContractJudge, makeKeyFile, readLedger, shims, tempDir, type TestKeys } from './support.js';

const paths = inject('testDatasets');
let gss: Dataset;
let nhanes: Dataset;
let judge: ContractJudge;
let keys: TestKeys;
let server: RunningServer;
let ledgerPath: string;

beforeAll(async () => {
  gss = await openDataset(paths.gss);
  nhanes = await openDataset(paths.nhanes);
  judge = await ContractJudge.create(buildOpenApiDocument({ serverUrl: '/v1', maxBodyBytes: 65536 }));
  const dir = tempDir();
  keys = await makeKeyFile(dir);
  ledgerPath = join(dir, 'usage.ndjson');
  server = await listen(await createCrosstabHandler({ datasets: [gss, nhanes], keys: keys.path, usage: ledgerPath, maxBodyBytes: 65536 }), { port: 0 });
});
afterAll(async () => {
  await server?.close();
  await gss?.close();
  await nhanes?.close();
});

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

async function call(method: string, path: string, key: string | null, init: { headers?: Record<string, string>; body?: unknown } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...(key === null ? {} : { 'service-engine-authorizer': key }), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers };
  const response = await fetch(`${server.url}${path}`, { method, headers, ...(init.body === undefined ? {} : { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }) });
  const text = await response.text();
  let body: any;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

const getSurveys = (key: string | null, headers: Record<string, string> = {}) => call('GET', '/surveys', key, { headers });
const getSurvey = (code: string, key: string | null, headers: Record<string, string> = {}) => call('GET', `/surveys/${encodeURIComponent(code)}`, key, { headers });
const postTable = (body: unknown, key: string | null = keys.all, headers: Record<string, string> = {}) => call('POST', '/tables', key, { body, headers });

function expectError(reply: Reply, status: number, code: string, field?: string, judgedAs?: [string, string]): { message: string; hint: string } {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.body.ResultCode).toBe(status);
  expect(reply.body.ResultDescription).toBe(reply.body.error.message);
  expect(reply.body.error.code).toBe(code);
  expect(reply.body.error.hint.length).toBeGreaterThan(0);
  if (field === undefined) expect(reply.body.error).not.toHaveProperty('field');
  else expect(reply.body.error.field).toBe(field);
  if (judgedAs) judge.check(judgedAs[0], judgedAs[1], status, reply.body);
  return reply.body.error;
}

/** The variable and code names and group names of GSS outside the demographics group. */
function otherGroupNames(dataset: Dataset, group: string): string[] {
  const info = dataset.info;
  return [
    ...info.variables.filter((variable) => variable.group !== group).map((variable) => variable.name),
    ...info.codes.filter((code) => code.group !== group).map((code) => code.name),
    ...info.groups.filter((name) => name !== group),
  ];
}

describe('GET /surveys', () => {
  it("lists only the caller's licensed surveys, with their figures", async () => {
    const all = await getSurveys(keys.all);
    expect(all.status, all.text).toBe(200);
    judge.check('get', '/surveys', 200, all.body);
    expect(all.body.Surveys.map((survey: { SurveyCode: string }) => survey.SurveyCode).sort()).toEqual(['GSS', 'NHANES']);
    const onlyGss = await getSurveys(keys.gss);
    expect(onlyGss.body.Surveys).toEqual([
      { SurveyCode: 'GSS', Name: gss.info.name, Respondents: gss.info.respondents, AudienceReportUnits: gss.info.units, Weights: gss.info.weights, Design: gss.info.design.kind, Version: { Checksum: gss.info.checksum, BuiltAt: gss.info.createdAt } },
    ]);
    expect(onlyGss.text).not.toContain('NHANES');
  });

  it('refuses a missing, expired or revoked key with 401 and the error body', async () => {
    expectError(await getSurveys(null), 401, 'unauthorized', undefined, ['get', '/surveys']);
    expectError(await getSurveys(keys.expired), 401, 'unauthorized', undefined, ['get', '/surveys']);
    expectError(await getSurveys(keys.revoked), 401, 'unauthorized', undefined, ['get', '/surveys']);
  });
});

describe('GET /surveys/{SurveyCode}', () => {
  it('names nothing of the authorization groups the caller does not have', async () => {
    const reply = await getSurvey('GSS', keys.gssDemographics);
    expect(reply.status, reply.text).toBe(200);
    judge.check('get', '/surveys/{SurveyCode}', 200, reply.body);
    expect(reply.body.AuthorizationGroups).toEqual(['demographics']);
    const hidden = otherGroupNames(gss, 'demographics');
    expect(hidden.length).toBeGreaterThan(5);
    for (const name of hidden) {
      const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      expect(reply.text, name).not.toMatch(new RegExp(`(?<![A-Za-z0-9_])${escaped}(?![A-Za-z0-9_])`));
    }
    const shown = reply.body.Variables.map((variable: { Name: string }) => variable.Name);
    expect(shown).toEqual(gss.info.variables.filter((variable) => variable.group === 'demographics').map((variable) => variable.name));
    expect(reply.body.Codes.map((code: { Name: string }) => code.Name)).toEqual(['F18-34', 'M18-34', 'A65+', 'BA+']);
    // A key of every group sees them all.
    const everything = await getSurvey('GSS', keys.gss);
    expect(everything.body.Variables).toHaveLength(gss.info.variables.length);
    expect(everything.body.AuthorizationGroups).toEqual(gss.info.groups);
  });

  it('every value, range and blank shown selects its respondents; counts are rounded, and suppressed at the low-base threshold', async () => {
    for (const [dataset, code] of [[gss, 'GSS'], [nhanes, 'NHANES']] as const) {
      const reply = await getSurvey(code, keys.all);
      expect(reply.status, reply.text).toBe(200);
      const threshold = dataset.info.stability.veryUnstableMax;
      expect(reply.body.SuppressedAtOrBelow).toBe(threshold);
      let suppressed = 0;
      let rangeOnly = 0;
      for (const variable of reply.body.Variables) {
        const stored = dataset.info.variables.find((candidate) => candidate.name === variable.Name)!;
        if (variable.Values === undefined) {
          // Only a numeric variable of many unlabelled values (or more than 5,000) is described by its range alone.
          expect(stored.kind === 'numeric' && stored.distinct > 200 && !stored.values?.some((value) => value.label !== undefined), variable.Name).toBe(true);
          expect(variable.Range, variable.Name).toBeDefined();
          rangeOnly++;
        }
        const expressions: string[] = [];
        const counts: number[] = [];
        const shown: Array<number | null> = [];
        for (const [i, value] of (variable.Values ?? []).entries()) {
          expressions.push(value.Expression);
          counts.push(stored.values![i]!.respondents);
          shown.push(value.Respondents);
          expect(value.Value).toBe(stored.values![i]!.value);
        }
        if (variable.Range) {
          expressions.push(variable.Range.Expression);
          counts.push(dataset.info.respondents - stored.missing);
          shown.push(null);
        }
        if (variable.Missing) {
          expressions.push(variable.Missing.Expression);
          counts.push(stored.missing);
          shown.push(variable.Missing.Respondents);
        }
        for (let at = 0; at < expressions.length; at += 1000) {
          const result = await dataset.crosstab({ base: '*', targets: expressions.slice(at, at + 1000), weight: null });
          result.targets.forEach((cell, i) => expect(cell.respondents, expressions[at + i]).toBe(counts[at + i]));
        }
        counts.forEach((exact, i) => {
          if (variable.Range && i === (variable.Values?.length ?? 0)) return;
          if (exact <= threshold) {
            expect(shown[i], expressions[i]).toBeNull();
            suppressed++;
          } else {
            expect(shown[i], expressions[i]).toBe(Math.round(exact / 10) * 10);
          }
        });
      }
      // GSS has values of 30 respondents or fewer (NHANES has none).
      if (code === 'GSS') expect(suppressed, 'GSS has low-base values').toBeGreaterThan(0);
      if (code === 'GSS') expect(rangeOnly, 'GSS has numeric variables of many values (id, weights)').toBeGreaterThan(0);
    }
  });

  it('defines a code only when its definition uses only the caller\'s groups', async () => {
    const reply = await getSurvey('GSS', keys.all);
    const baPlus = reply.body.Codes.find((code: { Name: string }) => code.Name === 'BA+');
    expect(baPlus).toMatchObject({ Expression: 'BA+', Definition: 'degree=3..4', AuthorizationGroup: 'demographics' });
  });

  it('sends an ETag and Cache-Control; If-None-Match gets 304 with no body', async () => {
    const first = await getSurvey('GSS', keys.gssDemographics);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(first.headers.get('cache-control')).toMatch(/^private, max-age=\d+$/);
    const again = await getSurvey('GSS', keys.gssDemographics, { 'if-none-match': etag! });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect((await getSurvey('GSS', keys.gssDemographics, { 'if-none-match': '"other"' })).status).toBe(200);
    // Other rights, another body, another tag.
    const wider = await getSurvey('GSS', keys.gss, { 'if-none-match': etag! });
    expect(wider.status).toBe(200);
    expect(wider.headers.get('etag')).not.toBe(etag);
    const list = await getSurveys(keys.all);
    expect((await getSurveys(keys.all, { 'if-none-match': `W/${list.headers.get('etag')}` })).status).toBe(304);
  });

  it('is never billed', async () => {
    const before = readLedger(ledgerPath).length;
    for (let i = 0; i < 3; i++) {
      expect((await getSurveys(keys.all)).status).toBe(200);
      expect((await getSurvey('NHANES', keys.all)).status).toBe(200);
    }
    expect(readLedger(ledgerPath).length).toBe(before);
  });

  it('answers 401 and 403 with the contract\'s error bodies, and 404 for a survey not served', async () => {
    const judged: [string, string] = ['get', '/surveys/{SurveyCode}'];
    expectError(await getSurvey('GSS', null), 401, 'unauthorized', undefined, judged);
    expectError(await getSurvey('GSS', 'ctk_not-a-key'), 401, 'unauthorized', undefined, judged);
    const forbidden = expectError(await getSurvey('NHANES', keys.gss), 403, 'forbidden_survey', 'SurveyCode', judged);
    expect(forbidden.hint).not.toContain('NHANES');
    // Not entitled: 403 whether or not the survey exists.
    expectError(await getSurvey('NOPE', keys.gss), 403, 'forbidden_survey', 'SurveyCode', judged);
    expectError(await getSurvey('NOPE', keys.all), 404, 'not_found', 'SurveyCode', judged);
    expectError(await call('GET', '/surveys/%E0%A4%A', keys.all), 400, 'invalid_request', 'SurveyCode', judged);
  });
});

describe('POST /tables', () => {
  const spec = { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', Rows: [{ Variable: 'degree' }, 'BA+'], Columns: [{ Variable: 'sex' }, { Expression: 'age=18..34', Label: 'young' }] };
  const query = { base: 'year=2024', rows: [{ variable: 'degree' }, 'BA+'], columns: [{ variable: 'sex' }, { expr: 'age=18..34', label: 'young' }] };

  it('answers the cells, margins and labels table() computes, billed once as a table', async () => {
    const before = readLedger(ledgerPath);
    const reply = await postTable({ ...spec, Statistics: ['vpct', 'index', 'se', 'sig'] });
    expect(reply.status, reply.text).toBe(200);
    judge.check('post', '/tables', 200, reply.body);
    const result = await gss.table(query);
    const expected = tableToJSON(result, tableStatistics(result, { stats: ['vpct', 'index', 'se', 'sig'] }));
    expect(reply.body).toEqual({ ResultCode: 0, ResultDescription: '', SurveyCode: 'GSS', AudienceReportUnits: gss.info.units, Table: JSON.parse(JSON.stringify(expected)) });
    expect(reply.body.Table.cells[0][0]).toHaveProperty('columnPct');
    const after = readLedger(ledgerPath);
    expect(after.length).toBe(before.length + 1);
    expect(after.at(-1)).toMatchObject({ keyId: keys.allId, survey: 'GSS', operation: 'table', targets: result.rows.length + result.columns.length });
  });

  it('answers CSV by Accept, unweighted when Weight is null, and refuses other types with 406 (not billed)', async () => {
    const before = readLedger(ledgerPath).length;
    const csv = await postTable({ ...spec, Weight: null }, keys.all, { accept: 'text/csv' });
    expect(csv.status, csv.text).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.text).toBe(tableToCSV(await gss.table({ ...query, weight: null })));
    expectError(await postTable(spec, keys.all, { accept: 'text/html' }), 406, 'not_acceptable', undefined, ['post', '/tables']);
    expect(readLedger(ledgerPath).length).toBe(before + 1);
  });

  it('Missing: "show" (the default, as table()) gives each whole variable a "No answer" entry, so its entries add up to the base; "hide" gives none', async () => {
    const asked = { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', Rows: [{ Variable: 'degree' }], Columns: ['*'], Statistics: ['vpct'] };
    type Row = { label: string; expr: string; missing?: boolean };
    type Table = { missing: string; rows: Row[]; cells: Array<Array<{ weighted: number; respondents: number; columnPct: number | null }>>; columnTotals: Array<{ weighted: number; respondents: number }> };
    const sums = (table: Table) => ({
      weighted: table.cells.reduce((sum, row) => sum + (row[0]?.weighted ?? 0), 0),
      respondents: table.cells.reduce((sum, row) => sum + (row[0]?.respondents ?? 0), 0),
    });
    for (const body of [asked, { ...asked, Missing: 'show' }]) {
      const reply = await postTable(body);
      expect(reply.status, reply.text).toBe(200);
      judge.check('post', '/tables', 200, reply.body);
      const table = reply.body.Table as Table;
      expect(table.missing).toBe('show');
      const noAnswer = table.rows.filter((row) => row.missing === true);
      expect(noAnswer).toEqual([expect.objectContaining({ expr: 'degree=NA' })]);
      // The entries (No answer included) reconcile with the base: the column's total.
      const { weighted, respondents } = sums(table);
      expect(respondents).toBe(table.columnTotals[0]?.respondents);
      expect(weighted).toBeCloseTo(table.columnTotals[0]?.weighted as number, 6);
      expect(noAnswer.length).toBeGreaterThan(0);
    }
    const hidden = await postTable({ ...asked, Missing: 'hide' });
    expect(hidden.status, hidden.text).toBe(200);
    const table = hidden.body.Table as Table;
    expect(table.missing).toBe('hide');
    expect(table.rows.some((row) => row.missing === true || row.expr === 'degree=NA')).toBe(false);
    // Without the blanks the entries fall short of the base (degree has blank answers in 2024).
    expect(sums(table).respondents).toBeLessThan(table.columnTotals[0]?.respondents as number);
  });

  it('PercentBase: "total" (default) takes percentages of the whole base, "valid" of those who answered', async () => {
    const asked = { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', Rows: [{ Variable: 'degree' }], Columns: ['*'], Statistics: ['vpct'] };
    type Table = { percentBase: string; rows: Array<{ missing?: boolean }>; cells: Array<Array<{ columnPct: number | null }>> };
    const answered = (table: Table): number => table.cells.reduce((sum, row, i) => sum + (table.rows[i]?.missing === true ? 0 : (row[0]?.columnPct ?? 0)), 0);
    const total = (await postTable(asked)).body.Table as Table;
    const valid = (await postTable({ ...asked, PercentBase: 'valid' })).body.Table as Table;
    expect(total.percentBase).toBe('total');
    expect(valid.percentBase).toBe('valid');
    expect(answered(valid)).toBeCloseTo(1, 9);
    expect(answered(total)).toBeLessThan(1 - 1e-6);
    const expected = await gss.table({ base: 'year=2024', rows: [{ variable: 'degree' }], columns: ['*'], percentBase: 'valid' });
    expect(valid).toEqual(JSON.parse(JSON.stringify(tableToJSON(expected, tableStatistics(expected, { stats: ['vpct'] })))));
    expectError(await postTable({ ...asked, PercentBase: 'answered' }), 400, 'invalid_request', 'PercentBase', ['post', '/tables']);
  });

  it('ColumnGroups: compares the columns given, overlapping ones with their covariance, as table({ columnGroups }) does', async () => {
    // Two age bands sharing the 40-44 year olds, and the sex columns (0-2, with "No answer") left out of any group.
    const asked = { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', Rows: [{ Variable: 'polviews' }], Columns: [{ Variable: 'sex' }, 'age=18..44', { Expression: 'age=40..', Label: '40+' }], Statistics: ['vpct', 'sig'] };
    const reply = await postTable({ ...asked, ColumnGroups: [[3, 4]] });
    expect(reply.status, reply.text).toBe(200);
    judge.check('post', '/tables', 200, reply.body);
    const result = await gss.table({ base: 'year=2024', rows: [{ variable: 'polviews' }], columns: [{ variable: 'sex' }, 'age=18..44', { expr: 'age=40..', label: '40+' }], columnGroups: [[3, 4]] });
    const expected = JSON.parse(JSON.stringify(tableToJSON(result, tableStatistics(result, { stats: ['vpct', 'sig'] })))) as { comparisons: Array<{ columnA: number; columnB: number; respondentsInBoth?: number }> };
    expect(reply.body.Table).toEqual(expected);
    expect(expected.comparisons.length).toBeGreaterThan(0);
    expect(expected.comparisons.every((pair) => pair.columnA === 3 && pair.columnB === 4 && (pair.respondentsInBoth ?? 0) > 0)).toBe(true);
    const judged: [string, string] = ['post', '/tables'];
    expectError(await postTable({ ...asked, ColumnGroups: [[3, 9]] }), 400, 'invalid_request', 'ColumnGroups', judged);
    expectError(await postTable({ ...asked, ColumnGroups: [[3, 'x']] }), 400, 'invalid_request', 'ColumnGroups', judged);
    expectError(await postTable({ ...asked, ColumnGroups: 3 }), 400, 'invalid_request', 'ColumnGroups', judged);
  });

  it('refuses bad input with 400 naming the field, never billed', async () => {
    const before = readLedger(ledgerPath).length;
    const judged: [string, string] = ['post', '/tables'];
    expectError(await postTable({ ...spec, Rows: undefined }), 400, 'invalid_request', 'Rows', judged);
    expectError(await postTable({ ...spec, Columns: [] }), 400, 'invalid_request', 'Columns', judged);
    expectError(await postTable({ ...spec, Rows: [{ Variable: 'degree', Label: 'x' }] }), 400, 'invalid_request', 'Rows', judged);
    expectError(await postTable({ ...spec, Statistics: ['vpct', 'pct'] }), 400, 'invalid_request', 'Statistics', judged);
    expectError(await postTable({ ...spec, Missing: 'maybe' }), 400, 'invalid_request', 'Missing', judged);
    expectError(await postTable({ ...spec, Weight: 'wtssall' }), 400, 'invalid_request', 'Weight', judged);
    expectError(await postTable({ ...spec, Colums: [] }), 400, 'invalid_request', 'Colums', judged);
    expectError(await postTable({ ...spec, PopulationBaseCode: 'year=' }), 400, 'invalid_expression', 'PopulationBaseCode', judged);
    const unknown = expectError(await postTable({ ...spec, Columns: ['sex=1', 'sexx=2'] }), 400, 'unknown_variable', 'Columns', judged);
    expect(unknown.message).toMatch(/^Columns\[1\]: /);
    expect(unknown.hint).toContain('GET /v1/surveys/GSS');
    const tooLarge = expectError(await postTable({ ...spec, Rows: Array(600).fill('sex=1'), Columns: Array(500).fill('sex=2') }), 400, 'invalid_request', 'Rows', judged);
    expect(tooLarge.message).toMatch(/600 rows x 500 columns = 300000 cells; at most 250000/);
    expectError(await postTable('{"SurveyCode": "GSS",'), 400, 'invalid_json', undefined, judged);
    // Larger than this server's 64 KiB: the hint is the table's own (whole variables), not POST /crosstab's.
    const huge = expectError(await postTable({ ...spec, Rows: Array(10_000).fill('sex=1') }), 413, 'payload_too_large', undefined, judged);
    expect(huge.hint).toContain('{"Variable": ...}');
    expect(readLedger(ledgerPath).length).toBe(before);
  });

  it('checks entitlements per expression as POST /crosstab does, and names no other group', async () => {
    const before = readLedger(ledgerPath).length;
    const judged: [string, string] = ['post', '/tables'];
    expectError(await postTable({ ...spec, SurveyCode: 'NHANES' }, keys.gss), 403, 'forbidden_survey', 'SurveyCode', judged);
    // A code or variable of another group is to the caller a name the survey does not have: the same answer as a made-up one.
    const code = expectError(await postTable({ ...spec, Rows: ['LIBERAL'] }, keys.gssDemographics), 400, 'unknown_code', 'Rows', judged);
    expect(JSON.stringify(code)).toBe(JSON.stringify(expectError(await postTable({ ...spec, Rows: ['LIBERAX'] }, keys.gssDemographics), 400, 'unknown_code', 'Rows', judged)).replaceAll('LIBERAX', 'LIBERAL'));
    const variable = expectError(await postTable({ ...spec, Columns: ['polviews=1'] }, keys.gssDemographics), 400, 'unknown_variable', 'Columns', judged);
    expect(JSON.stringify(variable)).not.toMatch(/attitudes/);
    // A whole variable of another group is unknown to the caller: no suggestion names it.
    const hidden = expectError(await postTable({ ...spec, Rows: [{ Variable: 'polview' }] }, keys.gssDemographics), 400, 'unknown_variable', 'Rows', judged);
    expect(JSON.stringify(hidden)).not.toMatch(/polviews/);
    expectError(await postTable(spec, null), 401, 'unauthorized', undefined, judged);
    expect(readLedger(ledgerPath).length).toBe(before);
    expect((await postTable(spec, keys.gssDemographics)).status).toBe(200);
    expect(readLedger(ledgerPath).length).toBe(before + 1);
  });
});

describe('POST /crosstab', () => {
  it('points an unknown name at GET /surveys/{SurveyCode}', async () => {
    const reply = await call('POST', '/crosstab', keys.gssDemographics, { body: { SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sexx=1'] } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.hint).toContain('GET /v1/surveys/GSS lists the variables your key may use.');
  });
});

describe.each(shims)('catalog and tables over $name', (shim) => {
  it('sends 304 with no body, the ETag and Cache-Control, and CSV with its Content-Type', async () => {
    const dir = tempDir();
    const handler = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: join(dir, 'usage.ndjson') });
    const running = await shim.start(handler);
    try {
      const headers = { 'service-engine-authorizer': keys.gss };
      const first = await fetch(`${running.origin}/v1/surveys/GSS`, { headers });
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toMatch(/^application\/json/);
      const etag = first.headers.get('etag') as string;
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      const again = await fetch(`${running.origin}/v1/surveys/GSS`, { headers: { ...headers, 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('cache-control')).toBe(first.headers.get('cache-control'));
      const csv = await fetch(`${running.origin}/v1/tables`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: 'text/csv' },
        body: JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Variable: 'sex' }], Columns: ['BA+'] }),
      });
      expect(csv.status).toBe(200);
      expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(await csv.text()).toBe(tableToCSV(await gss.table({ base: '*', rows: [{ variable: 'sex' }], columns: ['BA+'] })));
    } finally {
      await running.close();
      await handler.close();
    }
  });
});
