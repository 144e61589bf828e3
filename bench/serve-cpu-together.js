#!/usr/bin/env node
// Server CPU per billed POST /v1/crosstab of two builds of `crosstab serve` loaded at the same
// time: on a machine other work keeps busy, runs one after another see different loads, and
// their difference drowns a change of a few percent. Here both servers run at once on one CPU
// (taskset -c SERVER_CPU), each under its own 100-connection autocannon load from this process,
// so whatever else runs takes from both alike; each round's CPU per answered request is read
// from every thread of each server (/proc/PID/task/*/schedstat, ns on a CPU), and the ratio
// after/before is taken per round. Prints each round and the median ratio.
//
//   taskset -c 1 node bench/serve-cpu-together.js [--before dist-before] [--after dist] [--rounds 10]
//        [--seconds 4] [--ledger-dir /tmp] [--server-cpu 0] [--connections 100]
//
// --before/--after: builds' dist folders inside this checkout (so they find node_modules), e.g.
// a copy of main's dist/ made before a change. Each server has its own fsync'd ledger in
// --ledger-dir and the same key file. Linux only (/proc, taskset).
import autocannon from 'autocannon';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { addBenchKey, billedCrosstab, startPinnedServe } from './lib/serve-child.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: options } = parseArgs({
  options: {
    before: { type: 'string', default: 'dist-before' },
    after: { type: 'string', default: 'dist' },
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '4' },
    'ledger-dir': { type: 'string', default: tmpdir() },
    'server-cpu': { type: 'string', default: '0' },
    connections: { type: 'string', default: '100' },
  },
});
const work = mkdtempSync(join(options['ledger-dir'], 'serve-cpu-together-'));
const keys = join(work, 'keys.json');
const dataset = join(root, 'datasets/build/gss.arrow');
const request = billedCrosstab(addBenchKey(join(root, options.after, 'cli/main.js'), keys));
const connections = Number(options.connections);

/** µs on a CPU of every thread of `pid` so far. */
function cpuMicros(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return ns / 1000;
}

async function start(name, dist) {
  const serveArgs = ['--dataset', dataset, '--keys', keys, '--ledger', join(work, `${name}.ndjson`), '--port', '0', '--max-connections-per-address', String(connections + 16)];
  const { child, origin } = await startPinnedServe({ cli: join(root, dist, 'cli/main.js'), serveArgs, cpu: options['server-cpu'], name: `${name} (${dist})` });
  // Warm-up: the JIT and the cell cache, untimed.
  await autocannon({ url: origin, connections, duration: 1, requests: [request] });
  return { name, dist, child, origin, runs: [] };
}

const servers = [await start('before', options.before), await start('after', options.after)];
const ratios = [];
for (let round = 0; round < Number(options.rounds); round++) {
  const started = servers.map((server) => cpuMicros(server.child.pid));
  const results = await Promise.all(servers.map((server) => autocannon({ url: server.origin, connections, duration: Number(options.seconds), requests: [request] })));
  const perRequest = servers.map((server, i) => (cpuMicros(server.child.pid) - started[i]) / (results[i]['2xx'] + results[i].non2xx));
  servers.forEach((server, i) => server.runs.push({ us: perRequest[i], rps: results[i].requests.average, non2xx: results[i].non2xx }));
  ratios.push(perRequest[1] / perRequest[0]);
  console.log(`round ${round + 1}: before ${perRequest[0].toFixed(0)} µs/req, after ${perRequest[1].toFixed(0)} µs/req, after/before ${ratios.at(-1).toFixed(3)}`);
}
for (const server of servers) server.child.kill('SIGTERM');
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
for (const server of servers) {
  const us = server.runs.map((run) => run.us);
  console.log(`${server.name} (${server.dist}): median ${median(us).toFixed(0)} µs/req, req/s ${server.runs.map((run) => Math.round(run.rps)).join(' ')}, non-2xx ${server.runs.reduce((sum, run) => sum + run.non2xx, 0)}`);
}
console.log(`after/before, median of ${ratios.length} rounds: ${median(ratios).toFixed(3)} (${ratios.map((ratio) => ratio.toFixed(3)).join(' ')}); load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
await Promise.all(servers.map((server) => new Promise((done) => (server.child.exitCode !== null ? done() : server.child.once('exit', done)))));
rmSync(work, { recursive: true, force: true });
