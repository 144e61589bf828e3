#!/usr/bin/env node
// `npm run bench:append` (also a step of `npm run bench`): what adding a wave costs against a
// full build. The ACS PUMS 2024 person CSV is cut into two parts (the first 99% of its rows and
// the last 1%: a month's wave of a tracker), cached in the temp folder. Timed, each in a child
// process (`dist/cli/main.js`, run `npm run build:ts` first), wall time from spawn to exit:
// the full build of the whole file, the build of the first part, and `crosstab append` of the
// wave to it, both ways, one after the other in each run (which goes first alternates): as a
// segment of the file (the default) and `--compact` (one file of all the respondents, every
// buffer extended). Before any figure is printed, each appended dataset must answer as the full
// build: the same info (every variable's values, counts, blanks), and the same respondents
// and weighted sums (ACS weights are integers: exact) for seeded random crosstabs, else the
// bench fails ("something is off"). Each step's CPU (user + system, of the child and its threads)
// is recorded beside its wall time: under load it says more than the wall. One more step, the
// floor of any `--out` to another file: a copy of the first part's dataset (copyFileSync, then
// fsync, in this process), which even a format that left the old bytes as they are would pay.
// Builds write their dataset past the page cache, so the first part's dataset is not in memory
// when its build ends. The append is timed twice: with that file read from the disk (its pages
// dropped: `dd iflag=nocache`), and with it in the page cache, as the full build's input CSV is
// (the ratio to the full build is of the second: both read inputs in memory).
//   node bench/append-bench.js [--runs N] [--wave PERCENT] [--queries N] [--cache DIR] [--no-write] [--result NAME]
// --cache: the folder of the cut CSVs and the datasets made (default: crosstab-bench-append in the temp folder).
// Results go to bench/results/DATE-append.{json,md}, or bench/results/NAME.{json,md} with --result.
import { execFileSync } from 'node:child_process';
import { closeSync, copyFileSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acsCsvOrSkip, acsParts } from './lib/acs-parts.js';
import { repoRoot } from './lib/datasets.js';
import { describeMachine } from './lib/machine.js';
import { mulberry32 } from './lib/prng.js';

const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const runs = Number(flag('--runs') ?? 1);
const wavePercent = Number(flag('--wave') ?? 1);
const queries = Number(flag('--queries') ?? 300);
const csv = acsCsvOrSkip('append');
const cache = flag('--cache') ?? join(tmpdir(), 'crosstab-bench-append');
mkdirSync(cache, { recursive: true });
const cli = join(repoRoot, 'dist', 'cli', 'main.js');
const machine = describeMachine();

/** The first (100 - wave)% of the rows and the rest, as two gzip'd CSVs with the header (made once). */
async function parts() {
  const [first, wave] = await acsParts(csv, cache, [100 - wavePercent], [`acs-first-${100 - wavePercent}.csv.gz`, `acs-wave-${wavePercent}.csv.gz`]);
  return { first, wave };
}

/** CPU seconds of the children waited for so far (user + system; Linux /proc, clock ticks of 1/100 s), or undefined elsewhere. */
function childrenCpu() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}

/** Wall ms from spawn to exit, and the child's CPU ms. */
function timed(command) {
  const [started, cpu] = [performance.now(), childrenCpu()];
  execFileSync(process.execPath, [cli, ...command], { stdio: ['ignore', 'ignore', 'inherit'] });
  const ms = performance.now() - started;
  const after = childrenCpu();
  return { ms, cpuMs: cpu === undefined || after === undefined ? undefined : (after - cpu) * 1000 };
}

/** The copy of a file to another, flushed to disk: wall ms (CPU: this process's). */
function copied(from, to) {
  const [started, cpu] = [performance.now(), process.cpuUsage()];
  copyFileSync(from, to);
  const fd = openSync(to, 'r+');
  fsyncSync(fd);
  closeSync(fd);
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

/** Info and seeded random crosstabs of the two datasets: they must agree, or the bench fails. */
async function check(appendedPath, wholePath) {
  const { openDataset } = await import(join(repoRoot, 'dist', 'index.js'));
  const [appended, whole] = [await openDataset(appendedPath, { cellCache: 0 }), await openDataset(wholePath, { cellCache: 0 })];
  try {
    // The skipped columns' reasons count the values a build saw (an id-like column's distinct
    // values in so many rows): an append keeps the first build's note. The columns must agree.
    const strip = ({ createdAt, source, checksum, skipped, ...info }) => JSON.stringify({ ...info, skipped: skipped.map((entry) => entry.column) });
    if (strip(appended.info) !== strip(whole.info)) throw new Error('something is off: the appended dataset\'s info differs from the full build\'s');
    const random = mulberry32(39);
    const listed = whole.info.variables.filter((variable) => variable.values !== undefined && variable.values.length > 1);
    const pick = (items) => items[Math.floor(random() * items.length)];
    const term = () => {
      const variable = pick(listed);
      if (variable.kind === 'numeric' && random() < 0.4) {
        const [a, b] = [pick(variable.values).value, pick(variable.values).value].map(Number).sort((x, y) => x - y);
        return `${variable.name}=${a}..${b}`;
      }
      return `${variable.name}=${pick(variable.values).value}`;
    };
    const expression = () => (random() < 0.5 ? term() : `${term()} ${random() < 0.5 ? 'AND' : 'OR'} ${random() < 0.3 ? 'NOT ' : ''}${term()}`);
    let cells = 0;
    for (let q = 0; q < queries; q++) {
      const query = { base: random() < 0.3 ? '*' : expression(), targets: [expression(), expression()] };
      const [a, e] = [await appended.crosstab(query), await whole.crosstab(query)];
      for (const [x, y] of [[a.base, e.base], ...a.targets.map((cell, i) => [cell, e.targets[i]])]) {
        if (x.respondents !== y.respondents || x.weighted !== y.weighted || x.sumSqWeights !== y.sumSqWeights) {
          throw new Error(`something is off: ${JSON.stringify(query)} answers ${JSON.stringify(x)} appended, ${JSON.stringify(y)} built whole`);
        }
        cells++;
      }
    }
    return cells;
  } finally {
    await Promise.all([appended.close(), whole.close()]);
  }
}

const { first, wave } = await parts();
const whole = join(cache, 'whole.arrow');
const firstBuilt = join(cache, 'first.arrow');
const appended = join(cache, 'appended.arrow');
const compacted = join(cache, 'compacted.arrow');
const copy = join(cache, 'copy.arrow');
const rows = [];
let cells = 0;
/** The two appends: in segments (the default) and --compact; `order` 1 runs the second first. */
const ways = [
  { flags: [], out: appended, what: `crosstab append (last ${wavePercent}%)` },
  { flags: ['--compact'], out: compacted, what: `crosstab append --compact (last ${wavePercent}%)` },
];
for (let run = 0; run < runs; run++) {
  for (const path of [whole, firstBuilt, appended, compacted, copy]) rmSync(path, { force: true });
  const load = () => machineLoad();
  const both = run % 2 === 0 ? ways : [...ways].reverse();
  rows.push({ run, what: 'crosstab build (whole file)', ...timed(['build', csv, '--weight', 'PWGTP', '--survey', 'ACS', '--out', whole, '--quiet']), load: load() });
  rows.push({ run, what: `crosstab build (first ${100 - wavePercent}%)`, ...timed(['build', first, '--weight', 'PWGTP', '--survey', 'ACS', '--out', firstBuilt, '--quiet']), load: load() });
  for (const way of both) {
    dropFromCache(firstBuilt);
    rows.push({ run, what: `${way.what}, the old dataset read from the disk`, ...timed(['append', firstBuilt, wave, ...way.flags, '--out', way.out, '--quiet']), load: load() });
    rmSync(way.out, { force: true });
  }
  readIntoCache(firstBuilt);
  for (const way of both) rows.push({ run, what: way.what, ...timed(['append', firstBuilt, wave, ...way.flags, '--out', way.out, '--quiet']), load: load() });
  rows.push({ run, what: `copy of the first ${100 - wavePercent}%'s dataset file (copyFileSync + fsync)`, ...copied(firstBuilt, copy), load: load() });
  rmSync(copy, { force: true });
  if (run === 0) cells = (await check(appended, whole)) + (await check(compacted, whole));
}
/** Drops `path`'s pages from the page cache (GNU dd: a request to drop the cache of the whole file). */
function dropFromCache(path) {
  execFileSync('dd', [`if=${path}`, 'iflag=nocache', 'count=0', 'status=none']);
}
/** Reads `path` whole, so its pages are in the page cache. */
function readIntoCache(path) {
  const fd = openSync(path, 'r');
  const chunk = Buffer.allocUnsafe(8 << 20);
  try {
    while (readSync(fd, chunk, 0, chunk.length, null) > 0);
  } finally {
    closeSync(fd);
  }
}
function machineLoad() {
  return describeMachine().loadAverageAtStart[0];
}
const best = (what, key = 'ms') => Math.min(...rows.filter((row) => row.what === what).map((row) => row[key] ?? NaN));
const fullMs = best('crosstab build (whole file)');
const fullCpuMs = best('crosstab build (whole file)', 'cpuMs');
// Per run, the append's wall over that run's full build (the pair nearest in time and load).
const ratiosOf = (what) => rows.filter((row) => row.what === what).map((row) => row.ms / rows.find((other) => other.run === row.run && other.what === 'crosstab build (whole file)').ms);
const pairRatios = ratiosOf(ways[0].what);
const compactRatios = ratiosOf(ways[1].what);
// Per run, the append in segments over the compact one of the same run (run one after the other).
const segmentOverCompact = rows.filter((row) => row.what === ways[0].what).map((row) => row.ms / rows.find((other) => other.run === row.run && other.what === ways[1].what).ms);
const summary = [...new Set(rows.map((row) => row.what))].map((what) => ({ what, ms: best(what), overFullBuild: best(what) / fullMs, cpuMs: best(what, 'cpuMs'), cpuOverFullBuild: best(what, 'cpuMs') / fullCpuMs }));
for (const path of [whole, firstBuilt, appended, compacted, copy]) rmSync(path, { force: true });

const date = new Date().toISOString();
const loadText = `load average at start ${machine.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')} on ${machine.cores} cores (1-minute load after each step: ${rows.map((row) => row.load.toFixed(1)).join(', ')}): other work shared the machine; compare within this run only`;
const lines = [
  `# Appending a wave, ${date.slice(0, 10)}`,
  '',
  `${machine.cores} cores (${machine.cpuModel}), ${(machine.memoryBytes / 1e9).toFixed(1)} GB, Node ${machine.node}, ${machine.platform}; ${loadText}.`,
  `ACS PUMS 2024 person file, the last ${wavePercent}% of its rows appended to a build of the rest; best of ${runs} run(s) (wall from spawn to exit; CPU: user + system of the child and its threads). Each appended dataset (in segments, and --compact) answers as the full build: same info, and ${cells} cells of ${queries} seeded random crosstabs each equal (respondents, weighted sums, sums of squares).`,
  '',
  '| what | ms | / full build | CPU ms | CPU / full build |',
  '| --- | ---: | ---: | ---: | ---: |',
  ...summary.map((row) => `| ${row.what} | ${row.ms.toFixed(0)} | ${row.overFullBuild.toFixed(2)} | ${Number.isFinite(row.cpuMs) ? row.cpuMs.toFixed(0) : '-'} | ${Number.isFinite(row.cpuOverFullBuild) ? row.cpuOverFullBuild.toFixed(2) : '-'} |`),
  '',
  `The append over the full build of the same run, run by run: in segments ${pairRatios.map((ratio) => ratio.toFixed(2)).join(', ')}; --compact ${compactRatios.map((ratio) => ratio.toFixed(2)).join(', ')} (the old dataset in the page cache, as the build's input is; the rows "read from the disk" are the same appends with the old dataset's pages dropped first). In segments over --compact, run by run (one after the other): ${segmentOverCompact.map((ratio) => ratio.toFixed(2)).join(', ')}. The copy is in this process (no Node start) and its CPU is this process's.`,
];
console.log(lines.join('\n'));
if (!args.includes('--no-write')) {
  const base = join(repoRoot, 'bench', 'results', flag('--result') ?? `${date.slice(0, 10)}-append`);
  writeFileSync(`${base}.json`, JSON.stringify({ date, command: `node bench/append-bench.js ${args.join(' ')}`.trim(), machine, runs, wavePercent, queries, checkedCells: cells, rows, summary, pairRatios, compactRatios, segmentOverCompact }, null, 2) + '\n');
  writeFileSync(`${base}.md`, lines.join('\n') + '\n');
}
