#!/usr/bin/env node
// `npm run bench:weight` (also a step of `npm run bench`): raking the ACS person file
// (2.7M respondents) on 4 variables (STATE, SEX, RAC1P, HISP) with weightDataset(), beside
// R's survey::rake() on the same data, same targets and same convergence rule in the same
// run. Before anything is reported, the engine's weighted total of every cell of the four
// variables is checked against R's (1e-9 relative): a disagreement stops the run.
//   node bench/weight-bench.js [--quick] [--no-r] [--scale N] [--r-scale] [--full] [--json out.json] [--md out.md]
// --full: `crosstab weight` end to end (the CLI in its own process: Node's start, open, read,
// rake, write) on the default build of the whole ACS file (`crosstab build acs.csv.gz --weight
// PWGTP --survey ACS`, 256 MB, built once into the cache), to the weights file (the default) and
// with --out (the whole dataset rewritten), same targets; the two answer alike (every R cell's
// weighted total equal to the bit, and to R's to 1e-9) before anything is reported.
// The engine's time is the whole weightDataset() call with `out` (open, read, rake, write the
// whole new dataset file, 88 MB: not the weights file, so it is no measure of the default
// `crosstab weight`, which --full times; the bench dataset holds only the four variables, as
// R reads only them); R's is
// rake() alone (reading the CSV is reported apart). Each engine run is a child process
// (bench/lib/weight-child.js) so that its peak RSS is its own; R runs under /usr/bin/time -v.
// --scale N (default 8): the same rake on N x ACS (the five columns repeated N times,
// built once into the cache), engine only unless --r-scale, which runs R on it too when
// N x R's peak RSS at 1 x is below half the free memory (else the bench says it was not run).
import { execFileSync, spawnSync } from 'node:child_process';
import { freemem, loadavg } from 'node:os';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
/** One engine run in a child process: seconds and peak RSS. */
const engineRun = (file, output) => {
  rmSync(output, { force: true });
  const line = execFileSync(process.execPath, ['--expose-gc', join(repoRoot, 'bench', 'lib', 'weight-child.js'), file, targetsFile, output, String(targets.epsilon), String(targets.maxIterations)], { encoding: 'utf8' });
  return JSON.parse(line.trim().split('\n').pop());
};
/** R's rake() under /usr/bin/time -v: its JSON and its peak RSS. */
const rRun = (csv, output) => {
  const run = spawnSync('/usr/bin/time', ['-v', 'Rscript', join(repoRoot, 'bench', 'lib', 'rake-acs.R'), csv, join(cache, 'targets-r.json'), output], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  if (run.status !== 0) throw new Error(`R's rake() failed (exit ${run.status}): ${run.stderr.slice(-2000)}`);
  const peak = /Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr);
  return { ...JSON.parse(readFileSync(output, 'utf8')), peakRssBytes: peak ? Number(peak[1]) * 1024 : null };
};
const engineSeconds = [];
let report;
let enginePeak = 0;
for (let i = 0; i < reps; i++) {
  report = engineRun(dataset, out);
  engineSeconds.push(report.seconds);
  enginePeak = Math.max(enginePeak, report.peakRssBytes);
}
report.sets = [{ iterations: report.iterations }];
const engine = Math.min(...engineSeconds);

let r;
if (withR) {
  const rOut = join(cache, 'r.json');
  r = rRun(input, rOut);
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

// --full: the whole ACS dataset as users build it, weighted by the CLI end to end.
let full;
if (args.includes('--full')) {
  const cli = join(repoRoot, 'dist', 'cli', 'main.js');
  const fullDataset = join(cache, 'acs-full.arrow');
  if (!existsSync(fullDataset)) {
    console.log('weight bench: building the whole ACS dataset (default build)...');
    execFileSync(process.execPath, [cli, 'build', input, '--weight', 'PWGTP', '--survey', 'ACS', '--out', fullDataset, '--quiet'], { stdio: 'inherit' });
  }
  const wholeOut = join(cache, 'acs-full-weighted.arrow');
  const weightsFile = `${fullDataset}.weights`;
  const cliRun = (extra) => {
    const start = performance.now();
    const text = execFileSync(process.execPath, [cli, 'weight', fullDataset, '--targets', targetsFile, '--method', 'rake', '--name', 'wt_rake', '--epsilon', String(targets.epsilon), '--max-iterations', String(targets.maxIterations), '--json', ...extra], { encoding: 'utf8', maxBuffer: 256 << 20 });
    const seconds = (performance.now() - start) / 1000;
    const parsed = JSON.parse(text);
    return { seconds, bytes: parsed.bytes, iterations: parsed.sets[0].iterations, written: parsed.written };
  };
  const sideRuns = [];
  const wholeRuns = [];
  for (let i = 0; i < reps; i++) {
    // The --out run first, from the dataset alone; then the weights file, made anew each time.
    rmSync(weightsFile, { force: true });
    rmSync(wholeOut, { force: true });
    wholeRuns.push(cliRun(['--out', wholeOut]));
    sideRuns.push(cliRun([]));
  }
  // Answers: every cell of the four variables together from the weights file equals the
  // rewritten file's, to the bit, and is within 1e-9 of an independent rake: R's when R ran;
  // without R, the bench's own (rakeCells() below, iterative proportional fitting over the
  // joint cells' base totals, R's rule), over every combination the data has (a query per
  // combination of the first three variables, the fourth's values as targets): the cells of R's table.
  const side = await api.openDataset(fullDataset);
  const whole = await api.openDataset(wholeOut);
  let cells = 0;
  let worstR = 0;
  try {
    const valuesOf = (name) => side.info.variables.find((v) => v.name === name).values.map((v) => v.value);
    const [last, ...firsts] = [...VARIABLES].reverse();
    const queries = r
      ? r.cells.map((cell) => ({ base: cell.cell.map((value, j) => `${VARIABLES[j]}=${value}`).join(' AND '), targets: ['*'], values: [cell.cell.map(String)], weighted: [cell.weighted] }))
      : firsts.reverse().reduce((bases, name) => bases.flatMap((base) => valuesOf(name).map((value) => [...base, value])), [[]]).map((base) => ({
          base: base.map((value, j) => `${VARIABLES[j]}=${value}`).join(' AND '),
          targets: valuesOf(last).map((value) => `${last}=${value}`),
          values: valuesOf(last).map((value) => [...base, value]),
        }));
    const joint = [];
    for (const query of queries) {
      const [a, b, before] = await Promise.all([[side, 'wt_rake'], [whole, 'wt_rake'], [side, 'PWGTP']].map(([d, weight]) => d.crosstab({ base: query.base, targets: query.targets, weight })));
      a.targets.forEach((cell, k) => {
        if (cell.weighted !== b.targets[k].weighted || cell.respondents !== b.targets[k].respondents) throw new Error(`something is off: ${query.base} AND ${query.targets[k]} weighs ${cell.weighted} with the weights file, ${b.targets[k].weighted} in the rewritten file`);
        if (cell.respondents === 0) return;
        joint.push({ values: query.values[k], base: before.targets[k].weighted, weighted: cell.weighted, expected: query.weighted?.[k] });
        cells++;
      });
    }
    if (!r) rakeCells(joint, margins, targets).forEach((expected, c) => (joint[c].expected = expected));
    for (const cell of joint) worstR = Math.max(worstR, Math.abs(cell.weighted - cell.expected) / cell.expected);
  } finally {
    side.close();
    whole.close();
  }
  if (!(worstR < 1e-9)) throw new Error(`something is off: the weights file's cell totals differ from ${r ? "R's" : 'the bench\'s own rake'} by ${worstR} relative`);
  const best = (runs) => Math.min(...runs.map((run) => run.seconds));
  full = {
    dataset: { path: fullDataset, bytes: statSync(fullDataset).size, build: 'crosstab build acs_pums_2024_person.csv.gz --weight PWGTP --survey ACS' },
    weightsFile: { seconds: best(sideRuns), samples: sideRuns.map((run) => run.seconds), bytes: sideRuns[0].bytes, iterations: sideRuns[0].iterations },
    out: { seconds: best(wholeRuns), samples: wholeRuns.map((run) => run.seconds), bytes: wholeRuns[0].bytes },
    cellsChecked: cells,
    reference: r ? "R's rake()" : "the bench's own rake of the joint cells (rakeCells)",
    worstRelativeDifferenceToReference: worstR,
    ...(r ? { worstRelativeDifferenceToR: worstR, rOverWeightsFile: r.rakeSeconds / best(sideRuns), rOverOut: r.rakeSeconds / best(wholeRuns) } : {}),
    what: '`crosstab weight` as a child process, wall clock from spawn to exit (Node start, open, read, rake, write, report); best of the runs',
  };
}

/**
 * R's rake() over the joint cells, written out plainly (the check without R): each pass
 * post-stratifies on every margin in turn (a cell's weight times its category's target over
 * the category's weighted total), until no cell moved by epsilon times the base total in a
 * pass. Targets: each margin's proportions of the base total. Returns each cell's total.
 */
function rakeCells(joint, margins, { epsilon, maxIterations }) {
  const total = joint.reduce((sum, cell) => sum + cell.base, 0);
  const weights = joint.map((cell) => cell.base);
  for (let pass = 0; pass < maxIterations; pass++) {
    const before = [...weights];
    margins.forEach((margin, m) => {
      const sums = new Map();
      joint.forEach((cell, c) => sums.set(cell.values[m], (sums.get(cell.values[m]) ?? 0) + weights[c]));
      joint.forEach((cell, c) => (weights[c] *= (margin.proportions[cell.values[m]] * total) / sums.get(cell.values[m])));
    });
    if (Math.max(...weights.map((w, c) => Math.abs(w - before[c]))) < epsilon * total) return weights;
  }
  throw new Error(`something is off: the bench's own rake did not converge in ${maxIterations} passes`);
}

// N x ACS: the five columns repeated N times, built once.
const scale = Number(flag('--scale') ?? 8);
let scaled;
if (scale > 1) {
  const csv = join(cache, `acs-5x${scale}.csv`);
  const big = join(cache, `acs-4x${scale}.arrow`);
  if (!existsSync(big)) {
    console.log(`weight bench: building ${scale} x ACS (5 columns)...`);
    execFileSync('bash', ['-c', `gzip -dc '${input}' | awk -F, -v OFS=, 'NR==1{for(i=1;i<=NF;i++){if($i=="STATE")a=i;if($i=="PWGTP")b=i;if($i=="SEX")c=i;if($i=="RAC1P")d=i;if($i=="HISP")e=i}} {print $a,$b,$c,$d,$e}' > '${cache}/acs-5.csv' && (cat '${cache}/acs-5.csv'; for i in $(seq 2 ${scale}); do tail -n +2 '${cache}/acs-5.csv'; done) > '${csv}'`]);
    await api.buildDataset(csv, { weights: ['PWGTP'], survey: 'ACS', out: big });
  }
  const run = engineRun(big, join(cache, `acs-4x${scale}-weighted.arrow`));
  if (run.iterations !== report.iterations) throw new Error(`something is off: ${scale} x ACS took ${run.iterations} passes, 1 x ${report.iterations}`);
  scaled = { scale, respondents: run.respondents, engine: run };
  if (!r) scaled.rNotRun = 'not asked (--no-r)';
  else if (r.peakRssBytes) {
    const estimate = scale * r.peakRssBytes;
    scaled.rEstimatedPeakRssBytes = estimate;
    scaled.freeMemoryBytes = freemem();
    if (args.includes('--r-scale') && estimate < scaled.freeMemoryBytes / 2) scaled.r = rRun(csv, join(cache, `r-x${scale}.json`));
    else scaled.rNotRun = args.includes('--r-scale') ? `estimated peak ${(estimate / 2 ** 30).toFixed(1)} GB (${scale} x R's ${(r.peakRssBytes / 2 ** 30).toFixed(2)} GB at 1 x) is over half the free ${(scaled.freeMemoryBytes / 2 ** 30).toFixed(1)} GB` : 'not asked (--r-scale)';
  }
}

const result = {
  date: new Date().toISOString(),
  machine: describeMachine(),
  note: flag('--note') ?? (loadavg()[0] > describeMachine().cores ? `The machine was loaded (load average ${loadavg()[0].toFixed(1)} on ${describeMachine().cores} cores at the end): times are noisy; compare the ratios, measured in the same run.` : `The machine was quiet (load average ${loadavg()[0].toFixed(1)} on ${describeMachine().cores} cores at the end).`),
  shape: `ACS PUMS 2024, ${report.respondents.toLocaleString('en-US')} respondents, rake on ${VARIABLES.join(', ')} (epsilon ${targets.epsilon} of the total, at most ${targets.maxIterations} passes)`,
  iterations: report.sets[0].iterations,
  engineRuns: reps,
  engine: { seconds: engine, samples: engineSeconds, peakRssBytes: enginePeak, what: 'weightDataset() with out: open, read, rake, write the whole new dataset file (child process, timed inside it; peak RSS = its VmHWM, Node included)' },
  ...(r ? { r: { seconds: r.rakeSeconds, readSeconds: r.readSeconds, peakRssBytes: r.peakRssBytes, version: r.r, survey: r.survey, cellsChecked: r.cells.length, worstRelativeDifference: r.worstRelativeDifference }, ratio: r.rakeSeconds / engine } : {}),
  ...(full ? { full } : {}),
  loadAverageAtEnd: loadavg(),
  ...(scaled ? { scaled: { ...scaled, r: scaled.r ? { seconds: scaled.r.rakeSeconds, readSeconds: scaled.r.readSeconds, peakRssBytes: scaled.r.peakRssBytes } : undefined } } : {}),
};
console.log(`\nweight bench: ${result.shape}`);
const gb = (bytes) => `${(bytes / 2 ** 30).toFixed(2)} GB`;
console.log(`  engine weightDataset(): ${engine.toFixed(2)} s (best of ${reps}; ${report.sets[0].iterations} passes), peak RSS ${gb(enginePeak)}`);
if (scaled) console.log(`  ${scale} x ACS (${scaled.respondents.toLocaleString('en-US')} respondents): engine ${scaled.engine.seconds.toFixed(2)} s, peak RSS ${gb(scaled.engine.peakRssBytes)}${scaled.r ? `; R rake() ${scaled.r.rakeSeconds.toFixed(1)} s, peak RSS ${gb(scaled.r.peakRssBytes)}` : scaled.rNotRun ? `; R not run: ${scaled.rNotRun}` : ''}`);
if (r) console.log(`  R rake():               ${r.rakeSeconds.toFixed(2)} s (reading the CSV: ${r.readSeconds.toFixed(1)} s), peak RSS ${r.peakRssBytes ? gb(r.peakRssBytes) : '?'}; R / engine = ${result.ratio.toFixed(1)}x; ${r.cells.length} cells agree to ${r.worstRelativeDifference.toExponential(1)}`);
if (full) console.log(`  crosstab weight, whole ACS (${(full.dataset.bytes / 1e6).toFixed(0)} MB dataset), end to end: weights file ${full.weightsFile.seconds.toFixed(2)} s (${(full.weightsFile.bytes / 1e6).toFixed(1)} MB written), --out ${full.out.seconds.toFixed(2)} s (${(full.out.bytes / 1e6).toFixed(0)} MB)${r ? `; R rake() / weights file = ${full.rOverWeightsFile.toFixed(1)}x` : ''}; ${full.cellsChecked} cells equal, within ${full.worstRelativeDifferenceToReference.toExponential(1)} of ${full.reference}`);
const json = flag('--json');
if (json) writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
const md = flag('--md');
if (md) {
  const memoryRows = [`| 1 x ACS (${report.respondents.toLocaleString('en-US')}) | engine | ${engine.toFixed(2)} | ${gb(enginePeak)} |`];
  if (r) memoryRows.push(`| 1 x ACS | R rake() | ${r.rakeSeconds.toFixed(2)} | ${r.peakRssBytes ? gb(r.peakRssBytes) : '?'} |`);
  if (scaled) {
    memoryRows.push(`| ${scale} x ACS (${scaled.respondents.toLocaleString('en-US')}) | engine | ${scaled.engine.seconds.toFixed(2)} | ${gb(scaled.engine.peakRssBytes)} |`);
    memoryRows.push(scaled.r ? `| ${scale} x ACS | R rake() | ${scaled.r.rakeSeconds.toFixed(2)} | ${gb(scaled.r.peakRssBytes)} |` : `| ${scale} x ACS | R rake() | not run: ${scaled.rNotRun} | |`);
  }
  const fullText = full
    ? `## crosstab weight end to end, whole ACS\n\nThe default build (\`${full.dataset.build}\`, ${(full.dataset.bytes / 1e6).toFixed(0)} MB); ${full.what}.\n\n| | seconds (best of ${reps}) | runs | written |\n|---|---:|---|---:|\n| crosstab weight (weights file) | ${full.weightsFile.seconds.toFixed(2)} | ${full.weightsFile.samples.map((x) => x.toFixed(2)).join(', ')} | ${(full.weightsFile.bytes / 1e6).toFixed(1)} MB |\n| crosstab weight --out (whole dataset) | ${full.out.seconds.toFixed(2)} | ${full.out.samples.map((x) => x.toFixed(2)).join(', ')} | ${(full.out.bytes / 1e6).toFixed(0)} MB |\n${r ? `| R survey::rake() (rake only) | ${r.rakeSeconds.toFixed(2)} | | |\n\nR / weights file: **${full.rOverWeightsFile.toFixed(1)}x**; R / --out: ${full.rOverOut.toFixed(1)}x. ` : '\n'}${full.cellsChecked} cells equal to the bit between the weights file and the rewritten file, within ${full.worstRelativeDifferenceToReference.toExponential(1)} of ${full.reference}.\n\n`
    : '';
  writeFileSync(md, `# Weighting bench, ${result.date.slice(0, 10)}\n\n${result.note}\n\n${result.shape}\n\n${fullText}| | seconds |\n|---|---:|\n| engine weightDataset() with \`out\`, in-process (open, read, rake, write the whole ${(report.bytes / 1e6).toFixed(0)} MB dataset, not the weights file) | ${engine.toFixed(2)} |\n${r ? `| R survey::rake() (rake only; reading the CSV ${r.readSeconds.toFixed(1)} s) | ${r.rakeSeconds.toFixed(2)} |\n\nR / engine: **${result.ratio.toFixed(1)}x**. ${r.cells.length} cells checked, worst relative difference ${r.worstRelativeDifference.toExponential(1)}.\n` : ''}\n## Time and peak RSS (each run its own process)\n\n| data | | seconds | peak RSS |\n|---|---|---:|---:|\n${memoryRows.join('\n')}\n\nMachine: ${result.machine.cpuModel}, ${result.machine.cores} cores, ${(result.machine.memoryBytes / 2 ** 30).toFixed(0)} GiB, load ${result.machine.loadAverageAtStart.map((l) => l.toFixed(2)).join(' ')} at the start, ${result.loadAverageAtEnd.map((l) => l.toFixed(2)).join(' ')} at the end, Node ${result.machine.node}.\n`);
}
