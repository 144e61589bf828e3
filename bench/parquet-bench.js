#!/usr/bin/env node
// `npm run bench:parquet` (also a step of `npm run bench`): how fast `crosstab build` reads
// Parquet (snappy, zstd) and Arrow IPC against CSV.gz and against DuckDB loading the same
// Parquet file (`CREATE TABLE t AS SELECT * FROM read_parquet(...)`), in one run, as ratios.
// The goal's denominator is that load in memory. As context only, a row gives DuckDB's load
// into a database file (CREATE TABLE, CHECKPOINT, closed), since a build also writes and
// fsyncs a file.
// The inputs are the ACS PUMS 2024 person CSV made into Parquet and Arrow by DuckDB, once,
// cached in the temp folder (bench/lib/parquet-inputs.js). Every build must give the same
// dataset as the CSV build (bench/lib/build-fingerprint.js), or the bench fails.
//   node bench/parquet-bench.js [--runs N] [--json out.json] [--md out.md] [--no-write]
// Each build's peak resident memory is taken by GNU time (/usr/bin/time) where it is installed.
// Results go to bench/results/DATE-parquet.{json,md}. Builds run `dist/cli/main.js` (run
// `npm run build:ts` first) in a child process each, wall time from spawn to exit.
// Every input is read once just before each timed run, DuckDB's and the builds' alike (a
// machine may page out files left idle: neither side is timed from disk while the other
// finds its input cached), and the result says how much of it was in the page cache before
// that read and when the run started (fincore, where installed; else "unknown").
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { dataDir, repoRoot } from './lib/datasets.js';
import { describeMachine } from './lib/machine.js';
import { buildFingerprint } from './lib/build-fingerprint.js';
import { parquetInputs } from './lib/parquet-inputs.js';
import { residencyText, warmInput } from './lib/page-cache.js';

const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const runs = Number(flag('--runs') ?? 1);
const csv = join(dataDir(), 'acs_pums_2024_person.csv.gz');
if (!existsSync(csv)) {
  console.warn(`SKIPPED: ${csv} is absent; the Parquet bench needs the ACS file.`);
  process.exit(0);
}
const cache = join(tmpdir(), 'crosstab-bench-parquet');
const machine = describeMachine();
const inputs = await parquetInputs(csv, cache);

async function duckdbLoad(path) {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  const pageCache = warmInput(path);
  const started = performance.now();
  await connection.run(`CREATE TABLE t AS SELECT * FROM read_parquet('${path.replaceAll("'", "''")}')`);
  const ms = performance.now() - started;
  connection.closeSync?.();
  return { ms, pageCache };
}

/** DuckDB's load of `path` into a new database file: CREATE TABLE, CHECKPOINT (written and synced), closed. */
async function duckdbLoadIntoFile(path) {
  const file = join(cache, `duckdb-load-${process.pid}.duckdb`);
  rmSync(file, { force: true });
  rmSync(`${file}.wal`, { force: true });
  const pageCache = warmInput(path);
  const started = performance.now();
  const db = await DuckDBInstance.create(file);
  const connection = await db.connect();
  await connection.run(`CREATE TABLE t AS SELECT * FROM read_parquet('${path.replaceAll("'", "''")}')`);
  await connection.run('CHECKPOINT');
  connection.closeSync();
  db.closeSync();
  const ms = performance.now() - started;
  const bytes = statSync(file).size;
  rmSync(file, { force: true });
  rmSync(`${file}.wal`, { force: true });
  return { ms, bytes, pageCache };
}

// GNU time, where installed, gives each build's peak resident memory (its %M, in KB).
const gnuTime = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

function build(input, label) {
  const out = join(cache, `built-${label}.arrow`);
  rmSync(out, { force: true });
  const command = [process.execPath, join(repoRoot, 'dist', 'cli', 'main.js'), 'build', input, '--weight', 'PWGTP', '--survey', 'ACS', '--out', out];
  const pageCache = warmInput(input);
  const started = performance.now();
  if (gnuTime === undefined) {
    execFileSync(command[0], command.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] });
    return { ms: performance.now() - started, out, pageCache };
  }
  const run = spawnSync(gnuTime, ['-f', '%M', ...command], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - started;
  const lines = run.stderr.trim().split('\n');
  if (run.status !== 0) throw new Error(`crosstab build ${label} failed: ${run.stderr}`);
  process.stderr.write(lines.slice(0, -1).map((line) => `${line}\n`).join(''));
  return { ms, out, pageCache, peakRssMb: Number(lines.at(-1)) / 1024 };
}

const rows = [];
for (let run = 0; run < runs; run++) {
  for (const codec of ['snappy', 'zstd']) rows.push({ run, what: `DuckDB read_parquet (${codec})`, ...(await duckdbLoad(inputs[codec])) });
  for (const codec of ['snappy', 'zstd']) {
    const { ms, bytes, pageCache } = await duckdbLoadIntoFile(inputs[codec]);
    rows.push({ run, what: `DuckDB read_parquet into a database file, checkpointed (${codec}; context, not the goal)`, ms, fileMb: bytes / 1e6, pageCache });
  }
  for (const [label, input] of [['csv.gz', csv], ['parquet-snappy', inputs.snappy], ['parquet-zstd', inputs.zstd], ['arrow', inputs.arrow]]) {
    const { ms, out, peakRssMb, pageCache } = build(input, label);
    rows.push({ run, what: `crosstab build (${label})`, ms, ...(peakRssMb === undefined ? {} : { peakRssMb }), pageCache, fingerprint: await buildFingerprint(out) });
  }
}
const csvPrint = rows.find((row) => row.what === 'crosstab build (csv.gz)').fingerprint;
const differing = rows.filter((row) => row.fingerprint !== undefined && row.fingerprint !== csvPrint);
const best = (what) => Math.min(...rows.filter((row) => row.what === what).map((row) => row.ms));
const duck = { snappy: best('DuckDB read_parquet (snappy)'), zstd: best('DuckDB read_parquet (zstd)') };
const csvMs = best('crosstab build (csv.gz)');
const summary = [
  ['crosstab build (parquet-snappy)', duck.snappy],
  ['crosstab build (parquet-zstd)', duck.zstd],
  ['crosstab build (arrow)', duck.snappy],
  ['crosstab build (csv.gz)', duck.snappy],
].map(([what, duckMs]) => ({ what, ms: best(what), overDuckdbSnappyOrSame: best(what) / duckMs, overCsvBuild: best(what) / csvMs, peakRssMb: Math.max(...rows.filter((row) => row.what === what).map((row) => row.peakRssMb ?? Number.NaN)) }));
const date = new Date().toISOString();
const loadAtEnd = loadavg();
const load = `load average at start ${machine.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}, at end ${loadAtEnd.map((x) => x.toFixed(2)).join(' ')} on ${machine.cores} cores: other work shared the machine; compare within this run only`;
const lines = [
  `# Parquet and Arrow input, ${date.slice(0, 10)}`,
  '',
  `${machine.cores} cores (${machine.cpuModel}), ${(machine.memoryBytes / 1e9).toFixed(1)} GB, Node ${machine.node}, ${machine.platform}; ${load}.`,
  `ACS PUMS 2024 person file (2,736,891 rows, 38 columns), best of ${runs} run(s). Same dataset as the CSV build: ${differing.length === 0 ? 'yes, every build' : `NO: ${differing.map((row) => row.what).join(', ')}`}.`,
  '',
  '| what | ms | / DuckDB read_parquet (same codec; snappy for Arrow and CSV) | / CSV.gz build | peak RSS MB (largest run) |',
  '| --- | ---: | ---: | ---: | ---: |',
  ...['DuckDB read_parquet (snappy)', 'DuckDB read_parquet (zstd)'].map((what) => `| ${what} | ${best(what).toFixed(0)} | 1.00 | ${(best(what) / csvMs).toFixed(2)} | (in the bench's process) |`),
  ...['snappy', 'zstd'].map((codec) => {
    const what = `DuckDB read_parquet into a database file, checkpointed (${codec}; context, not the goal)`;
    return `| ${what} | ${best(what).toFixed(0)} | ${(best(what) / duck[codec]).toFixed(2)} | ${(best(what) / csvMs).toFixed(2)} | (in the bench's process) |`;
  }),
  ...summary.map((row) => `| ${row.what} | ${row.ms.toFixed(0)} | ${row.overDuckdbSnappyOrSame.toFixed(2)} | ${row.overCsvBuild.toFixed(2)} | ${Number.isNaN(row.peakRssMb) ? 'n/a' : row.peakRssMb.toFixed(0)} |`),
];
const whats = [...new Set(rows.map((row) => row.what))];
lines.push(
  '',
  'Each input was read once just before each timed run. Its share in the page cache before that read, then when the run started (fincore):',
  '',
  ...whats.map((what) => `- ${what}: ${rows.filter((row) => row.what === what).map((row) => `run ${row.run + 1} ${residencyText(row.pageCache.before)}, then ${residencyText(row.pageCache.after)}`).join('; ')}`),
);
lines.push('', 'The goal is each build against DuckDB\'s load in memory (the ratio column). The rows "into a database file" are context: DuckDB loading the same file into a new database file, with CHECKPOINT (written and synced) and the database closed, as a build writes and syncs its dataset file; their ratio is to the in-memory load.');
console.log(lines.join('\n'));
if (!args.includes('--no-write')) {
  const base = join(repoRoot, 'bench', 'results', `${date.slice(0, 10)}-parquet`);
  writeFileSync(flag('--json') ?? `${base}.json`, JSON.stringify({ date, command: `node bench/parquet-bench.js ${args.join(' ')}`.trim(), machine, runs, duckdbThreads: 'default (all cores)', rows, summary }, null, 2) + '\n');
  writeFileSync(flag('--md') ?? `${base}.md`, lines.join('\n') + '\n');
}
if (differing.length > 0) {
  console.error(`parquet bench: builds differ from the CSV build: ${differing.map((row) => row.what).join(', ')}`);
  process.exit(1);
}
