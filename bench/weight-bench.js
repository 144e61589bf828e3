#!/usr/bin/env node
// `npm run bench:weight` (also a step of `npm run bench`): raking the ACS person file
// (2.7M respondents) on 4 variables (STATE, SEX, RAC1P, HISP) with weightDataset(), beside
// R's survey::rake() on the same data, same targets and same convergence rule in the same
// run. Before anything is reported, the engine's weighted total of every cell of the four
// variables is checked against R's (1e-9 relative): a disagreement stops the run.
//   node bench/weight-bench.js [--quick] [--no-r] [--json out.json] [--md out.md]
// The engine's time is the whole weightDataset() call (open, read, rake, write the new
// file; the bench dataset holds only the four variables, as R reads only them); R's is
// rake() alone (reading the CSV is reported apart).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataDir, repoRoot } from './lib/datasets.js';
import { describeMachine } from './lib/machine.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const withR = !args.includes('--no-r');
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const reps = quick ? 1 : 3;
const api = await import(join(repoRoot, 'dist', 'index.js'));
const input = join(dataDir(), 'acs_pums_2024_person.csv.gz');
if (!existsSync(input)) {
  console.log(`weight bench: SKIPPED, ${input} is not there`);
  process.exit(0);
}
const cache = join(tmpdir(), 'crosstab-bench-weight');
mkdirSync(cache, { recursive: true });
const VARIABLES = ['STATE', 'SEX', 'RAC1P', 'HISP'];
const dataset = join(cache, 'acs-4.arrow');
if (!existsSync(dataset)) {
  const header = execFileSync('bash', ['-c', `gzip -dc '${input}' | head -1`], { encoding: 'utf8' }).trim().split(',');
  console.log('weight bench: building the ACS dataset (4 variables)...');
  await api.buildDataset(input, { weights: ['PWGTP'], survey: 'ACS', out: dataset, exclude: header.filter((c) => c !== 'PWGTP' && !VARIABLES.includes(c)) });
}

// Targets: each category's unweighted share, tilted by a fixed pattern so that raking has work to do.
const ds = await api.openDataset(dataset);
const margins = VARIABLES.map((name) => {
  const variable = ds.info.variables.find((v) => v.name === name);
  const raw = variable.values.map((v, k) => v.respondents * (1 + 0.2 * Math.sin(k + 1)));
  const sum = raw.reduce((a, b) => a + b, 0);
  return { variable: name, proportions: Object.fromEntries(variable.values.map((v, k) => [v.value, raw[k] / sum])) };
});
ds.close();
const targets = { margins, epsilon: 1e-7, maxIterations: 50 };
const targetsFile = join(cache, 'targets.json');
writeFileSync(targetsFile, JSON.stringify({ margins }));
writeFileSync(join(cache, 'targets-r.json'), JSON.stringify(targets));

const out = join(cache, 'acs-4-weighted.arrow');
const engineSeconds = [];
let report;
for (let i = 0; i < reps; i++) {
  rmSync(out, { force: true });
  const start = performance.now();
  report = await api.weightDataset(dataset, { targets: targetsFile, method: 'rake', name: 'wt_rake', out, epsilon: targets.epsilon, maxIterations: targets.maxIterations });
  engineSeconds.push((performance.now() - start) / 1000);
}
const engine = Math.min(...engineSeconds);

let r;
if (withR) {
  const rOut = join(cache, 'r.json');
  execFileSync('Rscript', [join(repoRoot, 'bench', 'lib', 'rake-acs.R'), input, join(cache, 'targets-r.json'), rOut], { stdio: ['ignore', 'ignore', 'inherit'] });
  r = JSON.parse(readFileSync(rOut, 'utf8'));
  // Answers checked against each other before anything is reported.
  const weighted = await api.openDataset(out);
  let worst = 0;
  for (const cell of r.cells) {
    const base = cell.cell.map((value, j) => `${VARIABLES[j]}=${value}`).join(' AND ');
    const result = await weighted.crosstab({ base, targets: ['*'], weight: 'wt_rake' });
    worst = Math.max(worst, Math.abs(result.base.weighted - cell.weighted) / cell.weighted);
  }
  weighted.close();
  if (!(worst < 1e-9)) throw new Error(`something is off: the engine's raked cell totals differ from R's by ${worst} relative`);
  r.worstRelativeDifference = worst;
}

const result = {
  date: new Date().toISOString(),
  machine: describeMachine(),
  note: 'The machine is shared (8 helpers on 2 cores): times are noisy; compare the ratio, measured in the same run.',
  shape: `ACS PUMS 2024, ${report.respondents.toLocaleString('en-US')} respondents, rake on ${VARIABLES.join(', ')} (epsilon ${targets.epsilon} of the total, at most ${targets.maxIterations} passes)`,
  iterations: report.sets[0].iterations,
  engineRuns: reps,
  engine: { seconds: engine, samples: engineSeconds, what: 'weightDataset(): open, read, rake, write' },
  ...(r ? { r: { seconds: r.rakeSeconds, readSeconds: r.readSeconds, version: r.r, survey: r.survey, cellsChecked: r.cells.length, worstRelativeDifference: r.worstRelativeDifference }, ratio: r.rakeSeconds / engine } : {}),
  memory: { rssBytesAfter: process.memoryUsage().rss },
};
console.log(`\nweight bench: ${result.shape}`);
console.log(`  engine weightDataset(): ${engine.toFixed(2)} s (best of ${reps}; ${report.sets[0].iterations} passes)`);
if (r) console.log(`  R rake():               ${r.rakeSeconds.toFixed(2)} s (reading the CSV: ${r.readSeconds.toFixed(1)} s); R / engine = ${result.ratio.toFixed(1)}x; ${r.cells.length} cells agree to ${r.worstRelativeDifference.toExponential(1)}`);
const json = flag('--json');
if (json) writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
const md = flag('--md');
if (md) {
  writeFileSync(md, `# Weighting bench, ${result.date.slice(0, 10)}\n\n${result.note}\n\n${result.shape}\n\n| | seconds |\n|---|---:|\n| engine weightDataset() (open, read, rake, write) | ${engine.toFixed(2)} |\n${r ? `| R survey::rake() (rake only; reading the CSV ${r.readSeconds.toFixed(1)} s) | ${r.rakeSeconds.toFixed(2)} |\n\nR / engine: **${result.ratio.toFixed(1)}x**. ${r.cells.length} cells checked, worst relative difference ${r.worstRelativeDifference.toExponential(1)}.\n` : ''}\nMachine: ${result.machine.cpuModel}, ${result.machine.cores} cores, ${(result.machine.memoryBytes / 2 ** 30).toFixed(0)} GiB, load ${result.machine.loadAverageAtStart.map((l) => l.toFixed(2)).join(' ')}, Node ${result.machine.node}.\n`);
}
