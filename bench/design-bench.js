#!/usr/bin/env node
// `npm run bench:design` (also the last step of `npm run bench`): tables under a complex
// survey design against the same tables under the simple design, with DuckDB
// computing the same per-PSU sums and R's survey package (if Rscript is installed) the
// same figures.
//   node bench/design-bench.js [--quick] [--no-acs] [--json out.json] [--md out.md]
// Shapes:
//   D1 NHANES 2009-10, strata SDMVSTRA, PSU SDMVPSU (nest), 31 PSUs: base *, rows HI_CHOL, columns agecat + race
//   D2 ACS PUMS 2024, synthetic design: strata STATE, PSU PUMA (nest): base *, rows SCHL, columns SEX + RAC1P
// Each: the engine's table() + tableStatistics(all) with the design vs the same dataset
// built without one (inline and pool), DuckDB's GROUP BY GROUPING SETS of the per-PSU
// cell and margin sums, and (D1) R's svyby(svymean, covmat) + svyby(svytotal) + svychisq.
// Before timing, the engine's per-PSU base totals are checked against DuckDB's.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { dataDir, repoRoot } from './lib/datasets.js';
import { describeMachine } from './lib/machine.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const withAcs = !args.includes('--no-acs');
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const reps = quick ? 3 : 10;
const api = await import(join(repoRoot, 'dist', 'index.js'));
const data = dataDir();
const cache = join(tmpdir(), 'crosstab-bench-design');
mkdirSync(cache, { recursive: true });

const SHAPES = [
  {
    id: 'D1', title: 'NHANES 2009-10, strata SDMVSTRA x PSU SDMVPSU (nest): base *, rows HI_CHOL, columns agecat + race',
    input: join(data, 'nhanes_2009_2010_survey.csv.gz'), weight: 'WTMEC2YR', strata: 'SDMVSTRA', psu: 'SDMVPSU',
    rows: ['HI_CHOL'], columns: ['agecat', 'race'], r: true,
  },
  {
    id: 'D2', title: 'ACS PUMS 2024, synthetic design strata STATE x PSU PUMA (nest): base *, rows SCHL, columns SEX + RAC1P',
    input: join(data, 'acs_pums_2024_person.csv.gz'), weight: 'PWGTP', strata: 'STATE', psu: 'PUMA',
    rows: ['SCHL'], columns: ['SEX', 'RAC1P'], r: false,
  },
].filter((shape) => withAcs || shape.id !== 'D2');

async function built(shape, design) {
  const out = join(cache, `${shape.id}-${design ? 'design' : 'simple'}.arrow`);
  if (!existsSync(out)) {
    const options = { weights: [shape.weight], survey: shape.id, out };
    if (design) options.design = { strata: shape.strata, psu: shape.psu, nest: true };
    await api.buildDataset(shape.input, options);
  }
  return out;
}

async function time(fn) {
  for (let i = 0; i < 3; i++) await fn(); // warm-up (JIT)
  const samples = [];
  for (let i = 0; i < reps; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

async function engineRun(path, shape, execution) {
  const ds = await api.openDataset(path, { execution });
  const query = { base: '*', rows: shape.rows.map((variable) => ({ variable })), columns: shape.columns.map((variable) => ({ variable })) };
  const run = async () => api.tableStatistics(await ds.table(query), { stats: 'all', lonelyPsu: 'adjust' });
  const result = await ds.table(query);
  const tableMs = await time(() => ds.table(query));
  const ms = await time(run);
  ds.close();
  return { ms, tableMs, result };
}

async function duckdbRun(shape) {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const q = (name) => `"${name}"`;
  const keep = [shape.weight, shape.strata, shape.psu, ...shape.rows, ...shape.columns].map(q).join(', ');
  await connection.run(`CREATE TABLE t AS SELECT ${keep} FROM read_csv('${shape.input}', all_varchar = true)`);
  const psu = `${q(shape.strata)}, ${q(shape.psu)}`;
  const sets = [
    ...shape.rows.flatMap((r) => shape.columns.map((c) => `(${psu}, ${q(r)}, ${q(c)})`)),
    ...shape.rows.map((r) => `(${psu}, ${q(r)})`),
    ...shape.columns.map((c) => `(${psu}, ${q(c)})`),
    `(${psu})`,
  ];
  const axes = [...shape.rows, ...shape.columns].map(q).join(', ');
  const sql = `SELECT GROUPING(${axes}) AS g, SUM(CAST(${q(shape.weight)} AS DOUBLE)) AS w
    FROM t GROUP BY GROUPING SETS (${sets.join(', ')})`;
  const rows = (await connection.runAndReadAll(sql)).getRows();
  const everyAxisRolledUp = 2 ** (shape.rows.length + shape.columns.length) - 1;
  const baseTotals = rows.filter((row) => Number(row[0]) === everyAxisRolledUp).map((row) => row[1]);
  const ms = await time(async () => (await connection.runAndReadAll(sql)).getRows());
  connection.closeSync?.();
  return { ms, baseTotals, groups: rows.length };
}

function rRun(shape) {
  try {
    execFileSync('Rscript', ['--version'], { stdio: 'ignore' });
  } catch {
    return { skipped: 'Rscript not installed' };
  }
  const rList = (names) => `c(${names.map((name) => JSON.stringify(name)).join(', ')})`;
  const script = `suppressPackageStartupMessages(library(survey))
d <- read.csv(gzfile("${shape.input}"))
des <- svydesign(id = ~${shape.psu}, strata = ~${shape.strata}, weights = ~${shape.weight}, nest = TRUE, data = d)
options(survey.lonely.psu = "adjust")
run <- function() {
  for (r in ${rList(shape.rows)}) for (v in sort(unique(na.omit(d[[r]])))) {
    des2 <- update(des, .y = as.numeric(!is.na(d[[r]]) & d[[r]] == v))
    for (cv in ${rList(shape.columns)}) {
      f <- as.formula(paste0("~", cv))
      svyby(~.y, f, des2, svymean, covmat = TRUE, deff = "replace"); svyby(~.y, f, des2, svytotal)
    }
  }
  for (r in ${rList(shape.rows)}) for (cv in ${rList(shape.columns)}) svychisq(as.formula(paste0("~", r, "+", cv)), des)
}
run()
times <- replicate(${reps}, system.time(run())[["elapsed"]])
cat(median(times) * 1000)`;
  return { ms: Number(execFileSync('Rscript', ['-e', script], { encoding: 'utf8', maxBuffer: 1 << 24 }).trim()) };
}

const machine = describeMachine();
console.log(`design bench ${new Date().toISOString()} on ${machine.cpuModel}, ${machine.cores} cores, load ${machine.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}`);
const results = [];
for (const shape of SHAPES) {
  console.log(`\n${shape.id}: ${shape.title}`);
  const designPath = await built(shape, true);
  const simplePath = await built(shape, false);
  const duck = await duckdbRun(shape);
  const entry = { id: shape.id, title: shape.title, engine: {}, duckdbMs: duck.ms, duckdbGroups: duck.groups };
  for (const execution of ['inline', 'pool']) {
    const withDesign = await engineRun(designPath, shape, execution);
    const simple = await engineRun(simplePath, shape, execution);
    // Same per-PSU base totals as DuckDB's, before any timing is reported.
    const sums = withDesign.result.design.clusterSums;
    const ours = Array.from({ length: sums.clusters }, (_, k) => sums.sums[k * sums.slots + sums.slots - 1]).sort((a, b) => a - b);
    const theirs = [...duck.baseTotals].sort((a, b) => a - b);
    if (ours.length !== theirs.length || ours.some((x, i) => Math.abs(x - theirs[i]) > 1e-9 * Math.abs(x))) {
      throw new Error(`${shape.id}: something is off: engine and DuckDB per-PSU totals disagree (${ours.length} vs ${theirs.length} PSUs)`);
    }
    entry.engine[execution] = {
      designTableMs: withDesign.tableMs, simpleTableMs: simple.tableMs, tableSlowdown: withDesign.tableMs / simple.tableMs,
      designMs: withDesign.ms, simpleMs: simple.ms, slowdown: withDesign.ms / simple.ms, execution: withDesign.result.execution,
    };
    console.log(`  engine ${execution.padEnd(6)} table(): design ${withDesign.tableMs.toFixed(2)} ms, simple ${simple.tableMs.toFixed(2)} ms: ${(withDesign.tableMs / simple.tableMs).toFixed(2)}x;` +
      ` with all statistics: design ${withDesign.ms.toFixed(2)} ms, simple ${simple.ms.toFixed(2)} ms: ${(withDesign.ms / simple.ms).toFixed(2)}x (${sums.clusters} PSUs)`);
  }
  console.log(`  duckdb per-PSU sums (GROUPING SETS, ${duck.groups} groups) ${duck.ms.toFixed(2)} ms`);
  if (shape.r) {
    entry.r = rRun(shape);
    console.log(entry.r.skipped ? `  !!! R skipped: ${entry.r.skipped}` : `  R svyby + svytotal + svychisq ${entry.r.ms.toFixed(1)} ms`);
  } else {
    entry.r = { skipped: 'not run on ACS (3.4M rows: minutes per run in R)' };
  }
  results.push(entry);
}
const report = { date: new Date().toISOString(), machine, reps, results };
if (flag('--json')) writeFileSync(flag('--json'), `${JSON.stringify(report, null, 2)}\n`);
if (flag('--md')) {
  const lines = [`# Complex-design bench, ${report.date}`, '', `${machine.cpuModel}, ${machine.cores} cores, Node ${machine.node}, load average at start ${machine.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')} (shared machine). Median of ${reps} runs after three warm-up runs.`, '',
    '| shape | path | table(), design (ms) | table(), simple (ms) | design / simple | + all statistics, design (ms) | + all statistics, simple (ms) | design / simple | DuckDB per-PSU sums (ms) | R survey (ms) |', '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|'];
  for (const entry of results) {
    for (const [execution, e] of Object.entries(entry.engine)) {
      lines.push(`| ${entry.id} | ${execution} | ${e.designTableMs.toFixed(2)} | ${e.simpleTableMs.toFixed(2)} | ${e.tableSlowdown.toFixed(2)}x | ${e.designMs.toFixed(2)} | ${e.simpleMs.toFixed(2)} | ${e.slowdown.toFixed(2)}x | ${entry.duckdbMs.toFixed(2)} | ${entry.r.ms ? entry.r.ms.toFixed(0) : entry.r.skipped} |`);
    }
  }
  lines.push('', ...results.map((entry) => `- ${entry.id}: ${entry.title}`));
  writeFileSync(flag('--md'), `${lines.join('\n')}\n`);
}
