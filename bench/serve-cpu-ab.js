#!/usr/bin/env node
// Server CPU per billed POST /v1/crosstab of two builds of `crosstab serve`, alternating:
//
//   taskset -c 1 node bench/serve-cpu-ab.js [ROUNDS=6] [SECONDS=5] [LEDGER_DIR=/tmp]
//
// dist-before/ (an older build's dist/, copied aside inside this checkout) against dist/, each
// with the same key file and its own ledger in LEDGER_DIR, both started at once on CPU 0
// (taskset), 100 connections, runs alternating (before, after, then after, before, ...).
// Prints each run's server CPU µs per answered request (user + system, from /proc; the median
// system part beside it) and req/s,
// and each server's billed calls per durable write over all its runs (its ledger_closed event).
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
const [rounds = '6', seconds = '5', ledgerDir = '/tmp'] = process.argv.slice(2);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'serve-cpu-ab-'));
const keys = join(work, 'keys.json');
const ds = join(root, 'datasets/build/gss.arrow');
const { apiKey } = JSON.parse(execFileSync(process.execPath, [join(root, 'dist/cli/main.js'), 'keys', 'add', '--keys', keys, '--surveys', '_ALL_', '--groups', '_ALL_', '--name', 'b', '--json'], { encoding: 'utf8' }));
const tick = 100; // USER_HZ
const cpu = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return ((Number(f[11]) + Number(f[12])) * 1e6) / tick; };
const systemCpu = (pid) => (Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[12]) * 1e6) / tick;
const request = { method: 'POST', path: '/v1/crosstab', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey }, body: JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2', 'degree=3..4'] }) };
async function start(name, dist) {
  const child = spawn('taskset', ['-c', '0', process.execPath, join(root, dist, 'cli/main.js'), 'serve', '--dataset', ds, '--keys', keys, '--ledger', join(ledgerDir, `${basename(work)}-${name}.ndjson`), '--port', '0', '--max-connections-per-address', '200'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const origin = await new Promise((r) => child.stdout.on('data', (d) => { output += String(d); const m = /http:\/\/[^\s/]+/.exec(String(d)); if (m) r(m[0]); }));
  child.stderr.on('data', (d) => { output += String(d); }); // the log (one JSON object per line): ledger_closed at the end
  const exited = new Promise((r) => child.on('exit', r));
  await autocannon({ url: origin, connections: 100, duration: 1, requests: [request] });
  return { name, child, origin, runs: [], exited, output: () => output };
}
const servers = [await start('before', 'dist-before'), await start('after', 'dist')];
for (let round = 0; round < Number(rounds); round++) {
  for (const s of round % 2 === 0 ? servers : [...servers].reverse()) {
    const c0 = cpu(s.child.pid);
    const s0 = systemCpu(s.child.pid);
    const r = await autocannon({ url: s.origin, connections: 100, duration: Number(seconds), requests: [request] });
    const n = r['2xx'] + r.non2xx;
    s.runs.push({ rps: Math.round(r.requests.average), us: Math.round((cpu(s.child.pid) - c0) / n), sys: Math.round((systemCpu(s.child.pid) - s0) / n), non2xx: r.non2xx });
  }
}
for (const s of servers) { s.child.kill('SIGTERM'); }
await Promise.all(servers.map((s) => s.exited));
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const perWrite = (s) => /([\d.]+) billed calls per durable write/.exec(s.output())?.[1] ?? '?';
for (const s of servers) console.log(`${s.name}: µs/req ${s.runs.map((r) => r.us).join(' ')} (median ${median(s.runs.map((r) => r.us))}; system ${median(s.runs.map((r) => r.sys))}); req/s ${s.runs.map((r) => r.rps).join(' ')} (median ${median(s.runs.map((r) => r.rps))}); non-2xx ${s.runs.reduce((a, r) => a + r.non2xx, 0)}; ${perWrite(s)} billed calls per durable write`);
process.exit(0);
