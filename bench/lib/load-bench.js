// Getting data in: build rows/s and MB/s per input format, the ACS build beside
// DuckDB's read_csv load (same run, child processes, peak RSS), openDataset to the first
// answer with RSS, and `crosstab query` from a cold process. Every figure is a median of
// child processes; answers are checked against each other before any figure is reported.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dataset as datasetById, repoRoot } from './datasets.js';
import { stats } from './timing.js';

const here = dirname(fileURLToPath(import.meta.url));
const node = (args, options = {}) => execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24, ...options });
const lastJson = (stdout) => JSON.parse(stdout.trim().split('\n').pop());
const QUERY = { base: 'AGEP=18..64', target: 'SCHL=21..24' };

/** Plain CSV and Parquet copies of a CSV.gz, written by DuckDB with the bench's column types. */
async function inputsOf(dataset, dir) {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const text = Object.entries(dataset.columns).filter(([, kind]) => kind === 'text' || kind === 'skip').map(([name]) => `'${name}': 'VARCHAR'`);
  const source = `read_csv('${dataset.path}', header = true${text.length ? `, types = {${text.join(', ')}}` : ''})`;
  const csv = join(dir, `${dataset.id}.csv`);
  const parquet = join(dir, `${dataset.id}.parquet`);
  await duck.run(`COPY (SELECT * FROM ${source}) TO '${csv}' (FORMAT csv, HEADER true)`);
  await duck.run(`COPY (SELECT * FROM ${source}) TO '${parquet}' (FORMAT parquet)`);
  duck.closeSync?.();
  const inputs = [
    { format: 'CSV.gz', path: dataset.path },
    { format: 'CSV', path: csv },
    { format: 'Parquet', path: parquet },
  ];
  if (dataset.id === 'gss') inputs.push({ format: '.zsav', path: join(repoRoot, 'test', 'fixtures', 'formats', 'gss.zsav') });
  return inputs;
}

function buildOnce(input, out, weight) {
  return lastJson(node(['--expose-gc', join(here, 'build-child.js'), input, out, weight]));
}

export async function loadBench({ quick, log }) {
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-load-bench-'));
  const reps = quick ? 1 : 3;
  const record = { builds: [], duckdbLoad: null, open: [], coldQuery: null };
  try {
    // DuckDB's load of the ACS CSV.gz and our build of it take turns (best of `reps` each), so
    // both see the same machine; the other ACS inputs are built once.
    const duckRuns = [];
    for (const id of ['gss', 'acs']) {
      const dataset = datasetById(id);
      for (const input of await inputsOf(dataset, dir)) {
        const runs = [];
        const headline = id === 'acs' && input.format === 'CSV.gz';
        for (let rep = 0; rep < (id === 'acs' && !headline ? 1 : reps); rep++) {
          if (headline) duckRuns.push(lastJson(node(['--expose-gc', join(here, 'ingest-child.js'), 'duckdb', 'acs'])));
          runs.push(buildOnce(input.path, join(dir, `${id}.arrow`), dataset.weight));
        }
        const best = runs.sort((a, b) => a.seconds - b.seconds)[0];
        if (best.respondents !== dataset.rows) throw new Error(`load bench: ${input.format} of ${id} built ${best.respondents} respondents, not ${dataset.rows}: something is off`);
        const inputBytes = statSync(input.path).size;
        const row = { dataset: id, format: input.format, inputBytes, ...best, rowsPerSec: best.respondents / best.seconds, mbPerSec: inputBytes / 1e6 / best.seconds, runs: runs.length };
        record.builds.push(row);
        log(`  build ${id} from ${input.format.padEnd(7)}: ${best.seconds.toFixed(1)} s, ${(row.rowsPerSec / 1e3).toFixed(0)}k rows/s, ${row.mbPerSec.toFixed(1)} MB/s, peak RSS ${(best.peakRssBytes / 1e6).toFixed(0)} MB, output ${(best.bytes / 1e6).toFixed(1)} MB`);
      }
    }
    const duck = duckRuns.sort((a, b) => a.seconds - b.seconds)[0];
    record.duckdbLoad = { ...duck, runs: duckRuns.length };
    log(`  duckdb read_csv load of ACS CSV.gz: ${duck.seconds.toFixed(1)} s, peak RSS ${(duck.peakRssBytes / 1e6).toFixed(0)} MB`);

    // The last build above is ACS from Parquet; rebuild from the CSV.gz for the open figures.
    const acs = datasetById('acs');
    const acsDataset = join(dir, 'acs.arrow');
    buildOnce(acs.path, acsDataset, acs.weight);
    const fileBytes = statSync(acsDataset).size;
    let answer;
    for (const mode of ['lazy', 'preload']) {
      const runs = [];
      for (let rep = 0; rep < (quick ? 3 : 7); rep++) {
        const run = lastJson(node([join(here, 'open-child.js'), acsDataset, QUERY.base, QUERY.target, mode]));
        answer ??= run.answer;
        if (JSON.stringify(run.answer) !== JSON.stringify(answer)) throw new Error('load bench: open answers differ between runs: something is off');
        runs.push(run);
      }
      const median = (key) => stats(runs.map((run) => run[key])).median;
      const row = {
        mode, fileBytes, importMs: median('importMs'), openMs: median('openMs'), firstQueryMs: median('firstQueryMs'), openToAnswerMs: median('openToAnswerMs'),
        rssAfterOpenBytes: median('rssAfterOpenBytes'), rssAfterQueryBytes: median('rssAfterQueryBytes'), reps: runs.length,
      };
      record.open.push(row);
      log(`  openDataset ACS (${mode}): open ${row.openMs.toFixed(1)} ms, first answer ${row.firstQueryMs.toFixed(1)} ms later (open to answer ${row.openToAnswerMs.toFixed(1)} ms); RSS after open ${(row.rssAfterOpenBytes / 1e6).toFixed(0)} MB = ${(row.rssAfterOpenBytes / fileBytes).toFixed(2)}x the ${(fileBytes / 1e6).toFixed(0)} MB file; import ${row.importMs.toFixed(0)} ms`);
    }
    const cli = join(repoRoot, 'dist', 'cli', 'main.js');
    const times = [];
    for (let rep = 0; rep < (quick ? 3 : 9); rep++) {
      const start = performance.now();
      const run = spawnSync(process.execPath, [cli, 'query', acsDataset, '--base', QUERY.base, '--target', QUERY.target, '--json'], { encoding: 'utf8' });
      times.push(performance.now() - start);
      const body = JSON.parse(run.stdout);
      if (run.status !== 0 || body.Results[0].Resps !== answer.respondents) throw new Error(`load bench: crosstab query answered ${run.stdout}${run.stderr}: something is off`);
    }
    record.coldQuery = { ...stats(times), command: `crosstab query ACS --base '${QUERY.base}' --target '${QUERY.target}' --json` };
    log(`  crosstab query ACS, cold process end to end: median ${record.coldQuery.median.toFixed(0)} ms (min ${record.coldQuery.min.toFixed(0)}, ${times.length} runs)`);
    return record;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Markdown/text rows of the load section. */
export function loadTables(record) {
  const mb = (bytes) => (bytes / 1e6).toFixed(0);
  const builds = [
    ['dataset', 'input', 'input MB', 'seconds', 'rows/s', 'MB/s', 'peak RSS MB', 'output MB'],
    record.builds.map((b) => [b.dataset, b.format, (b.inputBytes / 1e6).toFixed(1), b.seconds.toFixed(1), Math.round(b.rowsPerSec).toLocaleString('en-US'), b.mbPerSec.toFixed(1), mb(b.peakRssBytes), (b.bytes / 1e6).toFixed(1)]),
  ];
  const acsCsvGz = record.builds.find((b) => b.dataset === 'acs' && b.format === 'CSV.gz');
  const duck = record.duckdbLoad;
  const versus = [
    ['ACS CSV.gz', 'seconds', 'peak RSS MB'],
    [
      ['crosstab build', acsCsvGz.seconds.toFixed(1), mb(acsCsvGz.peakRssBytes)],
      ['DuckDB read_csv load', duck.seconds.toFixed(1), mb(duck.peakRssBytes)],
      ['ratio (build / DuckDB)', `${(acsCsvGz.seconds / duck.seconds).toFixed(1)}x`, `${(acsCsvGz.peakRssBytes / duck.peakRssBytes).toFixed(2)}x`],
    ],
  ];
  const open = [
    ['openDataset ACS', 'open ms', 'first answer ms', 'open to answer ms', 'RSS after open MB', 'x file size', 'package import ms'],
    record.open.map((o) => [o.mode, o.openMs.toFixed(1), o.firstQueryMs.toFixed(1), o.openToAnswerMs.toFixed(1), mb(o.rssAfterOpenBytes), (o.rssAfterOpenBytes / o.fileBytes).toFixed(2), o.importMs.toFixed(0)]),
  ];
  return { builds, versus, open };
}
