#!/usr/bin/env node
// `npm run bench:tabbook` (also a step of `npm run bench`): tab books written as XLSX, each in
// a child process of its own (bench/lib/tabbook-child.js): seconds to open, compute (tables on
// the worker pool) and write (exceljs's streaming writer), and the process's peak RSS.
//   GSS: 100 stubs (the 11 survey variables, over and over) x a 20-column banner (sex, race,
//        degree, padeg, madeg), one sheet per table and one long sheet.
//   ACS: every variable of ACS PUMS 2024 (--stubs all) x a 30-column banner (SEX, RAC1P,
//        MAR, ESR, MIL, HICOV, DIS), both layouts.
//   node bench/tabbook-bench.js [--reps N] [--json out.json] [--md out.md]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataDir, repoRoot } from './lib/datasets.js';
import { describeMachine } from './lib/machine.js';
import { markdownTable, textTable } from './lib/report.js';

const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const reps = Number(flag('--reps') ?? 3);
const api = await import(join(repoRoot, 'dist', 'index.js'));

/** The datasets, built once into the temp folder (the ACS one shared with the embedded benchmark). */
async function datasets() {
  const gss = join(tmpdir(), 'crosstab-bench-tabbook', 'gss.arrow');
  mkdirSync(join(tmpdir(), 'crosstab-bench-tabbook'), { recursive: true });
  if (!existsSync(gss)) {
    await api.buildDataset(join(repoRoot, 'datasets', 'gss_1972_2024_sub.csv.gz'), { weights: ['wtssps'], survey: 'GSS', out: gss, codebook: join(repoRoot, 'datasets', 'gss.codebook.json') });
  }
  const acs = join(tmpdir(), 'crosstab-bench-embedded', 'acs.arrow');
  mkdirSync(join(tmpdir(), 'crosstab-bench-embedded'), { recursive: true });
  if (!existsSync(acs)) await api.buildDataset(join(dataDir(), 'acs_pums_2024_person.csv.gz'), { weights: ['PWGTP'], survey: 'ACS', out: acs });
  return { gss, acs };
}

const { gss, acs } = await datasets();
const GSS_STUBS = ['year', 'ballot', 'age', 'race', 'sex', 'degree', 'padeg', 'madeg', 'relig', 'polviews', 'fefam'];
const cases = [
  { name: 'GSS 100 stubs x 20 columns', dataset: gss, banner: ['sex', 'race', 'degree', 'padeg', 'madeg'], stubs: Array.from({ length: 100 }, (_, i) => GSS_STUBS[i % GSS_STUBS.length]), layout: 'sheets' },
  { name: 'GSS 100 stubs x 20 columns', dataset: gss, banner: ['sex', 'race', 'degree', 'padeg', 'madeg'], stubs: Array.from({ length: 100 }, (_, i) => GSS_STUBS[i % GSS_STUBS.length]), layout: 'long' },
  { name: 'ACS all variables x 30 columns', dataset: acs, banner: ['SEX', 'RAC1P', 'MAR', 'ESR', 'MIL', 'HICOV', 'DIS'], stubs: 'all', layout: 'sheets' },
  { name: 'ACS all variables x 30 columns', dataset: acs, banner: ['SEX', 'RAC1P', 'MAR', 'ESR', 'MIL', 'HICOV', 'DIS'], stubs: 'all', layout: 'long' },
];

const scratch = mkdtempSync(join(tmpdir(), 'crosstab-bench-tabbook-out-'));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const results = [];
try {
  for (const spec of cases) {
    const runs = [];
    for (let rep = 0; rep < reps; rep++) {
      const out = join(scratch, `book-${results.length}.xlsx`);
      const line = execFileSync(process.execPath, [join(repoRoot, 'bench', 'lib', 'tabbook-child.js'), JSON.stringify({ ...spec, out })], { encoding: 'utf8', maxBuffer: 1 << 20 });
      runs.push(JSON.parse(line.trim().split('\n').at(-1)));
      rmSync(out, { force: true });
    }
    const pick = (field) => median(runs.map((run) => run[field]));
    results.push({
      name: spec.name, layout: spec.layout, banner: spec.banner, reps,
      tables: runs[0].tables, skipped: runs[0].skipped, columns: runs[0].columns, rows: runs[0].rows, cells: runs[0].cells, bytes: runs[0].bytes,
      openSeconds: pick('openSeconds'), computeSeconds: pick('computeSeconds'), writeSeconds: pick('writeSeconds'), totalSeconds: pick('totalSeconds'),
      maxRssBytes: Math.max(...runs.map((run) => run.maxRssBytes)), runs,
    });
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const header = ['book', 'layout', 'tables', 'rows', 'cells', 'compute s', 'write s', 'total s', 'peak RSS', 'XLSX'];
const rows = results.map((r) => [
  r.name, r.layout, String(r.tables), r.rows.toLocaleString('en-US'), r.cells.toLocaleString('en-US'),
  r.computeSeconds.toFixed(2), r.writeSeconds.toFixed(2), r.totalSeconds.toFixed(2), `${(r.maxRssBytes / 2 ** 20).toFixed(0)} MiB`, `${(r.bytes / 2 ** 20).toFixed(1)} MiB`,
]);
const title = `Tab books written as XLSX (median of ${reps} processes; peak RSS the largest)`;
console.log(`${title}\n\n${textTable(header, rows)}`);
const machine = describeMachine();
const json = flag('--json');
if (json) writeFileSync(json, `${JSON.stringify({ date: new Date().toISOString(), machine, results }, null, 2)}\n`);
const md = flag('--md');
if (md) {
  const facts = `${new Date().toISOString().slice(0, 10)}, ${machine.cores} cores (${machine.cpuModel}), ${(machine.memoryBytes / 2 ** 30).toFixed(0)} GiB, load average at start ${machine.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}, Node ${machine.node}.`;
  writeFileSync(md, `# ${title}\n\n${facts}\n\n${markdownTable(header, rows)}\n`);
}
