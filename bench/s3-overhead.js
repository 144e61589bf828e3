// S3 end to end against its kernel: where a big single-coded table's time goes outside the
// group-by pass, and two builds of the engine compared on it.
//
//   node bench/s3-overhead.js [--dataset datasets/build/acs.arrow] [--before DIR] [--after DIR]
//                             [--rounds 4] [--tables 15] [--together CPUS] [--profile DIR] [--md FILE]
//
// Each round runs one child process (bench/lib/s3-child.js) per build and execution
// (inline, pool), alternating the builds, so both see the same load; medians are over every
// timed table of every round. With --together CPUS (a taskset list: 1, or 0,1), the builds'
// children of a round and execution run at the same time, each pinned to CPUS, which on a
// machine loaded by others is fairer than one after the other: compare their CPU time. --before / --after are dist/ folders (a copy of dist/ from
// an earlier commit next to a `build` folder or link holding build/kernel.wasm); without
// --before only --after (default dist/) runs. With --profile, one more child per execution
// of the --after build runs under `node --cpu-prof` into DIR, and the self time of the timed
// tables is split into the kernel (every wasm function), garbage collection, idle and the
// JavaScript functions that take the most.
// The dataset, when it is not there, is built with the CLI: `crosstab build
// acs_pums_2024_person.csv.gz --weight PWGTP --survey ACS --out datasets/build/acs.arrow`
// (the CSV from bench/lib/datasets.js's data folder).
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { profileWindow } from './lib/cpu-profile-window.js';
import { dataDir } from './lib/datasets.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const flag = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
};
const dataset = resolve(flag('--dataset', join(repoRoot, 'datasets', 'build', 'acs.arrow')));
const rounds = Number(flag('--rounds', 4));
const tables = Number(flag('--tables', 15));
const together = flag('--together');
if (together !== undefined && !/^\d+([,-]\d+)*$/.test(together)) throw new Error(`--together takes a taskset CPU list (e.g. 1 or 0,1); got '${together}'`);
const profileDir = flag('--profile');
const md = flag('--md');
const builds = [
  ...(flag('--before') ? [{ name: 'before', dir: resolve(flag('--before')) }] : []),
  { name: flag('--before') ? 'after' : 'engine', dir: resolve(flag('--after', join(repoRoot, 'dist'))) },
];
if (!existsSync(dataset)) {
  const csv = join(dataDir(), 'acs_pums_2024_person.csv.gz');
  console.error(`building ${dataset} from ${csv} with the CLI`);
  execFileSync(process.execPath, [join(repoRoot, 'dist', 'cli', 'main.js'), 'build', csv, '--weight', 'PWGTP', '--survey', 'ACS', '--out', dataset], { stdio: 'inherit' });
}
const child = join(repoRoot, 'bench', 'lib', 's3-child.js');
const run = (build, execution, nodeFlags = []) =>
  JSON.parse(execFileSync(process.execPath, [...nodeFlags, child, join(build.dir, 'index.js'), dataset, execution, String(tables)], { encoding: 'utf8' }).trim().split('\n').pop());
const lastLine = (text) => JSON.parse(text.trim().split('\n').pop());
const pinned = (build, execution) =>
  new Promise((done, fail) =>
    execFile('taskset', ['-c', together, process.execPath, child, join(build.dir, 'index.js'), dataset, execution, String(tables)], { encoding: 'utf8' }, (error, stdout) => (error ? fail(error) : done(lastLine(stdout)))),
  );

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const loads = [loadavg()[0]];
const runs = new Map();
const digests = new Set();
for (let round = 0; round < rounds; round++) {
  for (const execution of ['inline', 'pool']) {
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    const results = together === undefined ? order.map((build) => run(build, execution)) : await Promise.all(order.map((build) => pinned(build, execution)));
    order.forEach((build, i) => {
      const result = results[i];
      const key = `${build.name} ${execution}`;
      runs.set(key, [...(runs.get(key) ?? []), result]);
      digests.add(result.digest);
      loads.push(result.load);
    });
  }
  console.error(`round ${round + 1}/${rounds} done, load ${loadavg()[0].toFixed(1)}`);
}
if (digests.size !== 1) throw new Error(`bench: the builds gave different figures (${digests.size} digests of the results)`);

const lines = [];
const out = (line = '') => {
  lines.push(line);
  console.log(line);
};
out(`S3 (ACS base ESR=1,2, OCCP x INDP, expression entries), ${rounds} rounds x ${tables} tables per build and execution, builds ${together === undefined ? 'alternated' : `run at the same time pinned to CPU ${together}, starting in alternated order`}.`);
out(`Node ${process.version}, ${cpus().length} cores, load average (1 min) ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}. Every run gave the same figures (result digest ${[...digests][0].slice(0, 12)}).`);
out();
out('| build | execution | median wall ms | min wall ms | median process CPU ms | median kernel group-by ms (inline) | median wall - kernel ms per table | median minor page faults per table | tables |');
out('|---|---|---|---|---|---|---|---|---|');
for (const [key, results] of runs) {
  const wall = results.flatMap((r) => r.wall);
  const cpu = results.flatMap((r) => r.cpu);
  const kernel = results.every((r) => r.kernel) ? results.flatMap((r) => r.kernel) : null;
  const outside = kernel && results.flatMap((r) => r.wall.map((ms, i) => ms - r.kernel[i]));
  const faults = results.every((r) => r.faults) ? results.flatMap((r) => r.faults) : null;
  const cell = (values, digits = 1) => (values ? median(values).toFixed(digits) : '-');
  out(`| ${key.replace(' ', ' | ')} | ${median(wall).toFixed(1)} | ${Math.min(...wall).toFixed(1)} | ${median(cpu).toFixed(1)} | ${cell(kernel)} | ${cell(outside)} | ${cell(faults, 0)} | ${wall.length} |`);
}
if (builds.length === 2) {
  out();
  for (const execution of ['inline', 'pool']) {
    const wall = (name) => median(runs.get(`${name} ${execution}`).flatMap((r) => r.wall));
    const perRound = runs.get(`after ${execution}`).map((after, round) => median(after.wall) / median(runs.get(`before ${execution}`)[round].wall));
    out(`${execution}: after / before median wall = ${(wall('after') / wall('before')).toFixed(3)}; per round (each after its alternated before): ${perRound.map((ratio) => ratio.toFixed(2)).join(', ')}`);
    const cpu = (name) => median(runs.get(`${name} ${execution}`).flatMap((r) => r.cpu));
    const cpuPerRound = runs.get(`after ${execution}`).map((after, round) => median(after.cpu) / median(runs.get(`before ${execution}`)[round].cpu));
    out(`${execution}: after / before median process CPU = ${(cpu('after') / cpu('before')).toFixed(3)}; per round: ${cpuPerRound.map((ratio) => ratio.toFixed(2)).join(', ')}`);
  }
}

if (profileDir) {
  const build = builds[builds.length - 1];
  for (const execution of ['inline', 'pool']) {
    const dir = resolve(profileDir, execution);
    mkdirSync(dir, { recursive: true });
    const before = new Set(readdirSync(dir));
    const result = run(build, execution, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile') && !before.has(f)).sort();
    out();
    out(`### CPU profile, ${build.name} build, ${execution} (${tables} tables, median wall ${median(result.wall).toFixed(1)} ms, load ${result.load.toFixed(1)}): self ms per table`);
    files.forEach((file, thread) => {
      const { totalMs, entries } = profileWindow(join(dir, file), ...result.window);
      out();
      out(`${thread === 0 ? 'main thread' : `worker ${thread}`}: ${(totalMs / tables).toFixed(2)} ms per table sampled`);
      out();
      out('| function | ms per table |');
      out('|---|---|');
      for (const [name, ms] of entries.slice(0, thread === 0 ? 14 : 4)) out(`| ${name} | ${(ms / tables).toFixed(2)} |`);
    });
  }
}
if (md) writeFileSync(md, `${lines.join('\n')}\n`);
