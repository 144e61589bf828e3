// `crosstab serve` processes sharing one database, as replicas behind a load balancer:
// a revocation made through the CLI is in force on every replica for every request sent 500 ms
// after it (the key cache's bound, docs/access.md), and SIGKILL of
// a replica in the middle of load loses no billing (every 200 a client got has a usage row).
// The same crash test runs on the embedded database (one process).
import autocannon from 'autocannon';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase } from '../../src/access/index.js';
import { cliPath } from '../support/paths.js';
import { tempDir } from '../http/support.js';
import { startServe, type ServeChild } from '../http/serve-child.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

const CLI = process.env['CROSSTAB_CLI'] ?? cliPath;
const paths = inject('testDatasets');
const BODY = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2', 'degree=3..4'] });
let postgres: PostgresServer;

beforeAll(async () => {
  expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
  postgres = await startPostgres();
});
afterAll(() => postgres?.stop());

function crosstab(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

type Replica = ServeChild;

function startReplica(database: string, cwd: string, extra: string[] = []): Promise<Replica> {
  return startServe(['--dataset', paths.gss, '--port', '0', '--database', database, ...extra], { cwd, timeoutMs: 60_000 });
}

async function post(origin: string, apiKey: string): Promise<number> {
  const response = await fetch(`${origin}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey }, body: BODY });
  await response.arrayBuffer();
  return response.status;
}

function newKey(database: string, cwd: string, account: string): { apiKey: string; id: string } {
  const added = crosstab(['keys', 'add', '--account', account, '--name', 'production', '--json', '--database', database], cwd);
  expect(added.status, added.stderr).toBe(0);
  return JSON.parse(added.stdout) as { apiKey: string; id: string };
}

/** Load on every replica; one replica is SIGKILLed half-way. Returns the request ids of the 200s. */
async function loadAndKill(replicas: Replica[], apiKey: string, victim: Replica): Promise<{ okIds: string[]; served: number }> {
  const okIds: string[] = [];
  const loads = replicas.map((replica) =>
    autocannon({
      url: replica.origin,
      connections: 5,
      duration: 3,
      timeout: 2,
      requests: [
        {
          method: 'POST',
          path: '/v1/crosstab',
          headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey },
          body: BODY,
          onResponse: (status: number, _body: string, _context: unknown, headers: Record<string, string>) => {
            if (status === 200) okIds.push(headers['x-request-id'] as string);
          },
        },
      ],
    }),
  );
  setTimeout(() => victim.child.kill('SIGKILL'), 1500);
  const results = await Promise.all(loads);
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
    const added = crosstab(['accounts', 'add', '--name', 'acme', '--surveys', 'GSS', '--groups', 'GSS:_ALL_', '--database', database], cwd);
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
    const { apiKey, id } = newKey(database, cwd, 'acme');
    for (const replica of replicas) expect(await post(replica.origin, apiKey)).toBe(200);
    const revoked = crosstab(['keys', 'revoke', id, '--database', database], cwd);
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
        // Keeps asking until the replica refuses, then a little longer (generous: 30 s).
        while (answers.filter((answer) => answer.status === 401).length < 5) {
          const sentAfter = performance.now() - returned;
          if (sentAfter > 30_000) throw new Error(`${replica.origin} still accepts the revoked key 30 s after the revocation`);
          answers.push({ sentAfter, status: await post(replica.origin, apiKey) });
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return answers.filter((answer) => answer.sentAfter >= BOUND && answer.status !== 401);
      }),
    );
    expect(late).toEqual(replicas.map(() => []));
  });

  it('SIGKILL of one replica mid-load: every 200 received has a usage row', async () => {
    const { apiKey } = newKey(database, cwd, 'acme');
    const before = (await billedIds(database)).size;
    const { okIds, served } = await loadAndKill(replicas, apiKey, replicas[0] as Replica);
    expect(served).toBeGreaterThan(40);
    const billed = await billedIds(database);
    const voided = await voidedIds(database);
    expect(okIds.filter((id) => !billed.has(id))).toEqual([]);
    // An answer received whole is never voided; a request in flight when the load ended may be.
    expect(okIds.filter((id) => voided.has(id))).toEqual([]);
    expect([...voided].filter((id) => !billed.has(id))).toEqual([]);
    expect(billed.size - before).toBeGreaterThanOrEqual(served);
    const usage = crosstab(['usage', '--account', 'acme', '--json', '--database', database], cwd);
    expect(JSON.parse(usage.stdout).calls).toBe(billed.size - voided.size);
  });
});

describe('SIGKILL of `crosstab serve` on the embedded database', () => {
  it('every 200 received has a usage row after the crash', async () => {
    const cwd = tempDir();
    const database = join(cwd, 'db');
    expect(crosstab(['accounts', 'add', '--name', 'acme', '--surveys', 'GSS', '--groups', 'GSS:_ALL_', '--database', database], cwd).status).toBe(0);
    const { apiKey } = newKey(database, cwd, 'acme');
    const replica = await startReplica(database, cwd);
    const { okIds, served } = await loadAndKill([replica], apiKey, replica);
    expect(served).toBeGreaterThan(20);
    // The killed process left its lock file; the next process takes over (the pid is gone).
    const billed = await billedIds(database);
    const voided = await voidedIds(database);
    expect(okIds.filter((id) => !billed.has(id))).toEqual([]);
    expect(okIds.filter((id) => voided.has(id))).toEqual([]);
    expect(billed.size).toBeGreaterThanOrEqual(served);
  });
});
