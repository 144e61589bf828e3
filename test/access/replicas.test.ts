// `crosstab serve` processes sharing one database, as replicas behind a load balancer:
// a revocation made through the CLI is in force on every replica for every request sent 500 ms
// after it (the key cache's bound, docs/access.md), and SIGKILL of
// a replica in the middle of load loses no billing (every 200 a client got has a usage row).
// The same crash test runs on the embedded database (one process).
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase } from '../../src/access/index.js';
import { cliPath } from '../support/paths.js';
import { tempDir } from '../http/support.js';
import { startServe, type ServeChild } from '../http/serve-child.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const CLI = process.env['CROSSTAB_CLI'] ?? cliPath;
const paths = inject('testDatasets');
const BODY = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2', 'degree=3..4'] });
let postgres: PostgresServer;

beforeAll(async () => {
  expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
  postgres = await startPostgres();
});
afterAll(() => postgres?.stop());

// Deadlines of the steps, each far above what the step takes on a loaded machine (under load
// 17-20 beside 4 busy loops, `crosstab accounts add` making the embedded database took over
// 60 s), so that a step that hangs fails with its own message and output; the tests' and
// hooks' timeouts are only the backstop above their sum.
const CLI_DEADLINE_MS = 180_000;
const START_DEADLINE_MS = 180_000;
/** Load runs until its counts are reached (see loadAndKill), at most this long. */
const LOAD_DEADLINE_S = 180;
const TEST_TIMEOUT_MS = 600_000;

/**
 * The CLI in a child process. Not spawnSync: that holds this thread, and with it the test's
 * timers and the HTTP client's sockets, for as long as the command runs.
 */
function crosstab(args: string[], cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`crosstab ${args.join(' ')} did not end within ${CLI_DEADLINE_MS / 1000} s:\n${stdout}${stderr}`));
    }, CLI_DEADLINE_MS);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

type Replica = ServeChild;

function startReplica(database: string, cwd: string, extra: string[] = []): Promise<Replica> {
  return startServe(['--dataset', paths.gss, '--port', '0', '--database', database, ...extra], { cwd, timeoutMs: START_DEADLINE_MS });
}

/**
 * One request on a connection of its own. On a kept-alive connection the client may send a
 * request just as the server closes the connection as idle (5 s), which fails with "other
 * side closed" though no replica refused anything: seen under load, after the test's thread
 * had been held while a CLI command ran.
 */
function post(origin: string, apiKey: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = request(`${origin}/v1/crosstab`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode as number));
      response.on('error', reject);
    });
    sent.on('error', reject);
    sent.end(BODY);
  });
}

async function newKey(database: string, cwd: string, account: string): Promise<{ apiKey: string; id: string }> {
  const added = await crosstab(['keys', 'add', '--account', account, '--name', 'production', '--json', '--database', database], cwd);
  expect(added.status, added.stderr).toBe(0);
  return JSON.parse(added.stdout) as { apiKey: string; id: string };
}

/** 200s the victim gives before it is killed, and each other replica after. */
const ANSWERS_BEFORE_KILL = 20;
const ANSWERS_AFTER_KILL = 20;

/**
 * Load on every replica (5 connections each); once the victim has answered
 * ANSWERS_BEFORE_KILL requests with 200 it is SIGKILLed, its other connections' requests in
 * flight, and the load goes on until every other replica has answered ANSWERS_AFTER_KILL more.
 * Counted, not timed: a kill at a fixed time into a fixed-length run came, on a loaded
 * machine, before the victim had answered much. Returns the request ids of the 200s.
 */
async function loadAndKill(replicas: Replica[], apiKey: string, victim: Replica): Promise<{ okIds: string[]; served: number }> {
  const okIds: string[] = [];
  const answered = replicas.map(() => 0);
  let atKill: number[] | undefined;
  let reached!: () => void;
  const enough = new Promise<void>((resolve) => (reached = resolve));
  const counted = (index: number): void => {
    answered[index]! += 1;
    if (atKill === undefined && answered[replicas.indexOf(victim)]! >= ANSWERS_BEFORE_KILL) {
      victim.child.kill('SIGKILL');
      atKill = [...answered];
    }
    if (atKill !== undefined && replicas.every((replica, i) => replica === victim || answered[i]! - atKill![i]! >= ANSWERS_AFTER_KILL)) reached();
  };
  const loads = replicas.map((replica, index) =>
    autocannon({
      url: replica.origin,
      connections: 5,
      duration: LOAD_DEADLINE_S,
      // Slowness on a loaded machine is not what this test is about: no timeout short enough
      // to turn slow answers into client errors (a timed-out request is not a 200).
      timeout: 60,
      requests: [
        {
          method: 'POST',
          path: '/v1/crosstab',
          headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey },
          body: BODY,
          onResponse: (status: number, _body: string, _context: unknown, headers: Record<string, string>) => {
            if (status !== 200) return;
            okIds.push(headers['x-request-id'] as string);
            counted(index);
          },
        },
      ],
    }),
  );
  await Promise.race([enough, Promise.all(loads)]);
  for (const load of loads) load.stop();
  const results = await Promise.all(loads);
  expect(atKill, `the victim answered ${answered[replicas.indexOf(victim)]} requests in ${LOAD_DEADLINE_S} s`).toBeDefined();
  expect(await victim.exited).toBe(null);
  for (const result of results) expect(result['5xx']).toBe(0);
  return { okIds, served: results.reduce((sum, result) => sum + result['2xx'], 0) };
}

async function billedIds(database: string): Promise<Set<string>> {
  return usageIds(database, 'void_reason IS NULL');
}

/** Requests billed and then voided (a client that left before its answer's last byte, e.g. when a load run ends). */
async function voidedIds(database: string): Promise<Set<string>> {
  return usageIds(database, 'void_reason IS NOT NULL');
}

async function usageIds(database: string, where: string): Promise<Set<string>> {
  const db = await openDatabase(database);
  try {
    return new Set((await db.query<{ request_id: string }>(`SELECT request_id FROM usage WHERE ${where}`)).rows.map((row) => row.request_id));
  } finally {
    await db.close();
  }
}

describe('two `crosstab serve` replicas on one PostgreSQL database', () => {
  let database: string;
  let cwd: string;
  let replicas: Replica[] = [];

  beforeAll(async () => {
    database = await postgres.createDatabase('replicas');
    cwd = tempDir();
    const added = await crosstab(['accounts', 'add', '--name', 'acme', '--surveys', 'GSS', '--groups', 'GSS:_ALL_', '--database', database], cwd);
    expect(added.status, added.stderr).toBe(0);
    // Started together: the migrations run once (an advisory lock makes them take turns).
    // The second commits usage with three statements in flight (--usage-statements), the
    // first with the default one: the billing checks below hold for both.
    replicas = await Promise.all([startReplica(database, cwd), startReplica(database, cwd, ['--usage-statements', '3'])]);
  });
  afterAll(() => {
    for (const replica of replicas) replica.child.kill('SIGKILL');
  });

  it('a key revoked with the CLI: every request sent 500 ms (the cache bound) after the command returned is refused, on every replica', async () => {
    const { apiKey, id } = await newKey(database, cwd, 'acme');
    for (const replica of replicas) expect(await post(replica.origin, apiKey)).toBe(200);
    const revoked = await crosstab(['keys', 'revoke', id, '--database', database], cwd);
    expect(revoked.status, revoked.stderr).toBe(0);
    // The revocation committed before the command returned. A request sent BOUND or more
    // after that reaches its replica later still, and a replica uses rights read less than
    // BOUND before a request arrives: so that request is refused, however slow this machine
    // is (no timing margin is needed in that direction). Earlier requests may pass.
    const BOUND = 500;
    const returned = performance.now();
    const late = await Promise.all(
      replicas.map(async (replica) => {
        const answers: Array<{ sentAfter: number; status: number }> = [];
        // Keeps asking until the replica refuses, then for four more requests.
        while (answers.filter((answer) => answer.status === 401).length < 5) {
          const sentAfter = performance.now() - returned;
          if (sentAfter > 30_000 && !answers.some((answer) => answer.status === 401)) throw new Error(`${replica.origin} still accepts the revoked key 30 s after the revocation`);
          answers.push({ sentAfter, status: await post(replica.origin, apiKey) });
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return answers.filter((answer) => answer.sentAfter >= BOUND && answer.status !== 401);
      }),
    );
    expect(late).toEqual(replicas.map(() => []));
  }, TEST_TIMEOUT_MS);

  it('SIGKILL of one replica mid-load: every 200 received has a usage row', async () => {
    const { apiKey } = await newKey(database, cwd, 'acme');
    const before = (await billedIds(database)).size;
    const { okIds, served } = await loadAndKill(replicas, apiKey, replicas[0] as Replica);
    expect(served).toBeGreaterThanOrEqual(ANSWERS_BEFORE_KILL + ANSWERS_AFTER_KILL);
    const billed = await billedIds(database);
    const voided = await voidedIds(database);
    expect(okIds.filter((id) => !billed.has(id))).toEqual([]);
    // An answer received whole is never voided; a request in flight when the load ended may be.
    expect(okIds.filter((id) => voided.has(id))).toEqual([]);
    expect([...voided].filter((id) => !billed.has(id))).toEqual([]);
    expect(billed.size - before).toBeGreaterThanOrEqual(served);
    const usage = await crosstab(['usage', '--account', 'acme', '--json', '--database', database], cwd);
    expect(JSON.parse(usage.stdout).calls).toBe(billed.size - voided.size);
  }, TEST_TIMEOUT_MS);
});

describe('SIGKILL of `crosstab serve` on the embedded database', () => {
  let database: string;
  let apiKey: string;
  let replica: Replica;

  beforeAll(async () => {
    const cwd = tempDir();
    database = await newEmbeddedFolder(join(cwd, 'db'));
    const added = await crosstab(['accounts', 'add', '--name', 'acme', '--surveys', 'GSS', '--groups', 'GSS:_ALL_', '--database', database], cwd);
    expect(added.status, added.stderr).toBe(0);
    ({ apiKey } = await newKey(database, cwd, 'acme'));
    replica = await startReplica(database, cwd);
  });
  afterAll(() => replica?.child.kill('SIGKILL'));

  it('every 200 received has a usage row after the crash', async () => {
    const { okIds, served } = await loadAndKill([replica], apiKey, replica);
    expect(served).toBeGreaterThanOrEqual(ANSWERS_BEFORE_KILL);
    // The killed process left its lock file; the next process takes over (the pid is gone).
    const billed = await billedIds(database);
    const voided = await voidedIds(database);
    expect(okIds.filter((id) => !billed.has(id))).toEqual([]);
    expect(okIds.filter((id) => voided.has(id))).toEqual([]);
    expect(billed.size).toBeGreaterThanOrEqual(served);
  }, TEST_TIMEOUT_MS);
});
