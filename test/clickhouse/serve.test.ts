// `crosstab serve` over real HTTP with a ClickHouse-backed survey (GSS, two shards) beside a
// local one (NHANES): the same REST answers as the library on the local file, and a 503 when
// ClickHouse goes away.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, toServiceResponse } from '../../src/index.js';
import { CLI, startServe, type ServeChild } from '../http/serve-child.js';
import { skipClickHouse, startCluster, type ClickHouseCluster } from '../support/clickhouse-server.js';

describe.skipIf(skipClickHouse)('crosstab serve with a clickhouse:// dataset', () => {
  let cluster: ClickHouseCluster | undefined;
  let serve: ServeChild | undefined;
  let apiKey: string;
  let url: string;
  let dir: string;
  const paths = inject('testDatasets');

  beforeAll(async () => {
    cluster = await startCluster(2);
    dir = mkdtempSync(join(tmpdir(), 'crosstab-ch-serve-'));
    url = `clickhouse://127.0.0.1:${cluster.shards[0]!.http}/served?table=gss`;
    const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    const pushed = cli(['push', paths.gss, '--clickhouse', url, '--cluster', cluster.cluster, '--shards', '2', ...cluster.shards.flatMap((shard) => ['--shard-url', shard.url])]);
    expect(pushed.status, pushed.stderr).toBe(0);
    expect(pushed.stdout).toMatch(/pushed 75,699 respondents .* to 2 shards/);
    const keys = cli(['keys', 'add', '--keys', join(dir, 'keys.json'), '--surveys', 'GSS,NHANES', '--groups', '_ALL_', '--json']);
    expect(keys.status, keys.stderr).toBe(0);
    apiKey = JSON.parse(keys.stdout).apiKey;
    serve = await startServe(['--dataset', url, '--dataset', paths.nhanes, '--keys', join(dir, 'keys.json'), '--ledger', join(dir, 'usage.ndjson'), '--port', '0'], { cwd: dir });
  }, 180_000);

  afterAll(async () => {
    serve?.child.kill('SIGTERM');
    await serve?.exited;
    cluster?.stop();
  });

  const post = (body: object) =>
    fetch(`${serve!.origin}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey }, body: JSON.stringify(body) });

  it('answers both surveys as the library does on the local files; errors are the same', async () => {
    expect(serve!.output()).toMatch(/GSS, NHANES listening on/);
    const gss = await openDataset(paths.gss);
    try {
      const query = { base: 'year=2024', targets: ['F18-34', 'degree=3..4'] };
      const response = await post({ SurveyCode: 'GSS', PopulationBaseCode: query.base, TargetCodes: query.targets });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { Results: Array<{ Resps: number; WgtAud: number }> };
      const expected = toServiceResponse(await gss.crosstab(query)) as unknown as { Results: Array<{ Resps: number; WgtAud: number }> };
      expect(body.Results.map((r) => r.Resps)).toEqual(expected.Results.map((r) => r.Resps));
      body.Results.forEach((r, i) => expect(Math.abs(r.WgtAud - expected.Results[i]!.WgtAud)).toBeLessThanOrEqual(1e-9 * Math.max(1, expected.Results[i]!.WgtAud)));

      const bad = await post({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['LIBRAL'] });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(await bad.json())).toMatch(/LIBERAL/);
      const nhanes = await post({ SurveyCode: 'NHANES', PopulationBaseCode: '*', TargetCodes: ['*'] });
      expect(nhanes.status).toBe(200);
    } finally {
      gss.close();
    }
  });

  it('push --replace of other data to the served URL: every answer during and after the push is the one from before', async () => {
    const body = { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['F18-34', 'sex=1 AND age=20,21,22'] };
    const before = await post(body);
    expect(before.status, await before.clone().text()).toBe(200);
    const expected = JSON.stringify(((await before.json()) as { Results: unknown }).Results);
    // NHANES pushed over the GSS table: a server answering from the new rows, or from a table being refilled, would answer other figures or fail.
    const child = spawn(process.execPath, [CLI, 'push', paths.nhanes, '--clickhouse', url, '--replace', '--cluster', cluster!.cluster, ...cluster!.shards.flatMap((shard) => ['--shard-url', shard.url])], { cwd: dir });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    let running = true;
    void exited.then(() => (running = false));
    const answers: string[] = [];
    while (running) {
      const response = await post(body);
      answers.push(`${response.status} ${JSON.stringify(((await response.json()) as { Results?: unknown }).Results ?? null)}`);
    }
    expect(await exited, output).toBe(0);
    const after = await post(body);
    answers.push(`${after.status} ${JSON.stringify(((await after.json()) as { Results?: unknown }).Results ?? null)}`);
    expect(answers.filter((answer) => answer !== `200 ${expected}`)).toEqual([]);
    expect(output).toMatch(/published as version 2/);
  });

  it('ClickHouse gone: 503 for its survey, the local survey still answers', async () => {
    cluster!.stop();
    cluster = undefined;
    const response = await post({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] });
    expect(response.status).toBe(503);
    const nhanes = await post({ SurveyCode: 'NHANES', PopulationBaseCode: '*', TargetCodes: ['*'] });
    expect(nhanes.status).toBe(200);
  });
});
