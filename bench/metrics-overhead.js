#!/usr/bin/env node
// What the Prometheus metrics cost on the request path, in-process: the REST handler answering
// POST /v1/crosstab (bundled GSS, a key file, a usage sink that keeps nothing, the cell cache
// answering the repeated query) with and without `metrics: new ServiceMetrics()`, alternating
// for --rounds rounds of --requests sequential requests each; medians of the CPU time and wall
// time per request. No sockets, no disk: only the handler's own work, where a metrics cost
// cannot hide behind HTTP parsing or an fsync. (npm run bench:http measures the same servers
// over HTTP; on a loaded machine its spread is larger than this difference.)
//
//   node bench/metrics-overhead.js [--requests 20000] [--rounds 7]   (after npm run build)
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { openDataset } = await import(join(root, 'dist', 'index.js'));
const { addApiKey, createCrosstabHandler, ServiceMetrics } = await import(join(root, 'dist', 'http', 'index.js'));

const { values: options } = parseArgs({ options: { requests: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '7' } } });
const requests = Number(options.requests);
const rounds = Number(options.rounds);
const work = mkdtempSync(join(tmpdir(), 'crosstab-metrics-bench-'));
try {
  const dataset = await openDataset(join(root, 'datasets', 'build', 'gss.arrow'));
  const keys = join(work, 'keys.json');
  const { apiKey } = await addApiKey(keys, { surveys: ['GSS'], groups: ['_ALL_'], name: 'bench' });
  const sink = { record: async () => {}, close: async () => {} };
  const plain = await createCrosstabHandler({ datasets: [dataset], keys, usage: sink });
  const metrics = new ServiceMetrics({ datasets: () => [dataset] });
  const measured = await createCrosstabHandler({ datasets: [dataset], keys, usage: sink, metrics });
  const request = {
    method: 'POST',
    path: '/v1/crosstab',
    headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey },
    body: JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2', 'degree=3..4'] }),
  };
  const run = async (handler) => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < requests; i++) {
      const answer = await handler.handle(request);
      if (answer.status !== 200) throw new Error(`status ${answer.status}: ${answer.body}`);
    }
    const used = process.cpuUsage(cpu);
    return { cpuMicros: (used.user + used.system) / requests, wallMicros: ((performance.now() - started) * 1000) / requests };
  };
  await run(plain);
  await run(measured);
  const results = { without: [], with: [] };
  for (let round = 0; round < rounds; round++) {
    // Alternating order each round: a neighbour's burst slows both alike.
    const order = round % 2 === 0 ? ['without', 'with'] : ['with', 'without'];
    for (const name of order) results[name].push(await run(name === 'with' ? measured : plain));
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const summary = Object.fromEntries(Object.entries(results).map(([name, list]) => [name, { cpuMicros: median(list.map((r) => r.cpuMicros)), wallMicros: median(list.map((r) => r.wallMicros)) }]));
  const billed = (await metrics.registry.getSingleMetricAsString('crosstab_billed_calls_total')).match(/ (\d+)$/m)?.[1];
  console.log(JSON.stringify({ date: new Date().toISOString(), node: process.version, loadAverage: loadavg().map((v) => Number(v.toFixed(2))), requests, rounds, ...summary, ratioCpu: Number((summary.with.cpuMicros / summary.without.cpuMicros).toFixed(3)), ratioWall: Number((summary.with.wallMicros / summary.without.wallMicros).toFixed(3)), billedCounted: Number(billed), billedSent: requests * (rounds + 1) }, null, 2));
  await plain.close();
  await measured.close();
  await dataset.close();
} finally {
  rmSync(work, { recursive: true, force: true });
}
