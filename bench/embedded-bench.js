#!/usr/bin/env node
// `npm run bench:embedded` (also a step of `npm run bench`): the library used in-process, as
// a Node service embeds it. Random bases and targets (seeded) on ACS PUMS 2024, kept at 1, 8
// and 32 calls in flight for a fixed time, with the dataset opened `inline` and `pool`:
// calls/s, latency p50/p99, the event-loop delay of the process meanwhile (p50/p99/max, from
// perf_hooks.monitorEventLoopDelay: what a host's timers and health checks would suffer),
// how many times a 10 ms setInterval of the "host" fired against how many it should have,
// and RSS / kernel memory at the end of each run. Before anything is timed, the inline and
// pool datasets answer the same 200 random queries, which must agree cell for cell.
// Then a soak (bench/lib/soak.js): an `auto` dataset kept at --soak-in-flight calls for
// --soak-seconds (env CROSSTAB_SOAK_SECONDS; 150 by default, 0 skips it), with a series of
// calls/s, latency, RSS, V8 heap, kernel memory and event-loop delay every --soak-every s.
//   node bench/embedded-bench.js [--quick] [--seconds N] [--in-flight 1,8,32] [--targets N]
//                                [--executions inline,pool,auto] [--soak-seconds N]
//                                [--soak-in-flight N] [--soak-every N] [--dataset FILE.arrow]
//                                [--json out.json] [--md out.md] [--no-write]
// Results go to bench/results/DATE-embedded.{json,md} unless --json/--md name other files or
// --no-write is given. Without --dataset it builds ACS into the temp folder once (cached),
// or falls back to GSS when the ACS file is absent.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { dataDir, repoRoot } from './lib/datasets.js';
import { describeMachine } from './lib/machine.js';
import { mulberry32 } from './lib/prng.js';
import { fmtInt, markdownTable, textTable } from './lib/report.js';
import { soak } from './lib/soak.js';
import { abortLatency } from './lib/abort-latency.js';

const args = process.argv.slice(2);
const flag = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const quick = args.includes('--quick');
const seconds = Number(flag('--seconds') ?? (quick ? 3 : 20));
const inFlightLevels = (flag('--in-flight') ?? '1,8,32').split(',').map(Number);
const targetsPerCall = Number(flag('--targets') ?? 2);
const executions = (flag('--executions') ?? 'inline,pool,auto').split(',');
const soakSeconds = Number(flag('--soak-seconds') ?? process.env.CROSSTAB_SOAK_SECONDS ?? (quick ? 10 : 150));
const soakInFlight = Number(flag('--soak-in-flight') ?? 32);
const soakEvery = Number(flag('--soak-every') ?? (soakSeconds >= 60 ? 5 : 1));
const api = await import(join(repoRoot, 'dist', 'index.js'));

async function datasetPath() {
  const given = flag('--dataset');
  if (given) return { path: given, name: given };
  const acs = join(dataDir(), 'acs_pums_2024_person.csv.gz');
  const cache = join(tmpdir(), 'crosstab-bench-embedded');
  mkdirSync(cache, { recursive: true });
  if (existsSync(acs)) {
    const out = join(cache, 'acs.arrow');
    if (!existsSync(out)) await api.buildDataset(acs, { weights: ['PWGTP'], survey: 'ACS', out });
    return { path: out, name: 'ACS PUMS 2024 (2,736,891 respondents)' };
  }
  console.warn(`${acs} is absent: the benchmark runs on GSS instead, whose figures are not comparable.`);
  const out = join(cache, 'gss.arrow');
  if (!existsSync(out)) await api.buildDataset(join(repoRoot, 'datasets', 'gss_1972_2024_sub.csv.gz'), { weights: ['wtssps'], survey: 'GSS', out });
  return { path: out, name: 'GSS 1972-2024 subset' };
}

/** Random queries over the dataset's variables: single values, value lists and numeric ranges, ANDed for bases. */
function queryMaker(info, seed) {
  const random = mulberry32(seed);
  const pick = (items) => items[Math.floor(random() * items.length)];
  const variables = info.variables.filter((v) => v.values && v.values.length > 1);
  const quote = (value) => api.valueExpression('X', value).slice(2);
  const condition = () => {
    const variable = pick(variables);
    const values = variable.values.map((v) => v.value);
    if (variable.kind === 'numeric' && random() < 0.4) {
      const numbers = values.map(Number).sort((a, b) => a - b);
      const lo = pick(numbers);
      return `${variable.name}=${lo}..${lo + Math.max(1, Math.round((numbers.at(-1) - numbers[0]) * random() * 0.3))}`;
    }
    const count = 1 + Math.floor(random() * 3);
    return `${variable.name}=${Array.from({ length: count }, () => quote(pick(values))).join(',')}`;
  };
  return () => ({
    base: random() < 0.2 ? '*' : random() < 0.6 ? condition() : `${condition()} AND ${condition()}`,
    targets: Array.from({ length: targetsPerCall }, () => (random() < 0.3 ? `${condition()} AND ${condition()}` : condition())),
  });
}

async function checkAgreement(inline, pooled, next) {
  for (let i = 0; i < 200; i++) {
    const query = next();
    const [a, b] = [await inline.crosstab(query), await pooled.crosstab(query)];
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`something is off: inline and pool disagree on ${JSON.stringify(query)}`);
  }
}

const percentile = (sorted, p) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]);

/** Keeps `inFlight` calls running for `seconds`; returns throughput, latencies and the event loop's delay. */
async function run(ds, inFlight, next) {
  const latencies = [];
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let ticks = 0;
  const interval = setInterval(() => ticks++, 10);
  histogram.enable();
  const started = performance.now();
  const until = started + seconds * 1000;
  const lane = async () => {
    while (performance.now() < until) {
      const query = next();
      const t = performance.now();
      await ds.crosstab(query);
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const elapsed = performance.now() - started;
  histogram.disable();
  clearInterval(interval);
  latencies.sort((a, b) => a - b);
  return {
    calls: latencies.length,
    callsPerSecond: latencies.length / (elapsed / 1000),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    loopDelayP50Ms: histogram.percentile(50) / 1e6,
    loopDelayP99Ms: histogram.percentile(99) / 1e6,
    loopDelayMaxMs: histogram.max / 1e6,
    timerFired: ticks,
    timerExpected: Math.floor(elapsed / 10),
    rssMB: process.memoryUsage().rss / 1e6,
  };
}

const machine = describeMachine();
const { path, name } = await datasetPath();
// preload: every buffer read (and checked) at open, so runs measure the steady state.
const opened = new Map();
for (const execution of new Set(['inline', 'pool', ...executions])) opened.set(execution, await api.openDataset(path, { execution, cellCache: 0, preload: true }));
await checkAgreement(opened.get('inline'), opened.get('pool'), queryMaker(opened.get('inline').info, 7));

const results = [];
for (const execution of executions) {
  const ds = opened.get(execution);
  for (const inFlight of inFlightLevels) {
    const next = queryMaker(ds.info, 1000 + inFlight);
    for (let i = 0; i < 50; i++) await ds.crosstab(next()); // warm-up
    results.push({ execution, inFlight, ...(await run(ds, inFlight, next)) });
  }
}

const header = ['execution', 'in flight', 'calls', 'calls/s', 'p50 ms', 'p99 ms', 'loop delay p50 ms', 'p99 ms', 'max ms', '10 ms timer fired', 'RSS'];
const rows = results.map((r) => [
  r.execution, String(r.inFlight), fmtInt(r.calls), r.callsPerSecond.toFixed(0), r.p50Ms.toFixed(2), r.p99Ms.toFixed(2),
  r.loopDelayP50Ms.toFixed(1), r.loopDelayP99Ms.toFixed(1), r.loopDelayMaxMs.toFixed(1), `${r.timerFired}/${r.timerExpected}`, `${r.rssMB.toFixed(0)} MB`,
]);
const title = `Embedded crosstab() calls, ${targetsPerCall} random targets each, ${seconds} s per row, on ${name}`;
console.log(`${title}\n\n${textTable(header, rows)}`);
const ratios = inFlightLevels.map((inFlight) => {
  const of = (execution) => results.find((r) => r.execution === execution && r.inFlight === inFlight)?.callsPerSecond;
  return { inFlight, poolOverInline: of('pool') / of('inline'), autoOverInline: of('auto') / of('inline') };
});
const ratioText = ratios.map((r) => `${r.inFlight} in flight: pool/inline ${r.poolOverInline.toFixed(2)}x, auto/inline ${r.autoOverInline.toFixed(2)}x`).join('; ');
console.log(`\ncalls/s ratios: ${ratioText}`);

// Abort: a 2,000-target call aborted 5 ms after it starts, inline and on the pool.
const aborts = [];
for (const execution of ['inline', 'pool']) aborts.push({ execution, ...(await abortLatency({ ds: opened.get(execution), next: queryMaker(opened.get(execution).info, 5), repeats: quick ? 5 : 20 })) });
const abortHeader = ['execution', 'aborts', 'targets', 'outcomes', 'abort → rejected p50 ms', 'max ms', 'abort → next call answered p50 ms', 'max ms'];
const abortRows = aborts.map((a) => [a.execution, String(a.repeats), fmtInt(a.targets), a.outcomes.join(' '), a.rejectedP50Ms.toFixed(2), a.rejectedMaxMs.toFixed(2), a.nextAnsweredP50Ms.toFixed(2), a.nextAnsweredMaxMs.toFixed(2)]);
console.log(`\n${textTable(abortHeader, abortRows)}`);

let soaked;
if (soakSeconds > 0) {
  const ds = opened.get('auto') ?? (await api.openDataset(path, { execution: 'auto', cellCache: 0, preload: true }));
  console.log(`\nsoak: ${soakInFlight} calls in flight on an auto dataset for ${soakSeconds} s, a sample every ${soakEvery} s`);
  soaked = await soak({ ds, next: queryMaker(ds.info, 99), seconds: soakSeconds, inFlight: soakInFlight, everySeconds: soakEvery, kernelMemory: api.kernelMemoryUsage });
  await ds.close();
}
for (const ds of opened.values()) await ds.close();
await api.closePool();

const soakHeader = ['at s', 'calls/s', 'p50 ms', 'p99 ms', 'loop p50 ms', 'loop p99 ms', 'loop max ms', 'RSS MB', 'heap used MB', 'heap total MB', 'kernel allocated MB', 'kernel reserved MB'];
const soakRows = (soaked?.series ?? []).map((s) => [
  s.atSeconds.toFixed(0), s.callsPerSecond.toFixed(0), s.p50Ms.toFixed(2), s.p99Ms.toFixed(2), s.loopDelayP50Ms.toFixed(1), s.loopDelayP99Ms.toFixed(1), s.loopDelayMaxMs.toFixed(1),
  s.rssMB.toFixed(0), s.heapUsedMB.toFixed(1), s.heapTotalMB.toFixed(1), s.kernelAllocatedMB.toFixed(1), s.kernelReservedMB.toFixed(0),
]);
const soakSummary = soaked
  ? `${fmtInt(soaked.summary.calls)} calls (${soaked.summary.callsPerSecond.toFixed(0)}/s, ${soaked.summary.failures} failed); after the first sample RSS ${signed(soaked.summary.rssGrowthMB)} MB, heap used ${signed(soaked.summary.heapUsedGrowthMB)} MB, kernel allocated ${signed(soaked.summary.kernelAllocatedGrowthMB)} MB; event-loop delay p99 per interval: median ${soaked.summary.medianIntervalLoopDelayP99Ms.toFixed(1)} ms, worst ${soaked.summary.worstIntervalLoopDelayP99Ms.toFixed(1)} ms (target under 20 ms)`
  : 'skipped';
if (soaked) console.log(`\n${textTable(soakHeader, soakRows)}\n\nsoak: ${soakSummary}`);

function signed(x) {
  return `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;
}

const date = new Date().toISOString();
const write = !args.includes('--no-write');
const json = flag('--json') ?? (write ? join(repoRoot, 'bench', 'results', `${date.slice(0, 10)}-embedded.json`) : undefined);
const md = flag('--md') ?? (write ? join(repoRoot, 'bench', 'results', `${date.slice(0, 10)}-embedded.md`) : undefined);
const report = { date, command: `node bench/embedded-bench.js ${args.join(' ')}`.trim(), machine, dataset: name, seconds, targetsPerCall, results, ratios, aborts, soak: soaked ? { seconds: soakSeconds, inFlight: soakInFlight, everySeconds: soakEvery, execution: 'auto', ...soaked } : null };
if (json) {
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`wrote ${json}`);
}
if (md) {
  const facts = `${date.slice(0, 10)}, ${machine.cores} cores (${machine.cpuModel}), ${(machine.memoryBytes / 1e9).toFixed(1)} GB, load average at start ${machine.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}, Node ${machine.node}, ${machine.platform}.`;
  const soakSection = soaked ? `\n## Soak: ${soakInFlight} calls in flight, \`auto\`, ${soakSeconds} s\n\n${markdownTable(soakHeader, soakRows)}\n\n${soakSummary}.\n` : '';
  writeFileSync(md, `# ${title}\n\n${facts}\n\n${markdownTable(header, rows)}\n\ncalls/s ratios: ${ratioText}.\n\n## Abort: a ${fmtInt(aborts[0].targets)}-target call aborted ${aborts[0].afterMs} ms after it starts\n\n${markdownTable(abortHeader, abortRows)}\n${soakSection}`);
  console.log(`wrote ${md}`);
}
