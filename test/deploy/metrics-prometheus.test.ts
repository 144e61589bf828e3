// deploy/'s monitoring on loopback: PostgreSQL, two `crosstab serve --metrics-port` replicas
// behind Debian's nginx (deploy/nginx.conf, as replicas-nginx.test.ts runs it) and Debian's
// Prometheus running deploy/prometheus.yml with deploy/alerts.yml (only the targets, the
// intervals and the rule file's path swapped).
// - What Prometheus recorded equals what was sent through nginx: requests by operation and
//   status, and the billed calls equal the usage rows in PostgreSQL.
// - Each replica's /metrics passes `promtool check metrics`; Prometheus loaded every alert
//   rule healthy, and every query of deploy/grafana/crosstab-dashboard.json runs.
// - /readyz is 200 once the replicas are up, 503 (store) while PostgreSQL is stopped, and
//   200 again after it is started; Prometheus records crosstab_store_up 0 then 1.
// - The replicas' stderr is JSON lines: request lines with the response's X-Request-Id,
//   operation, status, key and account ids and dataset version; the store_down and store_up
//   events; never an API key.
// Needs nginx, PostgreSQL and Prometheus: under CI=true their absence fails; otherwise the suite is skipped loudly.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase } from '../../src/access/index.js';
import { findNginx, freePorts, nginxTemplate, startNginx, type RunningNginx } from '../../bench/lib/nginx.js';
import { startPostgres, type PostgresServer } from '../access/postgres-server.js';
import { CLI, startServe, type ServeChild } from '../http/serve-child.js';
import { tempDir } from '../http/support.js';

const paths = inject('testDatasets');
const DEPLOY = dirname(nginxTemplate);
const PROMETHEUS = '/usr/bin/prometheus';
const PROMTOOL = '/usr/bin/promtool';
const BODY = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2'] });

const hasPostgres = existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').some((version) => existsSync(join('/usr/lib/postgresql', version, 'bin', 'pg_ctl')));
const missing = [...(findNginx() === undefined ? ['nginx'] : []), ...(hasPostgres ? [] : ['postgresql']), ...(existsSync(PROMETHEUS) && existsSync(PROMTOOL) ? [] : ['prometheus'])];
const ci = process.env['CI'] === 'true';
if (missing.length > 0 && !ci) {
  console.warn(`\n*** SKIPPED test/deploy/metrics-prometheus.test.ts: ${missing.join(', ')} not installed (apt-get install -y ${missing.join(' ')}; .ci/run does) ***\n`);
}

function crosstab(args: string[], cwd: string): string {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  expect(result.status, `crosstab ${args.join(' ')}:\n${result.stderr}`).toBe(0);
  return result.stdout;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until `done` says yes (returns the last value), or fails after `timeoutMs`. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const started = Date.now();
  let last: T | undefined;
  let error: unknown;
  while (Date.now() - started < timeoutMs) {
    try {
      last = await read();
      if (done(last)) return last;
    } catch (caught) {
      error = caught;
    }
    await sleep(250);
  }
  throw new Error(`${what} within ${timeoutMs} ms; last: ${JSON.stringify(last)} ${error === undefined ? '' : String(error)}`);
}

/** deploy/prometheus.yml with the replicas' metrics addresses, 1 s intervals and the rules' absolute path. */
function renderPrometheusConfig(targets: string[]): string {
  let text = readFileSync(join(DEPLOY, 'prometheus.yml'), 'utf8');
  const swap = (pattern: RegExp, replacement: string): void => {
    expect(pattern.test(text), `deploy/prometheus.yml has ${pattern}`).toBe(true);
    text = text.replace(pattern, replacement);
  };
  swap(/scrape_interval: \S+/, 'scrape_interval: 1s');
  swap(/evaluation_interval: \S+/, 'evaluation_interval: 1s');
  swap(/- alerts\.yml/, `- ${join(DEPLOY, 'alerts.yml')}`);
  swap(/(- targets:\n)((?:\s+- \S+\n)+)/, `$1${targets.map((target) => `          - ${target}\n`).join('')}`);
  return text;
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

describe.skipIf(missing.length > 0 && !ci)('Prometheus scraping two replicas behind nginx (deploy/prometheus.yml, alerts.yml, dashboard)', () => {
  let postgres: PostgresServer | undefined;
  let nginx: RunningNginx | undefined;
  let prometheus: ChildProcess | undefined;
  let prometheusUrl: string;
  let prometheusLog = '';
  const replicas: ServeChild[] = [];
  let metricsUrls: string[] = [];
  let database: string;
  let cwd: string;

  async function query(expr: string): Promise<Sample[]> {
    const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await response.json()) as { status: string; data: { result: Sample[] }; error?: string };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
    return body.data.result;
  }

  const readyz = (url: string): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> =>
    fetch(`${url}/readyz`).then(async (response) => ({ status: response.status, body: (await response.json()) as { status: string; checks: Record<string, string> } }));

  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`CI=true and ${missing.join(', ')} not installed: .ci/run installs them (apt-get install -y ${missing.join(' ')})`);
    expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
    postgres = await startPostgres();
    database = await postgres.createDatabase('metrics');
    cwd = tempDir();
    crosstab(['accounts', 'add', '--name', 'acme', '--surveys', 'GSS', '--groups', 'GSS:_ALL_', '--database', database], cwd);
    const [api1, api2, metrics1, metrics2, promPort] = (await freePorts(5)) as [number, number, number, number, number];
    const start = (api: number, metrics: number): Promise<ServeChild> =>
      startServe(['--dataset', paths.gss, '--port', String(api), '--metrics-port', String(metrics), '--database', database, '--trust-proxy', '127.0.0.1', '--access-log'], { cwd, timeoutMs: 60_000 });
    // The first replica runs the migrations; then the second.
    replicas.push(await start(api1, metrics1));
    replicas.push(await start(api2, metrics2));
    metricsUrls = [`http://127.0.0.1:${metrics1}`, `http://127.0.0.1:${metrics2}`];
    nginx = await startNginx({ dir: tempDir(), replicas: [`127.0.0.1:${api1}`, `127.0.0.1:${api2}`] });
    const promDir = tempDir();
    const config = join(promDir, 'prometheus.yml');
    writeFileSync(config, renderPrometheusConfig(metricsUrls.map((url) => url.slice('http://'.length))));
    const checked = spawnSync(PROMTOOL, ['check', 'config', config], { encoding: 'utf8' });
    expect(checked.status, checked.stdout + checked.stderr).toBe(0);
    prometheusUrl = `http://127.0.0.1:${promPort}`;
    prometheus = spawn(PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${join(promDir, 'data')}`, `--web.listen-address=127.0.0.1:${promPort}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    prometheus.stderr?.on('data', (chunk: Buffer) => (prometheusLog += chunk.toString()));
    await until(() => fetch(`${prometheusUrl}/-/ready`).then((response) => response.status), (status) => status === 200, 30_000, `Prometheus ready:\n${prometheusLog}`);
  });

  afterAll(async () => {
    prometheus?.kill('SIGTERM');
    await nginx?.stop();
    for (const replica of replicas) replica.child.kill('SIGKILL');
    await Promise.all(replicas.map((replica) => replica.exited));
    postgres?.stop();
  });

  it('what Prometheus recorded equals what was sent through nginx, and the billed calls equal the usage rows', async () => {
    for (const url of metricsUrls) expect((await readyz(url)).status).toBe(200);
    const { apiKey, id } = JSON.parse(crosstab(['keys', 'add', '--account', 'acme', '--name', 'production', '--json', '--database', database], cwd)) as { apiKey: string; id: string };
    const sent = new Map<string, number>();
    const count = (operation: string, status: number): void => void sent.set(`${operation} ${status}`, (sent.get(`${operation} ${status}`) ?? 0) + 1);
    const requestIds: string[] = [];
    const post = (key: string, body: string): Promise<Response> =>
      fetch(`${nginx!.origin}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': key }, body });
    for (let round = 0; round < 8; round++) {
      const answers = await Promise.all(Array.from({ length: 5 }, () => post(apiKey, BODY)));
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        requestIds.push(answer.headers.get('x-request-id') as string);
        count('crosstab', 200);
      }
    }
    // A well-formed key nobody issued: 401. A body that is not JSON: 400. No operation: 404.
    for (let i = 0; i < 3; i++) expect((await post(`ctk_${'A'.repeat(43)}`, BODY)).status).toBe(401), count('crosstab', 401);
    for (let i = 0; i < 2; i++) expect((await post(apiKey, '{not json')).status).toBe(400), count('crosstab', 400);
    for (let i = 0; i < 2; i++) expect((await fetch(`${nginx!.origin}/v1/nothing`)).status).toBe(404), count('none', 404);
    for (let i = 0; i < 4; i++) expect((await fetch(`${nginx!.origin}/v1/docs`)).status).toBe(200), count('docs', 200);
    const expected = Object.fromEntries([...sent].sort());

    const recorded = await until(
      async () => Object.fromEntries((await query('sum by (operation, status) (crosstab_http_requests_total)')).map((s) => [`${s.metric['operation']} ${s.metric['status']}`, Number(s.value[1])]).sort()),
      (value) => JSON.stringify(value) === JSON.stringify(expected),
      30_000,
      `Prometheus recording ${JSON.stringify(expected)}`,
    );
    expect(recorded).toEqual(expected);
    // Both replicas served: nginx's least_conn spread the load.
    const perReplica = await query('sum by (instance) (crosstab_http_requests_total{operation="crosstab",status="200"})');
    expect(perReplica).toHaveLength(2);

    const db = await openDatabase(database);
    let rows: number;
    try {
      rows = (await db.query<{ n: string }>('SELECT count(*) AS n FROM usage WHERE key_id = $1 AND void_reason IS NULL', [id])).rows.map((row) => Number(row.n))[0]!;
    } finally {
      await db.close();
    }
    expect(rows).toBe(40);
    const billed = await query('sum(crosstab_billed_calls_total{operation="crosstab",survey="GSS"})');
    expect(Number(billed[0]!.value[1])).toBe(rows);
    // Every client read its answer whole: nothing was voided.
    const voided = await query('sum(crosstab_voided_calls_total)');
    expect(voided.length === 0 ? 0 : Number(voided[0]!.value[1])).toBe(0);
    const writes = await query('sum(crosstab_usage_write_batch_records_sum)');
    expect(Number(writes[0]!.value[1])).toBe(rows);
    const failedKeys = await query('sum(crosstab_failed_keys_total)');
    expect(Number(failedKeys[0]!.value[1])).toBe(3);
    const datasets = await query('crosstab_dataset_respondents{survey="GSS"}');
    expect(datasets.map((s) => Number(s.value[1]))).toEqual([75699, 75699]);

    // The logs: JSON lines, each request with its id, and never the key.
    const logs = replicas.map((replica) => replica.errors()).join('');
    expect(logs).not.toContain(apiKey);
    const lines = logs.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const line of lines) {
      expect(typeof line['level']).toBe('string');
      expect(Number.isNaN(Date.parse(line['time'] as string))).toBe(false);
    }
    const requests = new Map(lines.filter((line) => line['requestId'] !== undefined).map((line) => [line['requestId'] as string, line]));
    const version = (await query('crosstab_dataset_info{survey="GSS"}'))[0]!.metric['version'];
    for (const requestId of requestIds) {
      expect(requests.get(requestId)).toMatchObject({ level: 'info', operation: 'crosstab', status: 200, keyId: id, survey: 'GSS', billed: true, datasetVersion: version });
      expect(requests.get(requestId)!['accountId']).toMatch(/^acc_/);
    }
    expect(lines.filter((line) => line['event'] === 'started')).toHaveLength(2);
  });

  it('each replica\'s /metrics passes promtool check metrics; Prometheus loaded every alert rule; every dashboard query runs', async () => {
    for (const url of metricsUrls) {
      const text = await (await fetch(`${url}/metrics`)).text();
      const checked = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(checked.status, checked.stdout + checked.stderr).toBe(0);
      for (const name of ['crosstab_http_request_duration_seconds_bucket', 'crosstab_store_up', 'crosstab_pool_queue_depth', 'crosstab_event_loop_delay_p99_seconds', 'crosstab_memory_bytes', 'crosstab_cell_cache_hits_total', 'crosstab_open_connections', 'process_cpu_seconds_total']) {
        expect(text).toMatch(new RegExp(`^${name}[{ ]`, 'm'));
      }
    }
    const rules = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as { data: { groups: Array<{ rules: Array<{ name: string; health: string; lastError?: string }> }> } };
    const loaded = rules.data.groups.flatMap((group) => group.rules);
    expect(loaded.map((rule) => rule.name).sort()).toEqual(
      ['CrosstabEventLoopBlocked', 'CrosstabErrorRatioHigh', 'CrosstabLatencyP99High', 'CrosstabQuotaRefusalsSurge', 'CrosstabReplicaDown', 'CrosstabReplicaNotReady', 'CrosstabStoreDown', 'CrosstabUsageWriteSlow'].sort(),
    );
    await until(() => fetch(`${prometheusUrl}/api/v1/rules`).then(async (r) => ((await r.json()) as typeof rules).data.groups.flatMap((g) => g.rules)), (now) => now.every((rule) => rule.health === 'ok'), 10_000, 'every rule evaluated healthy');
    // Every dashboard query runs in Prometheus, and every series it names is one the replicas export.
    const exported = await (await fetch(`${metricsUrls[0]}/metrics`)).text();
    const dashboard = JSON.parse(readFileSync(join(DEPLOY, 'grafana', 'crosstab-dashboard.json'), 'utf8')) as { panels: Array<{ title: string; targets: Array<{ expr: string }> }> };
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        const expr = target.expr.replaceAll('$__rate_interval', '1m').replaceAll('$instance', '.*');
        await query(expr);
        for (const [name] of expr.matchAll(/crosstab_[a-z0-9_]+/g)) expect(exported, `${panel.title}: ${name}`).toMatch(new RegExp(`^${name}[{ ]`, 'm'));
      }
    }
    expect(await query('sum(crosstab_http_requests_total)')).toHaveLength(1);
  });

  it('readiness flips to 503 while PostgreSQL is stopped and back to 200 once it runs again; Prometheus records the store down', async () => {
    postgres!.pause();
    try {
      for (const url of metricsUrls) {
        const down = await until(() => readyz(url), (answer) => answer.status === 503, 30_000, `${url}/readyz 503 with the store stopped`);
        expect(down.body.status).toBe('not_ready');
        expect(down.body.checks['store']).not.toBe('ok');
        expect(down.body.checks['datasets']).toBe('ok');
        expect((await fetch(`${url}/healthz`)).status).toBe(200);
      }
      await until(() => query('crosstab_store_up == 0'), (result) => result.length === 2, 30_000, 'Prometheus recording crosstab_store_up 0 on both replicas');
      await until(() => query('crosstab_ready == 0'), (result) => result.length === 2, 30_000, 'Prometheus recording crosstab_ready 0 on both replicas');
    } finally {
      postgres!.start();
    }
    for (const url of metricsUrls) await until(() => readyz(url), (answer) => answer.status === 200, 60_000, `${url}/readyz 200 with the store back`);
    await until(() => query('crosstab_store_up == 1'), (result) => result.length === 2, 30_000, 'Prometheus recording crosstab_store_up 1 on both replicas');
    const events = replicas.map((replica) => replica.errors().split('\n').filter((line) => line.includes('"event"')).map((line) => (JSON.parse(line) as { event: string; level: string }))).map((lines) => lines.filter((line) => line.event.startsWith('store_')));
    for (const seen of events) expect(seen.map((line) => `${line.event}:${line.level}`)).toEqual(['store_down:warn', 'store_up:info']);
  });
});
