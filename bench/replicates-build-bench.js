#!/usr/bin/env node
// `npm run bench:replicates`: `crosstab build` of a replicate-weight design,
// test/fixtures/r/nhanes-replicates.csv.gz (8,591 rows, 121 columns: 89 variables, most of
// them replicate-weight columns of 2,500-5,000 distinct values) with the JKn design of the
// design tests (31 replicate weights), by this checkout's dist/ and by an earlier commit's,
// in alternating pairs, against DuckDB loading the same file (read_csv, in-process) in the
// same run. Each build is a child process (`dist/cli/main.js build`, spawn to exit); its CPU
// time (user + system, all threads) comes from the child itself (lib/cpu-at-exit.js). Both
// builds must give the same dataset (lib/build-fingerprint.js) or the bench fails.
//   node bench/replicates-build-bench.js [--before-ref REF] [--before DIR] [--pairs N] [--md FILE] [--json FILE] [--no-write]
// --before-ref: the commit to compare with (default: none, this checkout only), extracted
// with `git archive` and built with tsup into a temporary folder (its build/ and
// node_modules are this checkout's); --before DIR: a checkout whose dist/ is built already.
// Results: bench/results/DATE-s15-build-replicates.{md,json} unless --md/--json/--no-write.
// Run `npm run build` first (this checkout's dist/ is the "after").
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { repoRoot } from './lib/datasets.js';
import { describeMachine } from './lib/machine.js';
import { buildFingerprint } from './lib/build-fingerprint.js';

const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const pairs = Number(flag('--pairs') ?? 5);
const input = join(repoRoot, 'test', 'fixtures', 'r', 'nhanes-replicates.csv.gz');
const replicates = Array.from({ length: 31 }, (_, i) => `JKN_${String(i + 1).padStart(2, '0')}`);
const rscales = [0.5, 0.5, 0.5, 0.5, 2 / 3, 2 / 3, 2 / 3, ...Array(24).fill(0.5)];
const buildArgs = ['--weight', 'WTMEC2YR', '--survey', 'NHANES', '--replicate-weights', replicates.join(','), '--replicate-type', 'JKn', '--scale', '1', '--rscales', rscales.join(','), '--quiet'];
const work = mkdtempSync(join(tmpdir(), 'replicates-bench-'));
const cpuHook = new URL('./lib/cpu-at-exit.js', import.meta.url).href;

/** A checkout of `ref` with its dist/ built (tsup), this checkout's build/ and node_modules linked in. */
function checkoutOf(ref) {
  const root = join(work, 'before');
  execFileSync('bash', ['-c', `mkdir -p '${root}' && git -C '${repoRoot}' archive '${ref}' | tar -x -C '${root}'`], { stdio: 'inherit' });
  symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
  rmSync(join(root, 'build'), { recursive: true, force: true });
  symlinkSync(join(repoRoot, 'build'), join(root, 'build'));
  execFileSync(join(repoRoot, 'node_modules', '.bin', 'tsup'), [], { cwd: root, stdio: 'ignore' });
  return root;
}

function build(root, label) {
  const out = join(work, `${label}.arrow`);
  const usage = join(work, `${label}.cpu.json`);
  rmSync(out, { force: true });
  const started = performance.now();
  const child = spawnSync(process.execPath, ['--import', cpuHook, join(root, 'dist', 'cli', 'main.js'), 'build', input, ...buildArgs, '--out', out], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, CPU_AT_EXIT_FILE: usage } });
  const wallMs = performance.now() - started;
  if (child.status !== 0) throw new Error(`${label}: crosstab build exited with ${child.status}`);
  const cpu = JSON.parse(readFileSync(usage, 'utf8'));
  return { wallMs, cpuMs: cpu.userMs + cpu.systemMs, userMs: cpu.userMs, systemMs: cpu.systemMs, maxRssKB: cpu.maxRssKB, out };
}

async function duckdbLoad() {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await connection.run(`CREATE TABLE t AS SELECT * FROM read_csv('${input.replaceAll("'", "''")}')`);
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  connection.closeSync?.();
  return { wallMs, cpuMs: (used.user + used.system) / 1000 };
}

const machine = describeMachine();
const beforeRef = flag('--before-ref');
const before = flag('--before') ?? (beforeRef === undefined ? undefined : checkoutOf(beforeRef));
const rows = [];
try {
  for (let pair = 0; pair < pairs; pair++) {
    const loadavg = (await import('node:os')).loadavg()[0];
    // Alternating which goes first, so a change in the machine's load hits both alike.
    const order = before === undefined ? ['after'] : pair % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
    for (const which of order) {
      const made = build(which === 'before' ? before : repoRoot, `${which}-${pair}`);
      rows.push({ pair, what: which, loadavg, ...made, fingerprint: await buildFingerprint(made.out) });
      rmSync(made.out, { force: true });
    }
    rows.push({ pair, what: 'duckdb', loadavg, ...(await duckdbLoad()) });
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const of = (what) => rows.filter((row) => row.what === what);
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const prints = new Set(rows.filter((row) => row.fingerprint !== undefined).map((row) => row.fingerprint));
const summary = ['before', 'after', 'duckdb']
  .filter((what) => of(what).length > 0)
  .map((what) => ({ what, cpuMs: median(of(what).map((row) => row.cpuMs)), wallMs: median(of(what).map((row) => row.wallMs)), minCpuMs: Math.min(...of(what).map((row) => row.cpuMs)) }));
const after = summary.find((row) => row.what === 'after');
const pairRatios = before === undefined ? [] : [...Array(pairs).keys()].map((pair) => {
  const [b, a] = ['before', 'after'].map((what) => rows.find((row) => row.pair === pair && row.what === what));
  return { pair, cpu: a.cpuMs / b.cpuMs, wall: a.wallMs / b.wallMs };
});
const date = new Date().toISOString();
const loads = rows.map((row) => row.loadavg);
const lines = [
  `# crosstab build of a replicate-weight design, ${date.slice(0, 10)}`,
  '',
  `${machine.cores} cores (${machine.cpuModel}), ${(machine.memoryBytes / 1e9).toFixed(1)} GB, Node ${machine.node}, ${machine.platform}; 1-minute load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)} during the run (at start ${machine.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}): compare within this run only.`,
  '',
  `Input: test/fixtures/r/nhanes-replicates.csv.gz (8,591 rows, 121 columns), \`crosstab build --weight WTMEC2YR --replicate-weights JKN_01,...,JKN_31 --replicate-type JKn --scale 1 --rscales ...\` (31 replicate weights, 89 variables). ${pairs} pairs${before === undefined ? '' : `, before = ${beforeRef ?? before}, after = this checkout, alternating which runs first`}; DuckDB: \`CREATE TABLE t AS SELECT * FROM read_csv(...)\` in-process, once per pair.`,
  `Same dataset from every build (fingerprint: metadata less source, name and time, every buffer's hash): ${prints.size === 1 ? 'yes' : `NO (${prints.size} fingerprints)`}.`,
  '',
  '| what | median CPU ms (user+sys) | min CPU ms | median wall ms | CPU / after | CPU / DuckDB |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  ...summary.map((row) => `| ${row.what} | ${row.cpuMs.toFixed(0)} | ${row.minCpuMs.toFixed(0)} | ${row.wallMs.toFixed(0)} | ${(row.cpuMs / after.cpuMs).toFixed(2)} | ${(row.cpuMs / summary.find((r) => r.what === 'duckdb').cpuMs).toFixed(2)} |`),
  ...(pairRatios.length === 0 ? [] : ['', `After / before per pair, CPU: ${pairRatios.map((r) => r.cpu.toFixed(2)).join(', ')}; wall: ${pairRatios.map((r) => r.wall.toFixed(2)).join(', ')}.`]),
  '',
  `Command: \`node bench/replicates-build-bench.js ${args.filter((arg) => arg !== '--no-write').join(' ')}\`.`,
];
const markdown = `${lines.join('\n')}\n`;
console.log(markdown);
if (!args.includes('--no-write')) {
  const stem = join(repoRoot, 'bench', 'results', `${date.slice(0, 10)}-s15-build-replicates`);
  writeFileSync(flag('--md') ?? `${stem}.md`, markdown);
  writeFileSync(flag('--json') ?? `${stem}.json`, `${JSON.stringify({ date, machine, beforeRef, pairs, rows: rows.map(({ out, ...row }) => row), summary, pairRatios }, null, 2)}\n`);
}
if (prints.size !== 1) process.exit(1);
