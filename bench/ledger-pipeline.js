#!/usr/bin/env node
// The usage ledger alone (src/http/usage-ledger.ts), without HTTP: CLIENTS callers each
// recording a usage record and, once it resolves (durable), the next, as the billed requests
// of that many connections do. Measures records made durable per second, records per
// flush and the mean time a batch takes from its append to the end of its flush; with
// --before, the same for another build's ledger (e.g. main's dist/ copied aside), the two
// alternating round after round on the same disk.
//
//   node bench/ledger-pipeline.js [--dir DIR] [--clients 100] [--seconds 3] [--rounds 5]
//                                 [--before PATH/TO/dist] [--json]
//
// After `npm run build:ts` (it loads dist/http/index.js).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: options } = parseArgs({
  options: {
    dir: { type: 'string', default: tmpdir() },
    clients: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '5' },
    before: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const clients = Number(options.clients);
const seconds = Number(options.seconds);
const rounds = Number(options.rounds);
const builds = [{ name: 'this build', dist: join(root, 'dist') }, ...(options.before ? [{ name: 'before', dist: resolve(options.before) }] : [])];
for (const build of builds) build.Ledger = (await import(pathToFileURL(join(build.dist, 'http', 'index.js')).href)).NdjsonLedger;
const folder = mkdtempSync(join(options.dir, 'ledger-pipeline-'));

async function round(build, index) {
  const path = join(folder, `${builds.indexOf(build)}-${index}.ndjson`);
  const ledger = await build.Ledger.open(path);
  let records = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let call = 0; performance.now() < until; call++) {
        await ledger.record({ time: new Date().toISOString(), requestId: `${client}-${call}-0123456789abcdef0123`, keyId: 'key_0123456789abcdef', survey: 'GSS', targets: 2, operation: 'crosstab' });
        records++;
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  await ledger.close();
  const { flushes, writeMs } = ledger.stats;
  if (ledger.stats.records !== records) throw new Error(`something is off: ${build.name} made ${ledger.stats.records} records durable, ${records} resolved`);
  return { perSecond: records / wall, perFlush: records / flushes, microsPerFlush: (writeMs * 1000) / flushes, cpuMicrosPerRecord: (cpu.user + cpu.system) / records, systemMicrosPerRecord: cpu.system / records };
}

const started = new Date().toISOString();
const load = loadavg()[0];
try {
  for (const build of builds) build.rounds = [];
  for (let index = 0; index < rounds; index++) for (const build of builds) build.rounds.push(await round(build, index));
} finally {
  rmSync(folder, { recursive: true, force: true });
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rows = builds.map((build) => ({
  build: build.name,
  recordsPerSecond: Math.round(median(build.rounds.map((r) => r.perSecond))),
  recordsPerFlush: Number(median(build.rounds.map((r) => r.perFlush)).toFixed(1)),
  microsPerFlush: Math.round(median(build.rounds.map((r) => r.microsPerFlush))),
  cpuMicrosPerRecord: Number(median(build.rounds.map((r) => r.cpuMicrosPerRecord)).toFixed(1)),
  systemMicrosPerRecord: Number(median(build.rounds.map((r) => r.systemMicrosPerRecord)).toFixed(1)),
}));
const report = { date: started, node: process.version, cpu: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}`, loadBefore: load, loadAfter: loadavg()[0], dir: options.dir, clients, seconds, rounds, rows };
if (options.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
else {
  process.stdout.write(`${report.date}  node ${report.node}  ${report.cpu}  load ${load.toFixed(1)} -> ${report.loadAfter.toFixed(1)}  ${clients} callers, ${rounds} rounds of ${seconds} s in ${options.dir} (medians)\n`);
  for (const row of rows) process.stdout.write(`${row.build.padEnd(12)} ${String(row.recordsPerSecond).padStart(8)} records/s  ${String(row.recordsPerFlush).padStart(6)} per flush  ${String(row.microsPerFlush).padStart(6)} µs per batch, append to flushed  ${String(row.cpuMicrosPerRecord).padStart(5)} µs CPU per record (${row.systemMicrosPerRecord} system)\n`);
}
