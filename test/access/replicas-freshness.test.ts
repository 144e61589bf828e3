// Two `crosstab serve` replicas on one PostgreSQL database, as customers run them behind a load
// balancer, with the cell cache on: nothing either replica cached answers after a change made
// through the other one, through the CLI or by publishing a new build.
// - An audience edited or deleted on replica A: replica B answers with its new expression (or
//   refuses) at once, in POST /crosstab, /tables and /tabbooks, used directly and through
//   another audience.
// - A group or licence withdrawn, or the account disabled, with the CLI: every request sent
//   500 ms (the key cache's bound, docs/access.md) after the command returned is refused by
//   both replicas, and no audience listing shows a definition the caller no longer may see.
// - A key revoked in the portal served by replica A: refused by A at once and by B 500 ms later.
// - A new build (one more brand value: the codes of the values after it change) published by an
//   atomic rename, taken up on SIGHUP by one replica and by --watch by the other: every answer
//   after the reload is the new build's, with its version header, including answers to the
//   very questions both replicas had cached before and answers through a saved audience.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDataset, toServiceResponse } from '../../src/index.js';
import { openDatabase } from '../../src/access/index.js';
import { cookieOf, csrfOf, postSignIn, send, signInForm } from './portal-client.js';
import type { Codebook } from '../../src/dataset/build/codebook.js';
import { writeMadeDataset } from '../support/make-dataset.js';
import { publish, waveRows } from '../support/survey-waves.js';
import { CLI, startServe, type ServeChild } from '../http/serve-child.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

const BOUND_MS = 500;
const CODEBOOK: Codebook = { variables: { region: { group: 'demo' }, age: { group: 'demo' }, brand: { group: 'brands' } }, codes: [] };
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

let postgres: PostgresServer;
let dir: string;
let database: string;
let served: string;
let apiKey: string;
const builds: { first: string; second: string } = { first: '', second: '' };
const replicas: ServeChild[] = [];

/** Wave 1, and wave 2: more respondents, and some of brand A now answer "AB" (a value between A and B). */
async function writeBuilds(): Promise<void> {
  const first = waveRows(20_000);
  builds.first = await writeMadeDataset(first.columns, first.weights, CODEBOOK, { survey: 'WAVES' });
  const second = waveRows(24_000);
  second.columns['brand'] = (second.columns['brand'] as string[]).map((brand, row) => (brand === 'A' && row % 3 === 0 ? 'AB' : brand));
  builds.second = await writeMadeDataset(second.columns, second.weights, CODEBOOK, { survey: 'WAVES' });
}

function cli(args: string[]): string {
  const result = spawnSync(process.execPath, [CLI, ...args, '--database', database], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout;
}

beforeAll(async () => {
  expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
  dir = mkdtempSync(join(tmpdir(), 'crosstab-fresh-'));
  postgres = await startPostgres();
  database = await postgres.createDatabase('freshness');
  await writeBuilds();
  served = join(dir, 'waves.arrow');
  publish(builds.first, served);
  cli(['accounts', 'add', '--name', 'acme', '--surveys', 'WAVES', '--groups', 'WAVES:_ALL_']);
  apiKey = (JSON.parse(cli(['keys', 'add', '--account', 'acme', '--name', 'production', '--json'])) as { apiKey: string }).apiKey;
  const common = ['--dataset', served, '--port', '0', '--database', database, '--cell-cache', '100000'];
  replicas.push(...(await Promise.all([startServe(common, { cwd: dir, timeoutMs: 60_000 }), startServe([...common, '--watch'], { cwd: dir, timeoutMs: 60_000 })])));
}, 120_000);

afterAll(async () => {
  for (const replica of replicas) replica.child.kill('SIGTERM');
  await Promise.all(replicas.map((replica) => replica.exited));
  postgres?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  version: string | null;
  body: any;
  text: string;
}

async function call(replica: ServeChild, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${replica.origin}/v1${path}`, {
    method,
    headers: { 'service-engine-authorizer': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, version: response.headers.get('x-dataset-version'), body: text === '' ? undefined : JSON.parse(text), text };
}

const crosstab = (replica: ServeChild, base: string, targets: string[]) => call(replica, 'POST', '/crosstab', { SurveyCode: 'WAVES', PopulationBaseCode: base, TargetCodes: targets });
const table = (replica: ServeChild, base: string, columns: string[]) => call(replica, 'POST', '/tables', { SurveyCode: 'WAVES', PopulationBaseCode: base, Rows: [{ Variable: 'region' }], Columns: columns });

/** The rows of every sheet of a POST /tabbooks workbook, as text. */
async function tabbook(replica: ServeChild, base: string, banner: string[]): Promise<{ status: number; rows: string[]; text: string }> {
  const response = await fetch(`${replica.origin}/v1/tabbooks`, {
    method: 'POST',
    headers: { 'service-engine-authorizer': apiKey, 'content-type': 'application/json', accept: XLSX },
    body: JSON.stringify({ SurveyCode: 'WAVES', PopulationBaseCode: base, Banner: banner, Stubs: ['region'] }),
  });
  const bytes = await response.arrayBuffer();
  if (response.status !== 200) return { status: response.status, rows: [], text: Buffer.from(bytes).toString() };
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(bytes);
  const rows: string[] = [];
  workbook.eachSheet((sheet) => sheet.eachRow((row) => rows.push(JSON.stringify(row.values))));
  return { status: 200, rows, text: '' };
}

/** What POST /crosstab answers on the build at `path`, computed in this process without any cache. */
async function expected(path: string, base: string, targets: string[]): Promise<{ checksum: string; body: unknown }> {
  const dataset = await openDataset(path, { cellCache: 0 });
  try {
    return { checksum: dataset.info.checksum, body: JSON.parse(JSON.stringify(toServiceResponse(await dataset.crosstab({ base, targets })))) };
  } finally {
    await dataset.close();
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the replica's log has `count` lines of `event`. */
async function logged(replica: ServeChild, event: string, count = 1): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const lines = replica
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{') && (JSON.parse(line) as { event?: string }).event === event);
    if (lines.length >= count) return;
    if (Date.now() > deadline) throw new Error(`no ${event} in:\n${replica.output()}`);
    await pause(25);
  }
}

describe('two replicas on one PostgreSQL database, cell cache on', () => {
  let buyers = '';
  let northBuyers = '';

  it('an audience edited on replica A answers with its new expression on replica B at once, directly and through another audience; deleted, it is refused', async () => {
    const [a, b] = replicas as [ServeChild, ServeChild];
    const saved = await call(a, 'POST', '/audiences', { SurveyCode: 'WAVES', Name: 'buyers', Expression: 'brand=A', Shared: true });
    expect(saved.status, saved.text).toBe(201);
    buyers = saved.body.AudienceId;
    const nested = await call(a, 'POST', '/audiences', { SurveyCode: 'WAVES', Name: 'north-buyers', Expression: '@buyers AND region=N', Shared: true });
    expect(nested.status, nested.text).toBe(201);
    northBuyers = nested.body.AudienceId;

    // Replica B caches the cells, tables and books of the first definition (asked twice: the second from its caches).
    const uses = async (replica: ServeChild) => ({
      crosstab: await crosstab(replica, '@north-buyers', ['@buyers', 'age=25..44 AND @buyers']),
      table: await table(replica, '@buyers', ['@north-buyers', 'age=25..44']),
      book: await tabbook(replica, '@buyers', ['@north-buyers', 'age=25..44']),
    });
    const plain = async (replica: ServeChild, buyersText: string) => ({
      crosstab: await crosstab(replica, `(${buyersText}) AND region=N`, [buyersText, `age=25..44 AND (${buyersText})`]),
      table: await table(replica, `(${buyersText})`, [`(${buyersText}) AND region=N`, 'age=25..44']),
      book: await tabbook(replica, `(${buyersText})`, [`((${buyersText}) AND region=N)`, 'age=25..44']),
    });
    for (let round = 0; round < 2; round++) {
      const before = await uses(b);
      expect(before.crosstab.status, before.crosstab.text).toBe(200);
      expect(before.crosstab.body).toEqual((await crosstab(b, '(brand=A) AND region=N', ['brand=A', 'age=25..44 AND (brand=A)'])).body);
    }

    for (const expression of ['brand=B,C', 'brand=D AND age=30..60', 'brand=A']) {
      const edited = await call(a, 'PUT', `/audiences/${buyers}`, { Expression: expression });
      expect(edited.status, edited.text).toBe(200);
      const now = await uses(b);
      const written = await plain(b, expression);
      expect(now.crosstab.status, now.crosstab.text).toBe(200);
      expect(now.crosstab.body).toEqual(written.crosstab.body);
      expect(now.table.status, now.table.text).toBe(200);
      expect(now.table.body.Table.cells).toEqual(written.table.body.Table.cells);
      expect(now.book.status, now.book.text).toBe(200);
      expect(now.book.rows.slice(1)).toEqual(written.book.rows.slice(1));
      // And back on A, whose caches saw the same edits.
      expect((await crosstab(a, '@north-buyers', ['@buyers'])).body).toEqual((await crosstab(a, `(${expression}) AND region=N`, [expression])).body);
    }

    const deleted = await call(a, 'DELETE', `/audiences/${buyers}`);
    expect(deleted.status, deleted.text).toBe(204);
    for (const base of ['@buyers', '@north-buyers']) {
      const refused = await crosstab(b, base, ['age=25..44']);
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.error.code).toBe('unknown_audience');
      expect((await table(b, base, ['age=25..44'])).body.error.code).toBe('unknown_audience');
      expect((await tabbook(b, base, ['age=25..44'])).status).toBe(400);
    }
    const again = await call(a, 'POST', '/audiences', { SurveyCode: 'WAVES', Name: 'buyers', Expression: 'brand=A', Shared: true });
    expect(again.status, again.text).toBe(201);
    buyers = again.body.AudienceId;
  });

  it('a group withdrawn with the CLI: 500 ms later neither replica answers with it, nor shows an audience of it', async () => {
    cli(['accounts', 'update', 'acme', '--surveys', 'WAVES', '--groups', 'WAVES:demo']);
    await pause(BOUND_MS);
    for (const replica of replicas) {
      const direct = await crosstab(replica, 'region=N', ['brand=A']);
      expect(direct.status, direct.text).toBe(400);
      expect(direct.text).not.toContain('"Results"');
      const audience = await crosstab(replica, '@north-buyers', ['age=25..44']);
      expect(audience.status, audience.text).toBe(403);
      expect(audience.text).not.toMatch(/brand|region=N/);
      expect((await table(replica, '@buyers', ['age=25..44'])).status).toBe(403);
      expect((await tabbook(replica, '@buyers', ['age=25..44'])).status).toBe(403);
      const listed = await call(replica, 'GET', '/audiences?SurveyCode=WAVES');
      expect(listed.status, listed.text).toBe(200);
      expect(listed.body.Audiences.map((each: { Expression: unknown; Usable: boolean }) => [each.Expression, each.Usable])).toEqual([
        [null, false],
        [null, false],
      ]);
      expect(listed.text).not.toContain('brand');
      const detail = await call(replica, 'GET', '/surveys/WAVES');
      expect(detail.status, detail.text).toBe(200);
      expect(detail.text).not.toContain('brand');
      expect(detail.body.Audiences.map((each: { Expression: unknown; Usable: boolean }) => [each.Expression, each.Usable])).toEqual([
        [null, false],
        [null, false],
      ]);
      // @north-buyers names only variables of the caller's groups, but uses @buyers, which does not: not usable, not shown.
      for (const id of [buyers, northBuyers]) expect((await call(replica, 'GET', `/audiences/${id}`)).body).toMatchObject({ Expression: null, Usable: false });
    }
    cli(['accounts', 'update', 'acme', '--surveys', 'WAVES', '--groups', 'WAVES:_ALL_']);
    await pause(BOUND_MS);
    for (const replica of replicas) expect((await crosstab(replica, '@north-buyers', ['age=25..44'])).status).toBe(200);
  });

  it('a licence withdrawn, then the account disabled, with the CLI: 500 ms later both replicas refuse every route', async () => {
    cli(['accounts', 'update', 'acme', '--surveys', 'OTHER', '--groups', 'OTHER:_ALL_']);
    await pause(BOUND_MS);
    for (const replica of replicas) {
      expect((await crosstab(replica, '*', ['brand=A'])).status).toBe(403);
      expect((await crosstab(replica, '@buyers', ['age=25..44'])).status).toBe(403);
      expect((await table(replica, '*', ['age=25..44'])).status).toBe(403);
      expect((await tabbook(replica, '*', ['age=25..44'])).status).toBe(403);
      expect((await call(replica, 'GET', '/surveys/WAVES')).status).toBe(403);
      const listed = await call(replica, 'GET', '/audiences');
      expect(listed.body.Audiences ?? []).toEqual([]);
      expect((await call(replica, 'GET', `/audiences/${buyers}`)).status).toBe(404);
    }
    cli(['accounts', 'update', 'acme', '--surveys', 'WAVES', '--groups', 'WAVES:_ALL_']);
    cli(['accounts', 'disable', 'acme']);
    await pause(BOUND_MS);
    for (const replica of replicas) {
      for (const answer of [await crosstab(replica, '*', ['brand=A']), await table(replica, '*', ['age=25..44']), await call(replica, 'GET', '/audiences'), await call(replica, 'GET', '/surveys/WAVES')]) {
        expect(answer.status, answer.text).toBe(401);
        expect(answer.text).not.toContain('brand');
      }
      expect((await tabbook(replica, '*', ['age=25..44'])).status).toBe(401);
    }
    cli(['accounts', 'update', 'acme', '--enable']);
    await pause(BOUND_MS);
    for (const replica of replicas) expect((await crosstab(replica, '@buyers', ['age=25..44'])).status).toBe(200);
  });

  it("a new build published (SIGHUP on one replica, --watch on the other): every answer after the reload is the new build's, the cached ones and those through an audience included", async () => {
    const questions: Array<[string, string[], string, string[]]> = [
      ['region=N,S', ['brand=A', 'age=25..44 AND brand=B,C,D,E'], 'region=N,S', ['brand=A', 'age=25..44 AND brand=B,C,D,E']],
      ['region=S', ['brand=B,C', 'brand=E'], 'region=S', ['brand=B,C', 'brand=E']],
      ['@buyers', ['brand=B', 'region=N'], '(brand=A)', ['brand=B', 'region=N']],
      ['*', ['@buyers', 'NOT @buyers'], '*', ['(brand=A)', 'NOT (brand=A)']],
    ];
    const old = await Promise.all(questions.map(([, , base, targets]) => expected(builds.first, base, targets)));
    const fresh = await Promise.all(questions.map(([, , base, targets]) => expected(builds.second, base, targets)));
    // The new build answers these questions differently: an old cell served after the reload would show.
    questions.forEach((_, i) => expect(fresh[i]?.body).not.toEqual(old[i]?.body));
    /** Each replica answers every question twice (the second from its cell cache) as `build` does. */
    const expectAnswers = async (build: typeof old): Promise<void> => {
      for (const replica of replicas) {
        for (let round = 0; round < 2; round++) {
          for (const [i, [base, targets]] of questions.entries()) {
            const answer = await crosstab(replica, base, targets);
            expect(answer.status, answer.text).toBe(200);
            expect({ version: answer.version, body: answer.body }).toEqual({ version: build[i]?.checksum, body: build[i]?.body });
          }
        }
      }
    };
    await expectAnswers(old);
    const [a, b] = replicas as [ServeChild, ServeChild];
    publish(builds.second, served);
    a.child.kill('SIGHUP');
    await Promise.all([logged(a, 'dataset_reloaded'), logged(b, 'dataset_reloaded')]);
    await expectAnswers(fresh);
    // An audience saved before the new value came names the same respondents' values after it.
    const ab = await crosstab(b, '*', ['brand=AB', '@buyers']);
    expect(ab.body).toEqual((await expected(builds.second, '*', ['brand=AB', 'brand=A'])).body);
  });

  it('a key revoked in the portal of replica A: refused by A at once, and by B for every request sent 500 ms later', async () => {
    const [a, b] = replicas as [ServeChild, ServeChild];
    const made = JSON.parse(cli(['keys', 'add', '--account', 'acme', '--name', 'staging', '--json'])) as { apiKey: string; id: string };
    const user = JSON.parse(cli(['users', 'add', '--account', 'acme', '--email', 'ops@acme.example', '--json'])) as { oneTimePassword: string };
    const db = await openDatabase(database);
    try {
      await db.query("UPDATE users SET must_change_password = false WHERE email = 'ops@acme.example'");
    } finally {
      await db.close();
    }
    const withKey = (replica: ServeChild) =>
      fetch(`${replica.origin}/v1/crosstab`, { method: 'POST', headers: { 'service-engine-authorizer': made.apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ SurveyCode: 'WAVES', PopulationBaseCode: '*', TargetCodes: ['brand=A'] }) }).then(async (response) => {
        await response.arrayBuffer();
        return response.status;
      });
    // Both replicas have the key's rights cached.
    for (const replica of replicas) expect(await withKey(replica)).toBe(200);
    const signed = await postSignIn(a.origin, await signInForm(a.origin), 'ops@acme.example', user.oneTimePassword);
    expect(signed.status, signed.body).toBe(303);
    const cookie = cookieOf(signed, 'crosstab_portal') as string;
    const csrf = csrfOf(await send(a.origin, 'GET', '/portal/keys', { cookie }));
    const revoked = await send(a.origin, 'POST', `/portal/keys/${made.id}/revoke`, { cookie, form: { csrf } });
    expect(revoked.status, revoked.body).toBe(200);
    const returned = performance.now();
    expect(await withKey(a)).toBe(401);
    await pause(Math.max(0, BOUND_MS - (performance.now() - returned)));
    for (let i = 0; i < 5; i++) expect(await withKey(b)).toBe(401);
  });
});
