// POST /tables under attack, against `crosstab serve` as users run it (the built CLI, GSS,
// a key file and its ledger): a request whose statistics are too much is refused with 400
// before its work starts and the server lives on; large answers are written off the thread
// that serves requests, so another account is answered meanwhile; a table outlasting the
// idle timeout is delivered and billed; a client that gives up stops the work and is not billed.
// Billing is checked on both stores: the key file's NDJSON ledger and a real PostgreSQL.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase } from '../../src/access/index.js';
import { addApiKey } from '../../src/http/index.js';
import { startPostgres, type PostgresServer } from '../access/postgres-server.js';
import { CLI, startServe, type ServeChild } from './serve-child.js';
import { readLedger, tempDir } from './support.js';

const paths = inject('testDatasets');

let serve: ServeChild;
let attacker: string;
let other: string;
/** How many table answers the store has billed. */
let billedTables: () => Promise<number>;
let postgres: PostgresServer | undefined;

/** The 4,510-column significance request that killed the server (rows sex, columns id). */
const PAIRS_BOMB = { SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Variable: 'sex' }], Columns: [{ Variable: 'id' }], Statistics: ['sig'] };
/** A large answer: 4,510 rows x 44 columns with every per-cell statistic (about 70 MB of JSON). */
const LARGE = {
  SurveyCode: 'GSS',
  PopulationBaseCode: '*',
  Rows: [{ Variable: 'id' }],
  Columns: [{ Variable: 'year' }, { Variable: 'sex' }, { Variable: 'degree' }],
  Statistics: ['vpct', 'hpct', 'tpct', 'index', 'ebase', 'deff', 'se', 'moe'],
};

interface Answer {
  status: number;
  body: string;
  bytes: number;
}

function post(path: string, key: string, body: unknown, options: { abortWhen?: Promise<void>; onResponse?: () => void; onBytes?: (bytes: number) => void } = {}): Promise<Answer> {
  const url = new URL(`${serve.origin}/v1${path}`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': key }, agent: false }, (res) => {
      options.onResponse?.();
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        options.onBytes?.(bytes);
        if (chunks.length < 4) chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
    void options.abortWhen?.then(() => req.destroy());
  });
}

const crosstab = (key: string) => post('/crosstab', key, { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2'] });

function cli(args: string[], cwd: string): string {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout;
}

/** The key file and its ledger: the server's arguments, two keys, the billed tables. */
async function keyFileStore(dir: string): Promise<string[]> {
  const keys = join(dir, 'keys.json');
  const ledger = join(dir, 'usage.ndjson');
  attacker = (await addApiKey(keys, { surveys: ['GSS'], groups: ['_ALL_'], name: 'attacker' })).apiKey;
  other = (await addApiKey(keys, { surveys: ['GSS'], groups: ['_ALL_'], name: 'other' })).apiKey;
  billedTables = async () => readLedger(ledger).filter((line) => line['operation'] === 'table' && line['void'] !== true).length;
  return ['--keys', keys, '--ledger', ledger];
}

/** Two accounts on a real PostgreSQL server, without rate limits. */
async function postgresStore(dir: string): Promise<string[]> {
  postgres = await startPostgres();
  const database = await postgres.createDatabase('tables');
  for (const name of ['attacker', 'other']) cli(['accounts', 'add', '--name', name, '--surveys', 'GSS', '--groups', 'GSS:_ALL_', '--rate-limit', 'none', '--database', database], dir);
  const key = (account: string) => (JSON.parse(cli(['keys', 'add', '--account', account, '--name', 'k', '--json', '--database', database], dir)) as { apiKey: string }).apiKey;
  attacker = key('attacker');
  other = key('other');
  billedTables = async () => {
    const db = await openDatabase(database);
    try {
      return Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM usage WHERE operation = 'table' AND void_reason IS NULL")).rows[0]!.n);
    } finally {
      await db.close();
    }
  };
  return ['--database', database];
}

/** The server's resident memory in bytes (Linux). */
function residentBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((row) => row.startsWith('VmRSS:'))!;
  return Number(/(\d+)/.exec(line)![1]) * 1024;
}

describe.each([
  ['the key file ledger', keyFileStore],
  ['PostgreSQL', postgresStore],
])('POST /tables on %s: bounded before work, off the serving thread, billed only when delivered', (_store, setUp) => {
  beforeAll(async () => {
    expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
    const dir = tempDir();
    const store = await setUp(dir);
    // An idle timeout of 1 s: every large table here takes longer than that to compute.
    // One table thread, so that a thread held by one client shows in another's answer.
    serve = await startServe(['--dataset', paths.gss, ...store, '--port', '0', '--idle-timeout', '1', '--table-threads', '1', '--access-log'], { cwd: dir, timeoutMs: 60_000 });
  }, 120_000);

  afterAll(async () => {
    if (serve !== undefined) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    await postgres?.stop();
    postgres = undefined;
  });

  it('refuses the 4,510-column significance table with 400 naming the comparisons limit, and the server lives on', async () => {
    const before = residentBytes(serve.child.pid!);
    const refused = await post('/tables', attacker, PAIRS_BOMB);
    expect(refused.status).toBe(400);
    const error = JSON.parse(refused.body).error;
    expect(error.code).toBe('invalid_request');
    expect(error.field).toBe('Statistics');
    expect(error.message).toContain('20,335,590 pairs');
    expect(error.message).toContain('comparisons limit');
    expect(error.hint).toContain('leave "sig" out');
    // Refused before work: no pair was built (memory as before, give or take 200 MB), nothing billed.
    expect(residentBytes(serve.child.pid!)).toBeLessThan(before + 200 * 1024 * 1024);
    expect((await crosstab(other)).status).toBe(200);
    expect(await billedTables()).toBe(0);
    // The same with Rao–Scott: rows id x columns year is one test of 4,510 x 34 cells.
    const chisq = await post('/tables', attacker, { ...LARGE, Columns: [{ Variable: 'year' }], Statistics: ['chisq'] });
    expect(chisq.status).toBe(400);
    expect(JSON.parse(chisq.body).error.message).toContain('raoScottCovariance limit');
  }, 60_000);

  it('answers a 70 MB table outlasting the idle timeout, bills it once, and answers another account meanwhile', async () => {
    const sent = performance.now();
    let done = false;
    const large = post('/tables', attacker, LARGE).finally(() => (done = true));
    // The other account sends its requests one after another while the table is in work.
    const answeredAt: number[] = [];
    const statuses: number[] = [];
    while (!done) {
      const answer = await crosstab(other);
      statuses.push(answer.status);
      if (!done) answeredAt.push(performance.now());
    }
    const table = await large;
    const took = performance.now() - sent;
    expect(table.status, table.body.slice(0, 300)).toBe(200);
    expect(table.bytes).toBeGreaterThan(50_000_000);
    expect(statuses.every((status) => status === 200)).toBe(true);
    // Answered throughout the table's work: many answers, no gap of half the table's time.
    expect(answeredAt.length).toBeGreaterThan(5);
    const gaps = answeredAt.map((at, i) => at - (answeredAt[i - 1] ?? sent));
    expect(Math.max(...gaps)).toBeLessThan(took / 2);
    expect(await billedTables()).toBe(1);
  }, 120_000);

  it('a client that gives up stops the table and is not billed; the server answers the next one', async () => {
    const billedBefore = await billedTables();
    // Two large tables of one account at once: they run one after the other (one account's tables
    // take turns), and the client gives up on whichever has not answered when the other's answer
    // begins to arrive. That one is then waiting or in work, whatever the machine's speed (its work
    // alone takes far longer than an answer's first bytes take to cross loopback); the other is
    // delivered whole and billed.
    const answered: Array<() => void> = [];
    const turns = [0, 1].map(() => new Promise<void>((resolve) => answered.push(resolve)));
    const both = [0, 1].map((i) => post('/tables', attacker, LARGE, { onResponse: () => answered[1 - i]!(), abortWhen: turns[i]! }).then((answer) => ({ answer }), (error: unknown) => ({ error })));
    const outcomes = await Promise.all(both);
    const delivered = outcomes.flatMap((outcome) => ('answer' in outcome ? [outcome.answer] : []));
    expect(delivered.length, JSON.stringify(delivered.map((answer) => answer.status))).toBe(1);
    expect(delivered[0]!.status).toBe(200);
    expect(delivered[0]!.bytes).toBeGreaterThan(50_000_000);
    // The access log line of the abandoned request: 499, never a billed 200.
    const deadline = Date.now() + 60_000;
    while (!/"status":499/.test(serve.output()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(serve.output()).toMatch(/"path":"\/v1\/tables","status":499/);
    expect(await billedTables()).toBe(billedBefore + 1);
    // The attacker's next table is answered (its turn was given back) and billed.
    const next = await post('/tables', attacker, { SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Variable: 'degree' }], Columns: [{ Variable: 'sex' }], Statistics: ['vpct', 'sig'] });
    expect(next.status).toBe(200);
    expect(await billedTables()).toBe(billedBefore + 2);
  }, 120_000);

  it('usage rows equal the tables delivered', async () => {
    const delivered = await Promise.all([1, 2, 3].map(() => post('/tables', attacker, { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', Rows: [{ Variable: 'degree' }], Columns: [{ Variable: 'race' }], Statistics: ['sig', 'chisq'] })));
    expect(delivered.map((answer) => answer.status)).toEqual([200, 200, 200]);
    // 1 (the large table) + 1 (delivered beside the abandoned one) + 1 (after the abort) + 3.
    expect(await billedTables()).toBe(6);
  }, 60_000);

  it('a server that stalls longer than the idle timeout while its clients wait goes on with its answers, cutting none', async () => {
    // The server's process stops (a long GC pause, a starved CPU, a paused VM) for twice the
    // idle timeout while it streams a large answer; that client keeps reading what was sent, and
    // another has just opened a connection and sends its request meanwhile. On waking, the idle
    // timers are due before the server has seen that the first client took those bytes (or its
    // own table thread has made the next ones) and before it has read the second's request:
    // neither client stopped. Before, the server cut both at once (ECONNRESET).
    const billedBefore = await billedTables();
    const { hostname, port } = new URL(serve.origin);
    const body = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2'] });
    let received = '';
    let stalled: Promise<void> | undefined;
    let ended: Promise<string | undefined> | undefined;
    const stall = async (): Promise<void> => {
      const socket = connect(Number(port), hostname);
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      ended = new Promise((resolve) => {
        socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code));
        socket.on('close', () => resolve(undefined));
      });
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      // Taken by the server (its idle timer running) while it streams the large answer.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(serve.child.kill('SIGSTOP')).toBe(true);
      socket.write(`POST /v1/crosstab HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nService-Engine-Authorizer: ${other}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      serve.child.kill('SIGCONT');
    };
    // Once the large answer is under way.
    const table = await post('/tables', attacker, LARGE, { onBytes: () => void (stalled ??= stall()) });
    await stalled;
    expect(table.status).toBe(200);
    expect(table.bytes).toBeGreaterThan(50_000_000);
    expect(await ended).toBeUndefined();
    expect(received.split('\r\n', 1)[0]).toBe('HTTP/1.1 200 OK');
    expect(await billedTables()).toBe(billedBefore + 1);
  }, 120_000);

  it('a client that stops reading a large answer is cut after the idle timeout, freeing the table thread for others', async () => {
    // The stalled client takes the status line, then reads nothing: the one table thread streams
    // its answer until the socket's buffers are full, then waits on it.
    let stalledStatus = 0;
    let begun: () => void = () => {};
    const streaming = new Promise<void>((resolve) => (begun = resolve));
    const stalled = httpRequest(new URL(`${serve.origin}/v1/tables`), { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': attacker }, agent: false }, (res) => {
      stalledStatus = res.statusCode ?? 0;
      res.pause();
      begun();
    });
    stalled.on('error', () => {});
    stalled.end(JSON.stringify(LARGE));
    await streaming;
    expect(stalledStatus).toBe(200);
    // Another account's table is answered: the stalled connection is cut after the idle timeout
    // (1 s here) without progress, and the one table thread is given back. Before, the thread
    // stayed with the stalled answer for as long as the client kept its connection open.
    const table = await post('/tables', other, { SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Variable: 'degree' }], Columns: [{ Variable: 'sex' }], Statistics: ['vpct'] });
    expect(table.status).toBe(200);
    stalled.destroy();
  }, 120_000);
});
