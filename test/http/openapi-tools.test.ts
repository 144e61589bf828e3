// GET /docs judged by the tools client developers generate from: Redocly's recommended lint,
// openapi-typescript types that the real answers must compile against under `tsc --strict`,
// and Stoplight Prism as a validating proxy in front of a real `crosstab serve`.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { repoRoot } from '../support/paths.js';
import { CLI, startServe, type ServeChild } from './serve-child.js';
import { ContractJudge, makeKeyFile, tempDir, type TestKeys } from './support.js';

const paths = inject('testDatasets');
const bin = (name: string): string => join(repoRoot, 'node_modules', '.bin', name);
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** A loopback port free right now (the server must know its public URL before it starts). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** One call of the suite: what is sent, the operation it is for, and whether the request itself is valid. */
interface Call {
  name: string;
  method: string;
  /** Path below the base path, as sent. */
  path: string;
  /** The document's path template it is an operation of (none: a path or method the document does not list). */
  template?: string;
  headers?: Record<string, string>;
  body?: unknown;
  status: number;
  /** A request the document allows (Prism may report nothing about it at all). */
  valid?: boolean;
}

interface Answer {
  call: Call;
  status: number;
  headers: Headers;
  text: string;
  violations: Array<{ location: string[]; severity: string; message: string }>;
}

describe('GET /docs against Redocly, openapi-typescript and Prism', () => {
  let dir: string;
  let keys: TestKeys;
  let serve: ServeChild;
  let prism: ChildProcess | undefined;
  let prismOrigin: string;
  let publicUrl: string;
  let document: Record<string, any>;
  const answers: Answer[] = [];

  beforeAll(async () => {
    for (const tool of ['redocly', 'openapi-typescript', 'prism', 'tsc']) expect(existsSync(bin(tool)), `${tool} is missing: run npm install`).toBe(true);
    expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
    dir = tempDir('crosstab-openapi-tools-');
    keys = await makeKeyFile(dir);
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}/v1`;
    serve = await startServe(['--dataset', paths.gss, '--dataset', paths.nhanes, '--keys', keys.path, '--ledger', join(dir, 'usage.ndjson'), '--port', String(port), '--public-url', publicUrl], { cwd: dir });
    document = (await (await fetch(`${publicUrl}/docs`)).json()) as Record<string, any>;
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(document, null, 2));
    writeFileSync(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');

    const prismPort = await freePort();
    prismOrigin = `http://127.0.0.1:${prismPort}`;
    prism = spawn(bin('prism'), ['proxy', join(dir, 'openapi.json'), publicUrl, '--host', '127.0.0.1', '--port', String(prismPort), '--cors=false'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Prism did not start:\n${output}`)), 60_000);
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        if (/Prism is listening/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      prism?.stdout?.on('data', onData);
      prism?.stderr?.on('data', onData);
      prism?.once('exit', (code) => reject(new Error(`Prism exited with ${code}:\n${output}`)));
    });
  }, 120_000);

  afterAll(async () => {
    if (prism && prism.exitCode === null) {
      const exited = new Promise((resolve) => prism?.once('exit', resolve));
      prism.kill('SIGTERM');
      await exited;
    }
    if (serve) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('names the absolute --public-url as its server and keeps the contract names', () => {
    expect(document.servers).toEqual([{ url: publicUrl, description: expect.any(String) }]);
    expect(document.openapi).toBe('3.0.1');
    expect(document.info.version).toBe('1.0.0');
    expect(document.paths['/docs'].get.operationId).toBe('docs');
    expect(document.paths['/crosstab'].post.operationId).toBe('crosstab');
    expect(document.paths['/crosstab'].options.operationId).toBe('crosstabOptions');
  });

  it("passes Redocly's recommended rules without an error", () => {
    const lint = spawnSync(bin('redocly'), ['lint', 'openapi.json', '--format', 'json'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    const report = JSON.parse(lint.stdout.slice(lint.stdout.indexOf('{'))) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; severity: string; message: string }> };
    expect(report.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
    expect(lint.status, lint.stderr).toBe(0);
    // The one warning left: the license has a name but no URL (the document links nothing outside).
    expect(report.problems.map((problem) => problem.ruleId)).toEqual(['info-license-strict']);
  }, 120_000);

  /** Sends `call` through Prism (or straight to the server) and keeps the answer. */
  async function send(call: Call, through: 'prism' | 'server' = 'prism'): Promise<Answer> {
    const origin = through === 'prism' ? prismOrigin : publicUrl;
    const body = call.body === undefined ? undefined : typeof call.body === 'string' ? call.body : JSON.stringify(call.body);
    const response = await fetch(`${origin}${call.path}`, { method: call.method, headers: call.headers ?? {}, ...(body === undefined ? {} : { body }) });
    const text = call.method === 'HEAD' ? '' : await response.text();
    const violations = JSON.parse(response.headers.get('sl-violations') ?? '[]') as Answer['violations'];
    const answer = { call, status: response.status, headers: response.headers, text, violations };
    answers.push(answer);
    return answer;
  }

  it('every answer of the suite is one the document declares, and Prism finds no response that breaks it', async () => {
    const key = { 'service-engine-authorizer': keys.all };
    const json = { 'content-type': 'application/json', ...key };
    const crosstab = { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2'] };
    const every = ['vpct', 'hpct', 'tpct', 'index', 'ebase', 'deff', 'se', 'moe', 'sig', 'chisq'];
    const gssTable = { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', Rows: [{ Variable: 'degree' }, 'F18-34'], Columns: [{ Variable: 'sex' }, { Expression: 'age=18..34', Label: 'Young' }], Statistics: every };
    const nhanesTable = { SurveyCode: 'NHANES', PopulationBaseCode: '*', Rows: ['HIGH-CHOL'], Columns: [{ Variable: 'RIAGENDR' }], Statistics: every, PercentBase: 'valid' };
    const calls: Call[] = [
      { name: 'docs', method: 'GET', path: '/docs', template: '/docs', status: 200, valid: true },
      { name: 'crosstab', method: 'POST', path: '/crosstab', template: '/crosstab', headers: json, body: crosstab, status: 200, valid: true },
      { name: 'crosstab two targets', method: 'POST', path: '/crosstab', template: '/crosstab', headers: json, body: { ...crosstab, TargetCodes: ['F18-34', 'sex=1'] }, status: 200, valid: true },
      { name: 'crosstab empty base', method: 'POST', path: '/crosstab', template: '/crosstab', headers: json, body: { ...crosstab, PopulationBaseCode: 'sex=1 AND sex=2' }, status: 200, valid: true },
      { name: 'crosstab bad targets', method: 'POST', path: '/crosstab', template: '/crosstab', headers: json, body: { ...crosstab, TargetCodes: ['a', 'b', 'c'] }, status: 400 },
      { name: 'crosstab unknown variable', method: 'POST', path: '/crosstab', template: '/crosstab', headers: json, body: { ...crosstab, PopulationBaseCode: 'yeer=2024' }, status: 400, valid: true },
      { name: 'crosstab no key', method: 'POST', path: '/crosstab', template: '/crosstab', headers: { 'content-type': 'application/json' }, body: crosstab, status: 401 },
      { name: 'crosstab bad key', method: 'POST', path: '/crosstab', template: '/crosstab', headers: { 'content-type': 'application/json', 'service-engine-authorizer': keys.revoked }, body: crosstab, status: 401, valid: true },
      { name: 'crosstab forbidden', method: 'POST', path: '/crosstab', template: '/crosstab', headers: { 'content-type': 'application/json', 'service-engine-authorizer': keys.gss }, body: { ...crosstab, SurveyCode: 'NHANES', TargetCodes: ['HIGH-CHOL'] }, status: 403, valid: true },
      { name: 'crosstab text/plain', method: 'POST', path: '/crosstab', template: '/crosstab', headers: { ...key, 'content-type': 'text/plain' }, body: crosstab, status: 415 },
      { name: 'crosstab too large', method: 'POST', path: '/crosstab', template: '/crosstab', headers: json, body: { ...crosstab, pad: 'x'.repeat(20_000) }, status: 413 },
      { name: 'crosstab preflight', method: 'OPTIONS', path: '/crosstab', template: '/crosstab', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' }, status: 200, valid: true },
      { name: 'surveys', method: 'GET', path: '/surveys', template: '/surveys', headers: key, status: 200, valid: true },
      { name: 'surveys no key', method: 'GET', path: '/surveys', template: '/surveys', status: 401 },
      { name: 'surveys preflight', method: 'OPTIONS', path: '/surveys', template: '/surveys', status: 200, valid: true },
      { name: 'survey', method: 'GET', path: '/surveys/GSS', template: '/surveys/{SurveyCode}', headers: key, status: 200, valid: true },
      { name: 'survey NHANES', method: 'GET', path: '/surveys/NHANES', template: '/surveys/{SurveyCode}', headers: key, status: 200, valid: true },
      { name: 'survey unknown', method: 'GET', path: '/surveys/ACS', template: '/surveys/{SurveyCode}', headers: key, status: 404, valid: true },
      { name: 'survey forbidden', method: 'GET', path: '/surveys/NHANES', template: '/surveys/{SurveyCode}', headers: { 'service-engine-authorizer': keys.gss }, status: 403, valid: true },
      { name: 'survey preflight', method: 'OPTIONS', path: '/surveys/GSS', template: '/surveys/{SurveyCode}', status: 200, valid: true },
      { name: 'table GSS every statistic', method: 'POST', path: '/tables', template: '/tables', headers: json, body: gssTable, status: 200, valid: true },
      { name: 'table NHANES every statistic', method: 'POST', path: '/tables', template: '/tables', headers: json, body: nhanesTable, status: 200, valid: true },
      { name: 'table unweighted, no statistics', method: 'POST', path: '/tables', template: '/tables', headers: json, body: { ...gssTable, Weight: null, Statistics: [], Missing: 'hide' }, status: 200, valid: true },
      { name: 'table CSV', method: 'POST', path: '/tables', template: '/tables', headers: { ...json, accept: 'text/csv' }, body: gssTable, status: 200, valid: true },
      { name: 'table XLSX', method: 'POST', path: '/tables', template: '/tables', headers: { ...json, accept: XLSX }, body: gssTable, status: 200, valid: true },
      { name: 'table unknown statistic', method: 'POST', path: '/tables', template: '/tables', headers: json, body: { ...gssTable, Statistics: ['mean'] }, status: 400 },
      { name: 'table unknown variable', method: 'POST', path: '/tables', template: '/tables', headers: json, body: { ...gssTable, Rows: [{ Variable: 'degre' }] }, status: 400, valid: true },
      { name: 'table not acceptable', method: 'POST', path: '/tables', template: '/tables', headers: { ...json, accept: 'text/html' }, body: gssTable, status: 406 },
      { name: 'table preflight', method: 'OPTIONS', path: '/tables', template: '/tables', status: 200, valid: true },
      { name: 'wrong method', method: 'GET', path: '/crosstab', status: 405 },
      { name: 'wrong method on docs', method: 'DELETE', path: '/docs', status: 405 },
      { name: 'no such path', method: 'GET', path: '/nope', status: 404 },
    ];
    for (const call of calls) await send(call);
    // Conditional GETs with the ETags just received: 304, no body.
    for (const template of ['/surveys', '/surveys/GSS']) {
      const etag = answers.find((answer) => answer.call.path === template && answer.status === 200)?.headers.get('etag') as string;
      await send({ name: `${template} not modified`, method: 'GET', path: template, template: template === '/surveys' ? '/surveys' : '/surveys/{SurveyCode}', headers: { ...key, 'if-none-match': etag }, status: 304, valid: true });
    }

    const judge = await ContractJudge.create(structuredClone(document));
    for (const answer of answers) {
      const { call } = answer;
      expect(answer.status, `${call.name}: ${answer.text}`).toBe(call.status);
      // Prism judges every answer against the document; nothing it forwarded may break it.
      expect(answer.violations.filter((violation) => violation.location[0] === 'response'), call.name).toEqual([]);
      if (call.valid) expect(answer.violations, call.name).toEqual([]);
      // And the same by hand: the status, its required headers and its JSON body are declared.
      const declared = call.template === undefined ? undefined : document.paths[call.template][call.method.toLowerCase()].responses[answer.status];
      if (call.template !== undefined) expect(declared, `${call.name}: ${answer.status} is not declared`).toBeDefined();
      for (const [name, header] of Object.entries((declared?.headers ?? {}) as Record<string, { required?: boolean }>)) {
        if (header.required) expect(answer.headers.get(name), `${call.name}: header ${name}`).not.toBeNull();
      }
      if (answer.headers.get('content-type')?.startsWith('application/json')) judge.check(call.method, call.template ?? call.path, answer.status, JSON.parse(answer.text));
    }
    expect(answers.find((answer) => answer.call.name === 'crosstab no key')?.headers.get('www-authenticate')).toBe('ApiKey realm="crosstab", header="Service-Engine-Authorizer"');
    expect(answers.find((answer) => answer.call.name === 'wrong method')?.headers.get('allow')).toBe('POST, OPTIONS');
  }, 120_000);

  it('answers HEAD on every GET operation as the document declares', async () => {
    // Straight to the server: Prism 5.14 parses the JSON body of every forwarded answer, and a HEAD answer has none.
    const key = { 'service-engine-authorizer': keys.all };
    for (const [path, template, status, headers] of [
      ['/docs', '/docs', 200, {}],
      ['/surveys', '/surveys', 200, key],
      ['/surveys/GSS', '/surveys/{SurveyCode}', 200, key],
      ['/surveys', '/surveys', 401, {}],
    ] as const) {
      const answer = await send({ name: `HEAD ${path}`, method: 'HEAD', path, template, headers, status }, 'server');
      expect(answer.status).toBe(status);
      const declared = document.paths[template].head.responses[status];
      expect(declared, `HEAD ${path} ${status}`).toBeDefined();
      expect(declared.content).toBeUndefined();
      for (const [name, header] of Object.entries(declared.headers as Record<string, { required?: boolean }>)) {
        if (header.required) expect(answer.headers.get(name), `HEAD ${path}: header ${name}`).not.toBeNull();
      }
    }
  });

  it('generates client types that every JSON body of the suite compiles against under tsc --strict', () => {
    expect(answers.length, 'run after the suite').toBeGreaterThan(30);
    const generate = spawnSync(bin('openapi-typescript'), ['openapi.json', '-o', 'api.d.ts'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(generate.status, generate.stderr + generate.stdout).toBe(0);
    const lines = ["import type { paths } from './api.js';", ''];
    let checked = 0;
    const operations = new Set<string>();
    for (const answer of answers) {
      const { call } = answer;
      if (call.template === undefined || !answer.headers.get('content-type')?.startsWith('application/json') || call.method === 'HEAD') continue;
      const type = `paths[${JSON.stringify(call.template)}][${JSON.stringify(call.method.toLowerCase())}]['responses'][${answer.status}]['content']['application/json']`;
      // A fresh object literal: a field the types do not declare is an error, as is a missing or mistyped one.
      lines.push(`// ${call.name}`, `export const answer${checked}: ${type} = ${answer.text};`, '');
      operations.add(`${call.method} ${call.template} ${answer.status}`);
      checked++;
    }
    writeFileSync(join(dir, 'answers.ts'), lines.join('\n'));
    const tsc = spawnSync(bin('tsc'), ['--strict', '--noEmit', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', 'answers.ts'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
    // Every operation's 200 and each error the suite saw were typed.
    for (const expected of ['GET /docs 200', 'POST /crosstab 200', 'POST /crosstab 400', 'POST /crosstab 401', 'POST /crosstab 403', 'POST /crosstab 413', 'POST /crosstab 415', 'GET /surveys 200', 'GET /surveys/{SurveyCode} 200', 'GET /surveys/{SurveyCode} 404', 'POST /tables 200', 'POST /tables 400', 'POST /tables 406']) {
      expect([...operations]).toContain(expected);
    }
  }, 180_000);
});
