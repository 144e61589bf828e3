#!/usr/bin/env node
/**
 * CPU per billed row of the embedded access database: usage records go through
 * DbUsageSink into PGlite on its own thread, exactly as `crosstab serve --database DIR`
 * does (openDatabase of dist/access/index.js, migrations included), and the CPU time each
 * thread spent is read from Linux's per-thread scheduler statistics.
 *
 *   node bench/pglite-usage.js                      # after `npm run build`
 *   node bench/pglite-usage.js --rows 20000 --prefill 200000 --json out.json
 *   node bench/pglite-usage.js --dist /tmp/main-dist   # another build's dist/, to compare
 *
 * Scenarios (each on the same database, one after the other):
 *   batch-B   B records handed to the sink at once, then awaited, repeated (the sink's first
 *             statement after idle holds one row, the next the other B-1: the mean batch
 *             printed is what the sink really committed);
 *   callers-C C concurrent callers, each awaiting its record before sending the next, as C
 *             keep-alive connections of the HTTP benchmark do (batches form by group commit).
 *
 * Measured per scenario: wall time, rows/s, statements, mean rows per statement, and CPU
 * µs per row of the main thread (the caller's event loop: DbUsageSink, postMessage, the
 * reply), of the PGlite thread (Postgres in WebAssembly, protocol encoding/decoding, the
 * worker's message handling) and of every other thread of the process (GC helpers, libuv),
 * from /proc/self/task/<tid>/schedstat (nanoseconds on CPU). The PGlite thread is the
 * thread created by openDatabase that used the most CPU while opening.
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    prefill: { type: 'string', default: '100000' },
    batches: { type: 'string', default: '1,20,100,500' },
    callers: { type: 'string', default: '10,100' },
    json: { type: 'string' },
    keep: { type: 'boolean', default: false },
    dist: { type: 'string' },
  },
});
const rowsPerScenario = Number(args.rows);
const prefill = Number(args.prefill);
const batchSizes = args.batches.split(',').filter(Boolean).map(Number);
const callerCounts = args.callers.split(',').filter(Boolean).map(Number);
for (const [name, n] of [['--rows', rowsPerScenario], ['--prefill', prefill], ...batchSizes.map((b) => ['--batches', b]), ...callerCounts.map((c) => ['--callers', c])]) {
  if (!Number.isInteger(n) || n < (name === '--prefill' ? 0 : 1)) throw new Error(`${name} must be a positive integer; got ${n}.`);
}

// --dist: another build's dist/ folder (e.g. of the main branch), to compare two builds.
const entry = join(args.dist === undefined ? join(root, 'dist') : resolve(args.dist), 'access', 'index.js');
if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first.`);
const { openDatabase, DbUsageSink } = await import(pathToFileURL(entry).href);
if (!existsSync('/proc/self/task')) throw new Error('This benchmark reads per-thread CPU from /proc/self/task (Linux only).');

/** CPU nanoseconds per thread id of this process. */
function threadCpu() {
  const cpu = new Map();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      cpu.set(tid, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return cpu;
}

const mainTid = String(process.pid);
const tasksBefore = new Set(readdirSync('/proc/self/task'));
const folder = mkdtempSync(join(tmpdir(), 'crosstab-pglite-usage-'));
const openedAt = performance.now();
const db = await openDatabase(join(folder, 'db'));
const openMs = performance.now() - openedAt;
let pgliteTid;
{
  let most = -1;
  for (const [tid, ns] of threadCpu()) {
    if (!tasksBefore.has(tid) && ns > most) [pgliteTid, most] = [tid, ns];
  }
  if (pgliteTid === undefined) throw new Error('Could not find the PGlite thread among the threads openDatabase started.');
}

const accounts = Array.from({ length: 10 }, (_, i) => `acct_${String(i).padStart(4, '0')}_${randomUUID().slice(0, 8)}`);
const keys = Array.from({ length: 30 }, (_, i) => `key_${i}_${randomUUID().slice(0, 12)}`);
let sequence = 0;
/** A usage record as src/http/crosstab-operation.ts makes one. */
function usageRecord() {
  const n = sequence++;
  return {
    time: new Date().toISOString(),
    requestId: randomUUID(),
    keyId: keys[n % keys.length],
    survey: n % 3 === 0 ? 'NHANES' : 'GSS',
    targets: 1 + (n % 2),
    accountId: accounts[n % accounts.length],
  };
}

if (prefill > 0) {
  // Months of earlier usage: the indexes are as deep as a running service's.
  await db.query(
    `INSERT INTO usage (request_id, time, account_id, key_id, survey, targets)
     SELECT gen_random_uuid()::text, now() - make_interval(secs => i * 10), ($1::text[])[1 + i % 10], ($2::text[])[1 + i % 30], 'GSS', 1 + i % 2
       FROM generate_series(1, $3::int) AS i`,
    [accounts, keys, prefill],
  );
}

async function byBatches(sink, rows, batch) {
  for (let done = 0; done < rows; ) {
    const n = Math.min(batch, rows - done);
    const records = Array.from({ length: n }, usageRecord);
    await Promise.all(records.map((record) => sink.record(record)));
    done += n;
  }
}

async function byCallers(sink, rows, callers) {
  let left = rows;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (left > 0) {
        left--;
        await sink.record(usageRecord());
      }
    }),
  );
}

async function scenario(name, run) {
  const sink = new DbUsageSink(db);
  const countBefore = (await db.query('SELECT count(*)::int AS n FROM usage')).rows[0].n;
  global.gc?.();
  const cpuBefore = threadCpu();
  const startedAt = performance.now();
  await run(sink);
  const seconds = (performance.now() - startedAt) / 1000;
  const cpuAfter = threadCpu();
  await sink.close();
  const countAfter = (await db.query('SELECT count(*)::int AS n FROM usage')).rows[0].n;
  if (countAfter - countBefore !== sink.stats.records) {
    throw new Error(`something is off: ${name} committed ${sink.stats.records} rows by its count, the table grew by ${countAfter - countBefore}.`);
  }
  const used = (tid) => ((cpuAfter.get(tid) ?? 0) - (cpuBefore.get(tid) ?? 0)) / 1000;
  let otherUs = 0;
  for (const tid of cpuAfter.keys()) if (tid !== mainTid && tid !== pgliteTid) otherUs += used(tid);
  const rows = sink.stats.records;
  return {
    scenario: name,
    rows,
    statements: sink.stats.commits,
    rowsPerStatement: rows / sink.stats.commits,
    seconds,
    rowsPerSecond: rows / seconds,
    pgliteUsPerRow: used(pgliteTid) / rows,
    mainUsPerRow: used(mainTid) / rows,
    otherUsPerRow: otherUs / rows,
    pgliteUsPerStatement: used(pgliteTid) / sink.stats.commits,
  };
}

const machine = {
  date: new Date().toISOString(),
  cpu: cpus()[0]?.model ?? 'unknown',
  cores: cpus().length,
  node: process.version,
  loadAverage: loadavg().map((x) => Number(x.toFixed(2))),
  uptime: (() => {
    try {
      return execFileSync('uptime', { encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  })(),
  pglite: JSON.parse(readFileSync(join(root, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')).version,
};

console.log(`${machine.date}  ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, PGlite ${machine.pglite}`);
console.log(`uptime: ${machine.uptime}`);
console.log(`openDatabase (PGlite start + migrations): ${openMs.toFixed(0)} ms; table prefilled with ${prefill} rows; ${rowsPerScenario} rows per scenario`);

// Warm-up: JIT of the sink, the worker and PGlite's protocol code; not reported.
await scenario('warm-up', (sink) => byBatches(sink, 2000, 100));

const results = [];
for (const batch of batchSizes) results.push(await scenario(`batch-${batch}`, (sink) => byBatches(sink, rowsPerScenario, batch)));
for (const callers of callerCounts) results.push(await scenario(`callers-${callers}`, (sink) => byCallers(sink, rowsPerScenario, callers)));

const header = ['scenario', 'rows', 'stmts', 'rows/stmt', 'rows/s', 'PGlite µs/row', 'main µs/row', 'other µs/row', 'PGlite µs/stmt'];
const table = results.map((r) => [
  r.scenario,
  String(r.rows),
  String(r.statements),
  r.rowsPerStatement.toFixed(1),
  r.rowsPerSecond.toFixed(0),
  r.pgliteUsPerRow.toFixed(1),
  r.mainUsPerRow.toFixed(1),
  r.otherUsPerRow.toFixed(1),
  r.pgliteUsPerStatement.toFixed(0),
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
const line = (cells) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
console.log(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${table.map(line).join('\n')}`);
console.log(`\nCPU from /proc/self/task/<tid>/schedstat: main = the event-loop thread (tid ${mainTid}), PGlite = its worker thread (tid ${pgliteTid}), other = every other thread.`);

if (args.json) writeFileSync(args.json, `${JSON.stringify({ machine, openMs, prefill, rowsPerScenario, results }, null, 2)}\n`);
await db.close();
if (args.keep) console.log(`database kept in ${folder}`);
else rmSync(folder, { recursive: true, force: true });
