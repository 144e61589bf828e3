#!/usr/bin/env node
// Replicas behind nginx (deploy/nginx.conf) on one PostgreSQL access store, against one
// `crosstab serve` alone, with autocannon on loopback:
//
//   npm run bench:replicas -- [--replicas 3] [--duration 5] [--rounds 3] [--connections 24]
//                             [--dataset datasets/build/gss.arrow] [--postgres postgres://...] [--json]
//
// Rows: one replica directly; nginx -> 1 replica (the cost of the hop); nginx -> N replicas;
// then one run (at least 8 s) through nginx -> N replicas with one replica SIGKILLed a
// second in and restarted 3 s later (past its fail_timeout of 2 s, so nginx tries the dead
// replica again and has to pass those requests on). Reported: req/s, latency, errors seen by clients, and usage rows in
// PostgreSQL against the 200s received (each row of the table uses its own key).
//
// Every process (PostgreSQL, the replicas, nginx, autocannon) shares this machine's cores:
// on a 2-core machine N replicas cannot serve more than one does; the figure shows what the
// proxy costs, not what more machines buy. Without --postgres a throwaway cluster is
// started (Debian's postgresql, as in the tests).
import autocannon from 'autocannon';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, totalmem, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { freePorts, startNginx } from './lib/nginx.js';
import { startPostgres } from './lib/postgres.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const QUERY = { base: 'year=2024', targets: ['sex=2', 'degree=3..4'] };

const { values: options } = parseArgs({
  options: {
    replicas: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '24' },
    dataset: { type: 'string', default: join(root, 'datasets', 'build', 'gss.arrow') },
    cli: { type: 'string', default: join(root, 'dist', 'cli', 'main.js') },
    postgres: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const replicaCount = Number(options.replicas);
const duration = Number(options.duration);
const rounds = Number(options.rounds);
const connections = Number(options.connections);
const log = (line) => !options.json && process.stderr.write(`${line}\n`);
const crosstab = (...args) => execFileSync(process.execPath, [options.cli, ...args], { encoding: 'utf8' });

/** Starts `crosstab serve ARGS` and waits for its "listening on" line. */
function serve(args) {
  const child = spawn(process.execPath, [options.cli, 'serve', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((done) => child.once('exit', (code, signal) => done(code ?? signal)));
  return new Promise((resolveStart, reject) => {
    let output = '';
    void exited.then((code) => reject(new Error(`crosstab serve exited with ${code}: ${output}`)));
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /listening on (http:\/\/[^/\s]+)/.exec(output);
      if (match) resolveStart({ child, exited, origin: match[1] });
    });
  });
}

function request(apiKey) {
  return {
    method: 'POST',
    path: '/v1/crosstab',
    headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey },
    body: JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: QUERY.base, TargetCodes: QUERY.targets }),
  };
}

async function run(url, apiKey, seconds, onStart) {
  const failures = [];
  const connectionErrors = [];
  const started = Date.now();
  const instance = autocannon({
    url,
    connections,
    duration: seconds,
    timeout: 10,
    requests: [{ ...request(apiKey), onResponse: (status) => status !== 200 && failures.push({ status, ms: Date.now() - started }) }],
  });
  instance.on('reqError', (error) => connectionErrors.push({ message: error.message, ms: Date.now() - started }));
  onStart?.();
  const result = await instance;
  return { result, failures, connectionErrors };
}

const work = mkdtempSync(join(tmpdir(), 'crosstab-replicas-bench-'));
const machine = { cpu: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}`, memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10, node: process.version };
const loadAtStart = loadavg();
const owned = await (options.postgres ? undefined : startPostgres());
const database = options.postgres ?? owned.url;
const replicas = [];
const proxies = [];
try {
  const account = `bench-${Date.now().toString(36)}`;
  crosstab('accounts', 'add', '--name', account, '--surveys', 'GSS', '--groups', 'GSS:_ALL_', '--database', database);
  const newKey = () => JSON.parse(crosstab('keys', 'add', '--account', account, '--name', 'bench', '--json', '--database', database));
  const expected = JSON.parse(crosstab('query', options.dataset, '--base', QUERY.base, ...QUERY.targets.flatMap((t) => ['--target', t]), '--json'));

  const ports = await freePorts(replicaCount);
  const startReplica = async (index) => (replicas[index] = await serve(['--dataset', options.dataset, '--database', database, '--port', String(ports[index])]));
  await startReplica(0); // runs the migrations; the others start together
  await Promise.all(ports.slice(1).map((_, i) => startReplica(i + 1)));
  const addresses = ports.map((port) => `127.0.0.1:${port}`);
  const nginxOne = await startNginx({ dir: join(work, 'nginx-1'), replicas: addresses.slice(0, 1) });
  const nginxAll = await startNginx({ dir: join(work, `nginx-${replicaCount}`), replicas: addresses });
  proxies.push(nginxOne, nginxAll);

  const targets = [
    { name: 'one replica, directly', url: replicas[0].origin },
    { name: 'nginx -> 1 replica', url: nginxOne.origin },
    { name: `nginx -> ${replicaCount} replicas`, url: nginxAll.origin },
  ].map((target) => ({ ...target, key: newKey(), runs: [] }));
  for (const target of targets) {
    const reply = await fetch(`${target.url}/v1/crosstab`, { method: 'POST', headers: request(target.key.apiKey).headers, body: request(target.key.apiKey).body });
    const answer = await reply.json();
    if (reply.status !== 200 || JSON.stringify(answer) !== JSON.stringify(expected)) throw new Error(`something is off: ${target.name} answered ${reply.status} ${JSON.stringify(answer)}, \`crosstab query\` says ${JSON.stringify(expected)}`);
    target.ok = 1;
    const warm = await run(target.url, target.key.apiKey, 1);
    target.ok += warm.result['2xx'];
    target.failed = warm.result.non2xx + warm.result.errors;
  }
  for (let round = 1; round <= rounds; round++) {
    for (const target of targets) {
      log(`round ${round}/${rounds}: ${target.name}, ${duration} s x ${connections} connections`);
      const { result } = await run(target.url, target.key.apiKey, duration);
      target.runs.push(result);
      target.ok += result['2xx'];
      target.failed += result.non2xx + result.errors;
    }
  }

  const killSeconds = Math.max(duration, 8);
  log(`kill run: nginx -> ${replicaCount} replicas for ${killSeconds} s, replica 1 SIGKILLed at 1 s and restarted 3 s later`);
  const killTarget = { name: `nginx -> ${replicaCount} replicas, one SIGKILLed and restarted`, key: newKey(), runs: [] };
  let killedAtMs = 0;
  let downMs = 0;
  let started = 0;
  const restart = new Promise((resolveRestart, reject) => {
    const victim = replicas[0];
    setTimeout(() => {
      killedAtMs = Date.now() - started;
      victim.child.kill('SIGKILL');
      victim.exited
        .then(() => new Promise((done) => setTimeout(done, 3000)))
        .then(() => startReplica(0))
        .then(() => {
          downMs = Date.now() - started - killedAtMs;
          resolveRestart();
        }, reject);
    }, 1000);
  });
  const killed = await run(nginxAll.origin, killTarget.key.apiKey, killSeconds, () => (started = Date.now()));
  await restart;
  killTarget.runs.push(killed.result);
  killTarget.ok = killed.result['2xx'];
  killTarget.failed = killed.result.non2xx + killed.result.errors;
  targets.push(killTarget);

  await new Promise((done) => setTimeout(done, 500)); // answers abandoned at the end are still billed
  const client = new pg.Client({ connectionString: database });
  await client.connect();
  for (const target of targets) {
    target.usageRows = (await client.query('SELECT count(*)::int AS rows FROM usage WHERE key_id = $1', [target.key.id])).rows[0].rows;
  }
  await client.end();

  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const rows = targets.map((target) => ({
    server: target.name,
    requestsPerSecond: Math.round(median(target.runs.map((r) => (r['2xx'] + r.non2xx) / r.duration))),
    meanMs: Math.round(median(target.runs.map((r) => r.latency.mean)) * 100) / 100,
    p99Ms: median(target.runs.map((r) => r.latency.p99)),
    ok: target.ok,
    failed: target.failed,
    usageRows: target.usageRows,
  }));
  const report = {
    date: new Date().toISOString(),
    machine,
    loadAverageAtStart: loadAtStart,
    loadAverageAtEnd: loadavg(),
    postgres: owned ? owned.version : 'given by --postgres',
    nginx: spawnSync(nginxAll.child.spawnfile, ['-v'], { encoding: 'utf8' }).stderr.trim(), // nginx -v writes to stderr
    replicas: replicaCount,
    durationSeconds: duration,
    rounds,
    connections,
    rows,
    kill: {
      killedAtMs,
      replicaDownMs: downMs,
      statuses: Object.fromEntries([...new Set(killed.failures.map((f) => f.status))].map((s) => [s, killed.failures.filter((f) => f.status === s).length])),
      failuresAtMs: killed.failures.map((f) => f.ms),
      connectionErrors: killed.connectionErrors.length,
      refusedConnectsPassedOn: nginxAll.errorLog().match(/Connection refused/g)?.length ?? 0,
    },
  };
  for (const row of rows) {
    if (row.usageRows < row.ok) throw new Error(`something is off: ${row.server}: ${row.usageRows} usage rows for ${row.ok} 200s (a 200 without its row)`);
  }
  if (options.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    const header = ['target', 'req/s', 'mean ms', 'p99 ms', '200s', 'not 200', 'usage rows'];
    const table = rows.map((row) => [row.server, String(row.requestsPerSecond), row.meanMs.toFixed(2), String(row.p99Ms), String(row.ok), String(row.failed), String(row.usageRows)]);
    const widths = header.map((cell, i) => Math.max(cell.length, ...table.map((row) => row[i].length)));
    const line = (cells) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
    const out = [
      `${report.date}  ${machine.cpu}, ${machine.memoryGiB} GiB, node ${machine.node}, ${report.nginx}, ${report.postgres}`,
      `load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, at end ${report.loadAverageAtEnd.map((l) => l.toFixed(2)).join(' ')}; ${rounds} rounds of ${duration} s x ${connections} connections (medians)`,
      line(header),
      widths.map((w) => '-'.repeat(w)).join('  '),
      ...table.map(line),
      `kill run: SIGKILL at ${killedAtMs} ms, replica listening again ${downMs} ms later; client errors ${JSON.stringify(report.kill.statuses)} at ${report.kill.failuresAtMs.join(', ') || '-'} ms, ${report.kill.connectionErrors} connection errors; nginx passed on ${report.kill.refusedConnectsPassedOn} requests refused by the dead replica`,
      'usage rows >= 200s always; the excess is requests answered after autocannon stopped waiting and 502s billed before their replica died',
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  }
} finally {
  for (const proxy of proxies) await proxy.stop();
  for (const replica of replicas) {
    replica?.child.kill('SIGTERM');
    await replica?.exited;
  }
  owned?.stop();
  rmSync(work, { recursive: true, force: true });
}
