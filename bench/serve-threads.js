#!/usr/bin/env node
// What bounds `crosstab serve`'s billed POST /v1/crosstab at N connections with the server on
// one core: its CPU, or the wait for the ledger's flush. One server on SERVER_CPU (taskset),
// autocannon here (run this under `taskset -c CLIENT_CPU`), and for the timed run:
//   - the server core's own breakdown from /proc/stat (user, system, idle, iowait, softirq):
//     an idle core under a server that answers slower than it could means it waits for flushes;
//   - each thread of the server from /proc/PID/task (event loop, libuv pool threads running
//     `fdatasync`, V8's GC helpers): time on a CPU, time waiting for one, µs per request;
//   - the ledger's closing line: billed calls per flush and the mean flush time;
//   - the server's peak resident memory.
//
//   taskset -c 1 node bench/serve-threads.js [--dist dist] [--ledger-dir /tmp] [--seconds 8]
//        [--connections 100] [--server-cpu 0] [--node-option=--max-semi-space-size=64]
//
// After `npm run build:ts`. Linux only (/proc).
import autocannon from 'autocannon';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { addBenchKey, billedCrosstab, startPinnedServe } from './lib/serve-child.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: options } = parseArgs({
  options: {
    dist: { type: 'string', default: 'dist' },
    'ledger-dir': { type: 'string', default: tmpdir() },
    seconds: { type: 'string', default: '8' },
    connections: { type: 'string', default: '100' },
    'server-cpu': { type: 'string', default: '0' },
    'node-option': { type: 'string', multiple: true, default: [] },
  },
});
const work = mkdtempSync(join(tmpdir(), 'serve-threads-'));
const ledger = join(mkdtempSync(join(options['ledger-dir'], 'serve-threads-')), 'usage.ndjson');
const cli = join(root, options.dist, 'cli', 'main.js');
const keys = join(work, 'keys.json');
const request = billedCrosstab(addBenchKey(cli, keys));
const connections = Number(options.connections);
const serveArgs = ['--dataset', join(root, 'datasets/build/gss.arrow'), '--keys', keys, '--ledger', ledger, '--port', '0', '--max-connections-per-address', String(connections + 16)];
let stderr = '';
const { child, origin } = await startPinnedServe({ cli, serveArgs, cpu: options['server-cpu'], nodeOptions: options['node-option'], onStderr: (text) => (stderr += text) });

/** Every thread of the server: CPU time (user, system; ms) and scheduler times (on a CPU, waiting for one; ms). */
function threads() {
  const result = new Map();
  for (const tid of readdirSync(`/proc/${child.pid}/task`)) {
    const stat = readFileSync(`/proc/${child.pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
    const [running, waiting] = readFileSync(`/proc/${child.pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
    result.set(tid, { user: Number(stat[11]) * 10, system: Number(stat[12]) * 10, running: running / 1e6, waiting: waiting / 1e6 });
  }
  return result;
}
/** The server core's counters from /proc/stat (clock ticks). */
const core = () => readFileSync('/proc/stat', 'utf8').split('\n').find((line) => line.startsWith(`cpu${options['server-cpu']} `)).split(/\s+/).slice(1, 9).map(Number);

await autocannon({ url: origin, connections, duration: 2, requests: [request] });
const loadBefore = loadavg()[0];
const [coreBefore, threadsBefore, started] = [core(), threads(), performance.now()];
const result = await autocannon({ url: origin, connections, duration: Number(options.seconds), requests: [request] });
const [coreAfter, threadsAfter, wall] = [core(), threads(), performance.now() - started];
/** The server's peak resident memory (VmHWM), MB. */
const peakMb = Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024);
child.kill('SIGTERM');
await new Promise((done) => child.once('close', done));
rmSync(work, { recursive: true, force: true });
rmSync(dirname(ledger), { recursive: true, force: true });

const answered = result['2xx'] + result.non2xx;
const delta = coreAfter.map((value, i) => value - coreBefore[i]);
const ticks = delta.reduce((sum, value) => sum + value, 0);
const share = (i) => (delta[i] / ticks).toFixed(2);
console.log(`${new Date().toISOString()}  load ${loadBefore.toFixed(1)} -> ${loadavg()[0].toFixed(1)}  ${options.dist}, ledger in ${options['ledger-dir']}${options['node-option'].length ? `, node ${options['node-option'].join(' ')}` : ''}`);
console.log(`${Math.round(result.requests.average)} req/s at ${connections} connections, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${result.non2xx} non-2xx, server peak RSS ${peakMb} MB`);
console.log(`CPU ${options['server-cpu']}: user ${share(0)}  system ${share(2)}  idle ${share(3)}  iowait ${share(4)}  softirq ${share(6)}  steal ${share(7)}`);
let total = 0;
for (const [tid, after] of threadsAfter) {
  const before = threadsBefore.get(tid) ?? { user: 0, system: 0, running: 0, waiting: 0 };
  const running = after.running - before.running;
  total += running;
  if (running < 1) continue;
  const name = tid === String(child.pid) ? 'event loop' : `thread ${tid}`;
  console.log(`  ${name.padEnd(14)} user ${String(after.user - before.user).padStart(5)} ms  system ${String(after.system - before.system).padStart(5)} ms  on a CPU ${(running / wall).toFixed(2)} of the run, waiting for one ${((after.waiting - before.waiting) / wall).toFixed(2)}  ${((running * 1000) / answered).toFixed(1).padStart(6)} µs/req`);
}
console.log(`  every thread: ${((total * 1000) / answered).toFixed(1)} µs/req, ${(total / wall).toFixed(2)} of the run`);
const closed = stderr.split('\n').find((line) => line.includes('"ledger_closed"'));
if (closed) console.log(`  ${JSON.parse(closed).message}`);
