// ServiceMetrics and listenMetrics() in-process over real HTTP: a real key file, a real
// ledger, the real GSS dataset. The counters equal the requests sent and the ledger lines;
// /healthz, /readyz (each check named, 503 while one fails) and /metrics in the Prometheus
// text format; connections refused per address; engineStats() for an embedding service.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { engineStats, openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, listenMetrics, ServiceMetrics, type RunningMetricsServer, type RunningServer } from '../../src/http/index.js';
import { rawGet } from './raw-http.js';
import { makeKeyFile, readLedger, tempDir, type TestKeys } from './support.js';

const paths = inject('testDatasets');
const PROMTOOL = '/usr/bin/promtool';
let gss: Dataset;
let keys: TestKeys;
let ledgerPath: string;
let metrics: ServiceMetrics;
let server: RunningServer;
let operator: RunningMetricsServer;
let storeProblem: string | undefined;

/** The value of one series in Prometheus text (0 when absent). */
function valueOf(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const scrape = async (): Promise<string> => (await fetch(`${operator.url}/metrics`)).text();

beforeAll(async () => {
  gss = await openDataset(paths.gss);
  const dir = tempDir();
  keys = await makeKeyFile(dir);
  ledgerPath = join(dir, 'usage.ndjson');
  metrics = new ServiceMetrics({ datasets: () => [gss] });
  const handler = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: ledgerPath, metrics, bodyTimeoutMs: 300 });
  server = await listen(handler, { port: 0, maxConnectionsPerAddress: 4, metrics });
  operator = await listenMetrics({ port: 0, metrics, readiness: { datasets: () => undefined, store: () => storeProblem } });
});
afterAll(async () => {
  await operator?.close();
  await server?.close();
  await gss?.close();
});

describe('ServiceMetrics over real HTTP', () => {
  it('counts requests by operation, status and code, and billed calls equal to the ledger lines', async () => {
    const before = await scrape();
    const post = (key: string, body: string): Promise<Response> =>
      fetch(`${server.url}/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': key }, body });
    const body = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2'] });
    for (let i = 0; i < 7; i++) expect((await post(keys.all, body)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await post(keys.revoked, body)).status).toBe(401);
    expect((await post(keys.all, '{')).status).toBe(400);
    expect((await fetch(`${server.url}/docs`)).status).toBe(200);
    expect((await fetch(`${server.url}/nowhere`)).status).toBe(404);
    const text = await scrape();
    const delta = (series: string): number => valueOf(text, series) - valueOf(before, series);
    expect(delta('crosstab_http_requests_total{operation="crosstab",status="200",code=""}')).toBe(7);
    expect(delta('crosstab_http_requests_total{operation="crosstab",status="401",code="unauthorized"}')).toBe(2);
    expect(delta('crosstab_http_requests_total{operation="crosstab",status="400",code="invalid_json"}')).toBe(1);
    expect(delta('crosstab_http_requests_total{operation="docs",status="200",code=""}')).toBe(1);
    expect(delta('crosstab_http_requests_total{operation="none",status="404",code="not_found"}')).toBe(1);
    expect(delta('crosstab_http_request_duration_seconds_count{operation="crosstab"}')).toBe(10);
    expect(delta('crosstab_failed_keys_total')).toBe(2);
    const ledger = readLedger(ledgerPath).length;
    expect(valueOf(text, 'crosstab_billed_calls_total{operation="crosstab",survey="GSS"}')).toBe(ledger);
    expect(valueOf(text, 'crosstab_usage_write_batch_records_sum')).toBe(ledger);
    // The first query asked the engine, the six repeats were answered from the cell cache.
    expect(valueOf(text, 'crosstab_cell_cache_misses_total{survey="GSS"}')).toBe(1);
    expect(valueOf(text, 'crosstab_cell_cache_hits_total{survey="GSS"}')).toBe(6);
    expect(valueOf(text, 'crosstab_dataset_respondents{survey="GSS"}')).toBe(75699);
    expect(valueOf(text, 'crosstab_memory_bytes{kind="kernel_reserved"}')).toBeGreaterThan(0);
  });

  it('counts a body that never arrives as a body timeout', async () => {
    const before = valueOf(await scrape(), 'crosstab_body_timeouts_total');
    const { connect } = await import('node:net');
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`POST /v1/crosstab HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nService-Engine-Authorizer: ${keys.all}\r\nContent-Length: 50\r\n\r\n{`);
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.once('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(valueOf(await scrape(), 'crosstab_body_timeouts_total') - before).toBe(1);
  });

  it('counts open connections and those refused per address', async () => {
    // fetch's kept-alive connections of the tests before may still be open.
    const before = await scrape();
    const open = valueOf(before, 'crosstab_open_connections');
    const refused = valueOf(before, 'crosstab_connection_refusals_total{reason="per_address"}');
    const { connect } = await import('node:net');
    const sockets = await Promise.all(
      Array.from({ length: 6 }, () => new Promise<import('node:net').Socket>((resolve) => {
        const socket = connect(server.port, '127.0.0.1', () => resolve(socket));
        socket.on('error', () => {});
      })),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const text = await scrape();
    expect(valueOf(text, 'crosstab_open_connections')).toBe(4);
    expect(valueOf(text, 'crosstab_connection_refusals_total{reason="per_address"}') - refused).toBe(6 - (4 - open));
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(valueOf(await scrape(), 'crosstab_open_connections')).toBeLessThanOrEqual(open);
  });

  it('a request target in absolute form is routed by its path, whatever host it names', async () => {
    const port = Number(new URL(operator.url).port);
    const health = await rawGet(port, 'http://elsewhere.example/healthz?x=1');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: 'alive' });
    expect((await rawGet(port, `http://127.0.0.1:${port}/metrics`)).body).toContain('# TYPE ');
  });

  it('/healthz is 200; /readyz is 503 naming the failing check while one fails, 200 when all pass', async () => {
    expect(await (await fetch(`${operator.url}/healthz`)).json()).toEqual({ status: 'alive' });
    const ready = await fetch(`${operator.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { datasets: 'ok', store: 'ok' } });
    storeProblem = 'The access database is unavailable.';
    try {
      const down = await fetch(`${operator.url}/readyz`);
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({ status: 'not_ready', checks: { datasets: 'ok', store: 'The access database is unavailable.' } });
      expect(valueOf(await scrape(), 'crosstab_ready')).toBe(0);
    } finally {
      storeProblem = undefined;
    }
    expect(valueOf(await scrape(), 'crosstab_ready')).toBe(1);
    expect((await fetch(`${operator.url}/metrics`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${operator.url}/other`)).status).toBe(404);
  });

  it.skipIf(!existsSync(PROMTOOL) && process.env['CI'] !== 'true')('GET /metrics passes promtool check metrics', async () => {
    const response = await fetch(`${operator.url}/metrics`);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const checked = spawnSync(PROMTOOL, ['check', 'metrics'], { input: await response.text(), encoding: 'utf8' });
    expect(checked.status, checked.stdout + checked.stderr).toBe(0);
  });
});

describe('engineStats() and ServiceMetrics in an embedding service\'s registry', () => {
  it('gives the datasets, pool, event loop and memory as data, and registers in a given registry', async () => {
    const stats = engineStats([gss]);
    expect(stats.datasets[0]).toMatchObject({ survey: 'GSS', respondents: 75699, checksum: gss.info.checksum, createdAt: gss.info.createdAt });
    expect(stats.memory.kernel.reservedBytes).toBeGreaterThanOrEqual(stats.memory.kernel.allocatedBytes);
    expect(stats.memory.rss).toBeGreaterThan(0);
    const registry = new Registry();
    new ServiceMetrics({ registry, datasets: () => [gss], processMetrics: false });
    const text = await registry.metrics();
    expect(text).toContain('crosstab_dataset_respondents{survey="GSS"} 75699');
    expect(text).not.toContain('process_cpu_seconds_total');
  });
});
