#!/usr/bin/env node
// `npm run bench:segments-open`: what a dataset file in segments costs to open against the
// compact file of the same respondents. The ACS PUMS 2024 person CSV is cut in three (its
// first 98% of rows, then two waves of 1%), cached in the temp folder; the first part is
// built, then both waves appended twice: in segments (the default: a file of 3 segments) and
// `--compact` (every buffer extended: one file). Timed, each in a child process
// (bench/lib/open-child.js over `dist/`, run `npm run build:ts` first), alternating the two
// files run by run, with each file read through the page cache just before: the default open
// and its first crosstab (buffers read as queries need them), `preload: true`, `verify:
// 'full'` (every buffer read and checked at open: what `crosstab serve` does at a reload), and
// the default open followed by verify() (what `crosstab serve` does at its start). Before
// anything is recorded, the two files' answers to each run's query must be equal
// (respondents and weighted sums; ACS weights are integers: exact), else "something is off".
//   node bench/segments-open-bench.js [--runs N] [--cache DIR] [--no-write] [--result NAME]
// Results go to bench/results/DATE-segments-open.{json,md}, or bench/results/NAME.{json,md}.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acsCsvOrSkip, acsParts } from './lib/acs-parts.js';
import { repoRoot } from './lib/datasets.js';
import { describeMachine } from './lib/machine.js';
import { residencyText, warmInput } from './lib/page-cache.js';
import { markdownTable, textTable } from './lib/report.js';

const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const runs = Number(flag('--runs') ?? 3);
const csv = acsCsvOrSkip('segments open');
const cache = flag('--cache') ?? join(tmpdir(), 'crosstab-bench-segments-open');
mkdirSync(cache, { recursive: true });
const cli = join(repoRoot, 'dist', 'cli', 'main.js');
const openChild = join(repoRoot, 'bench', 'lib', 'open-child.js');
const machine = describeMachine();

/** Runs the CLI; its stdout and stderr (a failure throws). */
function crosstab(command) {
  const run = spawnSync(process.execPath, [cli, ...command], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`crosstab ${command[0]} failed:\n${run.stderr}`);
  return run;
}
// The first 98% of the rows, then the next 1% and the last 1%.
const [first, waveA, waveB] = await acsParts(csv, cache, [98, 99], ['acs-first-98.csv.gz', 'acs-wave-98-99.csv.gz', 'acs-wave-99-100.csv.gz']);
const base = join(cache, 'first-98.arrow');
const files = { segments: join(cache, 'segments.arrow'), compact: join(cache, 'compact.arrow') };
if (!existsSync(base)) crosstab(['build', first, '--weight', 'PWGTP', '--survey', 'ACS', '--out', base, '--quiet']);
let segments = 1;
for (const [way, path] of Object.entries(files)) {
  copyFileSync(base, path);
  for (const wave of [waveA, waveB]) {
    const said = crosstab(['append', path, wave, ...(way === 'compact' ? ['--compact'] : []), '--out', path]).stderr;
    if (way === 'segments') segments = Number(/ in (\d+) segments/.exec(said)?.[1] ?? 1);
  }
}
if (segments !== 3) throw new Error(`something is off: ${files.segments} has ${segments} segments, not 3`);
const info = JSON.parse(crosstab(['info', files.segments, '--json']).stdout);

/** Each run's query: a base and a target over variables every ACS build has. */
const QUERIES = [
  ['SEX=2', 'AGEP=25..44'],
  ['AGEP=18..', 'SEX=1 AND AGEP=65..'],
  ['*', 'AGEP=0..17'],
];
const MODES = ['lazy', 'preload', 'full', 'verify'];
const rows = [];
for (let run = 0; run < runs; run++) {
  const [queryBase, target] = QUERIES[run % QUERIES.length];
  const order = run % 2 === 0 ? ['segments', 'compact'] : ['compact', 'segments'];
  for (const mode of MODES) {
    const answers = {};
    for (const way of order) {
      const residency = warmInput(files[way]).after;
      const started = performance.now();
      const out = JSON.parse(execFileSync(process.execPath, [openChild, files[way], queryBase, target, mode], { encoding: 'utf8' }));
      rows.push({ run, way, mode, wallMs: performance.now() - started, openMs: out.openMs, firstQueryMs: out.firstQueryMs, openToAnswerMs: out.openToAnswerMs, rssAfterQueryBytes: out.rssAfterQueryBytes, cached: residencyText(residency), load: describeMachine().loadAverageAtStart[0] });
      answers[way] = out.answer;
    }
    if (JSON.stringify(answers.segments) !== JSON.stringify(answers.compact)) throw new Error(`something is off: ${queryBase} / ${target} answers ${JSON.stringify(answers.segments)} in segments, ${JSON.stringify(answers.compact)} compact`);
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const summary = MODES.map((mode) => {
  const of = (way, key) => median(rows.filter((row) => row.mode === mode && row.way === way).map((row) => row[key]));
  // Per run, segments over compact (the pair run one after the other).
  const ratios = [...Array(runs).keys()].map((run) => {
    const pair = (way) => rows.find((row) => row.run === run && row.mode === mode && row.way === way).openToAnswerMs;
    return pair('segments') / pair('compact');
  });
  return { mode, segmentsMs: of('segments', 'openToAnswerMs'), compactMs: of('compact', 'openToAnswerMs'), segmentsOpenMs: of('segments', 'openMs'), compactOpenMs: of('compact', 'openMs'), ratios };
});
const header = ['open', 'segments: open + first query ms (open)', 'compact: open + first query ms (open)', 'segments / compact, run by run'];
const table = summary.map((entry) => [entry.mode, `${entry.segmentsMs.toFixed(0)} (${entry.segmentsOpenMs.toFixed(0)})`, `${entry.compactMs.toFixed(0)} (${entry.compactOpenMs.toFixed(0)})`, entry.ratios.map((ratio) => ratio.toFixed(2)).join(', ')]);
console.log(textTable(header, table));

const date = new Date().toISOString();
const loads = rows.map((row) => row.load);
if (!args.includes('--no-write')) {
  const base = join(repoRoot, 'bench', 'results', flag('--result') ?? `${date.slice(0, 10)}-segments-open`);
  writeFileSync(`${base}.json`, JSON.stringify({ date, command: `node bench/segments-open-bench.js ${args.join(' ')}`.trim(), machine, runs, respondents: info.respondents, bytes: { segments: statSync(files.segments).size, compact: statSync(files.compact).size }, rows, summary }, null, 2) + '\n');
  writeFileSync(
    `${base}.md`,
    [
      `# Opening a dataset in segments, ${date.slice(0, 10)}`,
      '',
      `Load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)} during the runs on ${machine.cores} cores${Math.max(...loads) > machine.cores / 2 ? ': a loaded machine, not a claim' : ''}.`,
      '',
      `ACS PUMS 2024 person file (${info.respondents} respondents): a build of its first 98% of rows with two waves of 1% appended, in segments (3 segments) and --compact; medians of ${runs} run(s), each file read through the page cache before its run, the two alternating. Each open is a child process (bench/lib/open-child.js): lazy = the default open, preload = preload: true, full = verify: 'full' (a serve reload), verify = the default open then verify() (a serve start). Times from openDataset to the first answer, the open in brackets.`,
      '',
      ...markdownTable(header, table).split('\n'),
      '',
    ].join('\n'),
  );
}
for (const path of Object.values(files)) rmSync(path, { force: true });
