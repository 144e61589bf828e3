#!/usr/bin/env node
// `npm run bench`: crosstab peers on real survey data (see bench/README.md).
//   node --expose-gc bench/run.js [--quick] [--shapes S1,S3] [--peers duckdb,roaring] [--json out.json] [--md out.md]
// For each dataset: parse the CSV once into columns (the JS peers' starting point),
// prepare every peer, then per shape: run every peer once, check that all answers
// agree (throws "peers disagree on S3 cell (r,c): ..."), then warm up and time.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, USAGE } from './lib/args.js';
import { measureBounds } from './lib/bounds.js';
import { kernelReadBandwidth } from './lib/kernel-bandwidth.js';
import { loadBench, loadTables } from './lib/load-bench.js';
import { answerSummary, checkAgreement } from './lib/check.js';
import { loadColumnStore } from './lib/column-store.js';
import { dataset as datasetById } from './lib/datasets.js';
import { describeMachine } from './lib/machine.js';
import {
  boundsLines, fmtBytes, fmtInt, fmtMs, fmtRate, INGEST_HEADER, ingestRows, markdownTable, SHAPE_HEADER, shapeRows, textTable,
} from './lib/report.js';
import { measure, peakRss } from './lib/timing.js';
import { PEERS } from './peers/index.js';
import { SHAPES } from './shapes/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const log = (...args) => console.log(...args);
const banner = (text) => log(`\n${'='.repeat(78)}\n${text}\n${'='.repeat(78)}`);
const loud = (text) => log(`\n!!!!!!!! ${text} !!!!!!!!`);
const seconds = (start) => (performance.now() - start) / 1000;

async function loadPeers(options) {
  const wanted = options.peers ?? PEERS.map((p) => p.name);
  const unknown = wanted.filter((name) => !PEERS.some((p) => p.name === name));
  if (unknown.length) throw new Error(`bench: unknown peer(s) ${unknown.join(', ')} (known: ${PEERS.map((p) => p.name).join(', ')})`);
  const peers = [], skipped = [];
  for (const entry of PEERS.filter((p) => wanted.includes(p.name))) {
    let peer, availability;
    try {
      peer = (await entry.load()).createPeer({ threads: options.duckdbThreads ?? undefined, engineBuild: options.engineBuild });
      availability = await peer.available();
    } catch (error) {
      availability = { ok: false, reason: `loading failed: ${error.message.split('\n')[0]}` };
    }
    if (availability.ok) {
      const { ok, ...info } = availability;
      peers.push({ peer, info });
      log(`peer ${entry.name.padEnd(14)} ok  ${JSON.stringify(info)}`);
    } else {
      skipped.push({ peer: entry.name, reason: availability.reason });
      loud(`SKIPPED peer '${entry.name}': ${availability.reason}`);
    }
  }
  if (peers.length === 0) throw new Error('bench: no peer is available');
  return { peers, skipped };
}

/** The shape as peers run it: S5's rows replaced by the sample. */
function runnable(shape) {
  if (!shape.sampleIndexes) return { ...shape, rowIndexes: null, fullCells: shape.rows.length * shape.columns.length };
  return {
    ...shape,
    rows: shape.sampleIndexes.map((i) => shape.rows[i]),
    rowIndexes: shape.sampleIndexes,
    fullRows: shape.rows.length,
    fullCells: shape.rows.length * shape.columns.length,
  };
}

function contestantsFor(peers, shape, options) {
  return peers.flatMap(({ peer }) => {
    const variants = peer.variantsFor ? peer.variantsFor(shape) : [null];
    if (variants.length === 0) return [];
    const chosen = options.variants ? variants : variants.slice(0, 1);
    return chosen.map((variant) => ({
      name: options.variants && variant ? `${peer.name}:${variant}` : peer.name,
      peer,
      variant,
    }));
  });
}

async function benchShape(shape, peers, options, skipped) {
  const run = runnable(shape);
  const cells = run.rows.length * run.columns.length;
  banner(`${shape.id}  ${shape.title}`);
  log(`base ${shape.base.text}; ${fmtInt(run.rows.length)} x ${fmtInt(run.columns.length)} = ${fmtInt(cells)} cells per run`);
  if (run.rowIndexes) log(`SAMPLED: ${run.rows.length} of ${run.fullRows} rows (every ${run.fullRows / run.rows.length}th) x all ${run.columns.length} columns; cells/s is extrapolated to the full ${fmtInt(run.fullCells)} cells`);

  const contestants = contestantsFor(peers, run, options);
  const answers = [];
  for (const contestant of contestants) {
    const start = performance.now();
    let answer;
    try {
      answer = await contestant.peer.run(run, contestant.variant);
    } catch (error) {
      // A peer that cannot answer is reported, not fatal; a wrong answer is fatal (below).
      skipped.push({ peer: contestant.name, shape: shape.id, reason: `run failed: ${error.message.split('\n')[0]}` });
      loud(`SKIPPED '${contestant.name}' on ${shape.id}: run failed: ${error.stack}`);
      continue;
    }
    const firstRunMs = performance.now() - start;
    answers.push({ contestant, answer, firstRunMs });
    log(`  answered: ${contestant.name.padEnd(26)} first run ${fmtMs(firstRunMs).padStart(8)} ms  (${answer.method})`);
  }
  if (answers.length === 0) throw new Error(`bench: no peer answered ${shape.id}`);
  const reference = answers[0];
  for (const other of answers.slice(1)) {
    checkAgreement(run, { peer: reference.contestant.name, answer: reference.answer }, { peer: other.contestant.name, answer: other.answer });
  }
  const summary = answerSummary(reference.answer);
  log(`  CHECKED: ${answers.length} answers agree on all ${fmtInt(cells)} cells (weighted 1e-9 relative, respondents exact); ` +
    `${fmtInt(summary.nonEmptyCells)} non-empty, total weight ${fmtInt(Math.round(summary.weightedTotal))}, total respondents ${fmtInt(summary.respondentsTotal)}`);

  const reps = options.reps ?? (options.quick ? shape.reps.quick : shape.reps.full);
  const warmup = options.quick ? shape.warmup.quick : shape.warmup.full;
  const budgetMs = options.quick ? 5000 : 20000;
  const results = [];
  for (const { contestant, answer, firstRunMs } of answers) {
    const timing = await measure(() => contestant.peer.run(run, contestant.variant), { warmup, reps, budgetMs });
    const cellsPerSec = cells / (timing.median / 1000);
    // A latency shape is also timed back to back (no collection between runs, caches warm).
    const backToBack = shape.metric === 'latency' ? await measure(() => contestant.peer.run(run, contestant.variant), { warmup: 0, reps: reps * 5, budgetMs, collectEach: false }) : undefined;
    results.push({
      ...(backToBack ? { backToBack } : {}),
      contestant: contestant.name,
      peer: contestant.peer.name,
      method: answer.method,
      firstRunMs,
      ...timing,
      cellsPerSec,
      sql: answer.sql,
    });
    log(`  timed:    ${contestant.name.padEnd(26)} median ${fmtMs(timing.median).padStart(8)} ms  (${timing.reps} reps, ${fmtRate(cellsPerSec)} cells/s)`);
    if (backToBack) log(`  back to back: ${contestant.name.padEnd(22)} median ${fmtMs(backToBack.median).padStart(8)} ms  (${backToBack.reps} reps, no GC between them)`);
  }
  const best = Math.min(...results.map((r) => r.median));
  for (const r of results) r.ratioToBest = r.median / best;
  log(`\n${textTable(SHAPE_HEADER, shapeRows({ results }))}`);
  const record = {
    id: shape.id,
    dataset: shape.dataset,
    title: shape.title,
    metric: shape.metric,
    base: shape.base.text,
    rows: shape.rows.length,
    columns: shape.columns.length,
    cellsPerRun: cells,
    sampled: run.rowIndexes ? { rowsRun: run.rows.length, fullRows: run.fullRows, fullCells: run.fullCells, rowIndexes: run.rowIndexes, note: 'cells/s measured on the sampled rows x all columns, extrapolated to the full table' } : null,
    codes: shape.rows.length * shape.columns.length <= 300 ? { rows: shape.rows.map((c) => c.text), columns: shape.columns.map((c) => c.text) } : undefined,
    check: { agreed: answers.map((a) => a.contestant.name), reference: reference.contestant.name, ...summary },
    repsRequested: reps,
    results,
  };
  if (record.sampled) log(fullTableLine(record));
  return record;
}

/** Ingest in a fresh child process per peer: seconds and peak RSS. */
function isolatedIngest(peers, datasetId, options) {
  const out = [];
  for (const { peer } of peers) {
    const args = ['--expose-gc', join(here, 'lib', 'ingest-child.js'), peer.name, datasetId];
    if (options.duckdbThreads) args.push(String(options.duckdbThreads));
    log(`  ingest (child process): ${peer.name} ${datasetId} ...`);
    let result;
    try {
      const stdout = execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
      result = JSON.parse(stdout.trim().split('\n').pop());
    } catch (error) {
      result = { peer: peer.name, dataset: datasetId, skipped: `ingest child failed: ${error.message.split('\n')[0]}` };
      loud(`ingest of '${peer.name}' failed: ${error.message.split('\n')[0]}`);
    }
    result.how = peer.usesColumnStore ? 'child process: parse CSV.gz + build index' : 'child process: load CSV.gz';
    out.push(result);
    if (!result.skipped) log(`    ${result.seconds.toFixed(1)} s, peak RSS ${fmtBytes(result.peakRssBytes)} (RSS before ${fmtBytes(result.baselineRssBytes)})`);
  }
  return out;
}

function summaryTable(shapes) {
  const names = [...new Set(shapes.flatMap((s) => s.results.map((r) => r.contestant)))];
  // A latency shape has a second column: its runs back to back (caches warm).
  const warm = shapes.filter((s) => s.results.some((r) => r.backToBack));
  const rows = names.map((name) => [name, ...shapes.map((s) => {
    const r = s.results.find((x) => x.contestant === name);
    return r ? `${fmtMs(r.median)} (${r.ratioToBest.toFixed(1)}x)` : '-';
  }), ...warm.map((s) => {
    const r = s.results.find((x) => x.contestant === name)?.backToBack;
    const best = Math.min(...s.results.filter((x) => x.backToBack).map((x) => x.backToBack.median));
    return r ? `${fmtMs(r.median)} (${(r.median / best).toFixed(1)}x)` : '-';
  })]);
  return [['peer', ...shapes.map((s) => `${s.id} ms`), ...warm.map((s) => `${s.id} back to back ms`)], rows];
}

const fullTableLine = (shape) => `At these rates the full ${fmtInt(shape.sampled.fullCells)}-cell table would take: ` +
  shape.results.map((r) => `${r.contestant} ~${(shape.sampled.fullCells / r.cellsPerSec).toFixed(0)} s`).join(', ') +
  ' (linear extrapolation: pessimistic for one-pass-scan and duckdb, whose per-respondent work is shared by more rows in the full table).';

function markdown(report) {
  const m = report.machine;
  const lines = [
    `# crosstab peers benchmark, ${report.date.slice(0, 10)}`,
    '',
    `Command: \`${report.command}\``,
    '',
    '## Machine',
    '',
    `- CPU: ${m.cpuModel}, ${m.cores} cores; memory ${fmtBytes(m.memoryBytes)}; ${m.platform}`,
    `- Node ${m.node} (V8 ${m.v8}); load average at start ${m.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}${report.loadAverageAtEnd ? `, at the end ${report.loadAverageAtEnd.map((x) => x.toFixed(2)).join(' ')}` : ''}`,
    `- Peers: ${report.peers.map((p) => `${p.name}${p.info ? ` ${JSON.stringify(p.info)}` : ''}`).join('; ')}`,
    ...report.engineBuilds.map((b) => `- Engine dataset ${b.dataset}: built ${b.engineBuild === 'default' ? 'as a user gets it (no range-index option)' : 'with --range-index on the ranged columns'} in ${b.buildSeconds.toFixed(1)} s${b.versusNone ? ' (best of 2)' : ''}, ${fmtBytes(b.bytes)}; range index on ${b.rangeIndex.length > 0 ? b.rangeIndex.join(', ') : 'no variable'}` +
      (b.versusNone ? `; the same input with --range-index none, builds taking turns: ${b.versusNone.none.map((x) => x.seconds.toFixed(1)).join(' / ')} s, ${fmtBytes(b.versusNone.none[0].bytes)} (default: ${b.versusNone.default.map((x) => x.seconds.toFixed(1)).join(' / ')} s)` : '')),
    ...report.skipped.map((s) => `- **SKIPPED** ${s.peer}${s.dataset ? ` on ${s.dataset}` : ''}${s.shape ? ` on ${s.shape}` : ''}: ${s.reason}`),
    '',
    '## Physical bounds',
    '',
    ...boundsLines(report.bounds).map((l) => `- ${l}`),
    '',
    '## Summary: median ms (x best)',
    '',
    markdownTable(...summaryTable(report.shapes)),
    '',
    '## Ingest (ACS/GSS CSV.gz to the peer\'s queryable form)',
    '',
    markdownTable(INGEST_HEADER, ingestRows(report.ingest)),
    '',
  ];
  if (report.load) {
    const tables = loadTables(report.load);
    lines.push(
      '## Load: build, open, cold query', '',
      'Child processes; peak RSS is VmHWM (Node included), worker threads included. Build and DuckDB load figures are the best of the runs (the ACS CSV.gz build and DuckDB take turns, 3 each); open and cold-query figures medians.', '',
      markdownTable(...tables.versus), '', markdownTable(...tables.open), '',
      `\`${report.load.coldQuery.command}\` from a cold process, end to end: median ${report.load.coldQuery.median.toFixed(0)} ms (min ${report.load.coldQuery.min.toFixed(0)} ms, ${report.load.coldQuery.reps} runs).`, '',
      markdownTable(...tables.builds), '',
    );
  }
  for (const shape of report.shapes) {
    lines.push(`## ${shape.id}: ${shape.title}`, '');
    lines.push(`Base \`${shape.base}\`; ${fmtInt(shape.cellsPerRun)} cells per run. Checked: ${shape.check.agreed.join(', ')} agree on every cell; ` +
      `${fmtInt(shape.check.nonEmptyCells)} non-empty, total respondents ${fmtInt(shape.check.respondentsTotal)}.`);
    if (shape.sampled) lines.push('', `**Sampled**: ${shape.sampled.rowsRun} of ${shape.sampled.fullRows} rows x all columns; cells/s is measured on the sample.`);
    lines.push('', markdownTable(SHAPE_HEADER, shapeRows(shape)), '');
    if (shape.results.some((r) => r.backToBack)) lines.push(...backToBackLines(shape), '');
    if (shape.sampled) lines.push(fullTableLine(shape), '');
  }
  return lines.join('\n');
}

/** The latency shape's second timing: runs back to back, no collection between them (caches warm). */
function backToBackLines(shape) {
  const timed = shape.results.filter((r) => r.backToBack);
  const best = Math.min(...timed.map((r) => r.backToBack.median));
  return [
    'Back to back (the same runs with no garbage collection between them, so the caches stay warm, as in a server answering a stream of queries; the table above collects before each run and so starts each one cold):', '',
    markdownTable(['peer', 'median ms', 'min ms', 'reps', 'x best'], timed.map((r) => [r.contestant, fmtMs(r.backToBack.median), fmtMs(r.backToBack.min), String(r.backToBack.reps), `${(r.backToBack.median / best).toFixed(2)}x`])),
  ];
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.help) { log(USAGE); return; }
  if (!globalThis.gc) log('note: run with node --expose-gc so the harness can collect garbage between repetitions');
  const started = performance.now();
  const machine = describeMachine();
  banner(`crosstab peers benchmark ${options.quick ? '(--quick) ' : ''}on ${machine.cpuModel}, ${machine.cores} cores, ${fmtBytes(machine.memoryBytes)}, Node ${machine.node}`);

  const selected = SHAPES.filter((s) => !options.shapes || options.shapes.includes(s.id));
  if (options.shapes) {
    const unknown = options.shapes.filter((id) => !SHAPES.some((s) => s.id === id));
    if (unknown.length) throw new Error(`bench: unknown shape(s) ${unknown.join(', ')} (known: ${SHAPES.map((s) => s.id).join(', ')})`);
  }

  let bounds = null;
  if (options.bounds) {
    bounds = measureBounds(datasetById('acs').rows);
    bounds.kernelRead = await kernelReadBandwidth();
    log('\nphysical bounds of this machine:');
    for (const line of boundsLines(bounds)) log(`  ${line}`);
  }

  const { peers, skipped } = await loadPeers(options);
  const ingest = [];
  const shapes = [];
  const engineBuilds = [];
  // GSS first (small), then ACS; a dataset is loaded only if a selected shape needs it.
  for (const datasetId of ['gss', 'acs']) {
    const specs = selected.filter((s) => s.dataset === datasetId);
    if (specs.length === 0) continue;
    const dataset = datasetById(datasetId);
    banner(`dataset ${datasetId}: ${dataset.path}`);
    const parseStart = performance.now();
    const store = await loadColumnStore(dataset);
    const parseSeconds = seconds(parseStart);
    log(`parsed ${fmtInt(store.rowCount)} rows into columns in ${parseSeconds.toFixed(1)} s (shared by the JS peers)`);
    const built = specs.map((spec) => spec.build(store, { quick: options.quick, s5Rows: options.s5Rows ?? undefined }));

    const ready = [];
    for (const entry of peers) {
      const { peer } = entry;
      const start = performance.now();
      let details;
      try {
        details = await peer.prepare({ dataset, store: peer.usesColumnStore ? store : null });
      } catch (error) {
        skipped.push({ peer: peer.name, dataset: datasetId, reason: `prepare failed: ${error.message.split('\n')[0]}` });
        loud(`SKIPPED peer '${peer.name}' on ${datasetId}: prepare failed: ${error.stack}`);
        continue;
      }
      ready.push(entry);
      if (peer.name === 'engine' && details?.build?.engineBuild) engineBuilds.push({ dataset: datasetId, ...details.build });
      const prepareSeconds = seconds(start);
      log(`prepared ${peer.name.padEnd(14)} in ${prepareSeconds.toFixed(1)} s${peer.usesColumnStore ? ` (+ ${parseSeconds.toFixed(1)} s shared CSV parse)` : ''}  ${JSON.stringify({ ...details, sql: undefined })}`);
      if (!options.ingest) {
        ingest.push({
          peer: peer.name, dataset: datasetId,
          seconds: prepareSeconds + (peer.usesColumnStore ? parseSeconds : 0),
          peakRssBytes: null, baselineRssBytes: null, details: { ...details, sql: undefined },
          how: peer.usesColumnStore ? 'in-process: shared CSV parse + index build (no isolated memory)' : 'in-process load (no isolated memory)',
        });
      }
    }
    for (const shape of built) shapes.push(await benchShape(shape, ready, options, skipped));
    for (const { peer } of ready) await peer.release(datasetId);
    globalThis.gc?.();
    if (options.ingest && datasetId === 'acs') {
      banner('ingest: ACS CSV.gz to each peer\'s queryable form, one child process per peer');
      ingest.push(...isolatedIngest(peers, 'acs', options));
    }
  }
  for (const { peer } of peers) await peer.close();
  shapes.sort((a, b) => a.id.localeCompare(b.id));
  let load = null;
  if (options.load) {
    banner('load: build per input format, ACS build vs DuckDB load, open to first answer, cold crosstab query (child processes)');
    load = await loadBench({ quick: options.quick, log });
    const tables = loadTables(load);
    for (const table of [tables.versus, tables.open, tables.builds]) log(`\n${textTable(...table)}`);
  }
  if (ingest.length) {
    banner('ingest');
    log(textTable(INGEST_HEADER, ingestRows(ingest)));
  }

  banner('summary: median ms (x best) per shape');
  log(textTable(...summaryTable(shapes)));
  for (const s of skipped) loud(`SKIPPED '${s.peer}'${s.dataset ? ` on ${s.dataset}` : ''}${s.shape ? ` on ${s.shape}` : ''}: ${s.reason}`);
  log(`\nharness peak RSS ${fmtBytes(peakRss())}; total ${seconds(started).toFixed(0)} s`);

  const report = {
    benchmark: 'crosstab-engine peers',
    date: new Date().toISOString(),
    command: `node --expose-gc bench/run.js ${process.argv.slice(2).join(' ')}`.trim(),
    options,
    machine,
    bounds,
    peers: peers.map(({ peer, info }) => ({ name: peer.name, description: peer.description, info })),
    skipped,
    engineBuilds,
    ingest,
    load,
    shapes,
    totalSeconds: seconds(started),
    loadAverageAtEnd: loadavg(),
  };
  for (const [file, text] of [[options.json, () => JSON.stringify(report, null, 1)], [options.md, () => markdown(report)]]) {
    if (!file) continue;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${text()}\n`);
    log(`wrote ${file}`);
  }
}

main().catch((error) => {
  console.error(`\n${error.stack ?? error}`);
  process.exit(1);
});
