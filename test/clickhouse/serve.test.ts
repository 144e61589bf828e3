// `crosstab serve` over real HTTP with a ClickHouse-backed survey (GSS, two shards) beside a
// local one (NHANES): the same REST answers as the library on the local file, and a 503 when
// ClickHouse goes away.
import { spawnSync } from 'node:child_process';
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
  const paths = inject('testDatasets');

  beforeAll(async () => {
    cluster = await startCluster(2);
    const dir = mkdtempSync(join(tmpdir(), 'crosstab-ch-serve-'));
    const url = `clickhouse://127.0.0.1:${cluster.shards[0]!.http}/served?table=gss`;
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

  it('ClickHouse gone: 503 for its survey, the local survey still answers', async () => {
    cluster!.stop();
    cluster = undefined;
    const response = await post({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] });
    expect(response.status).toBe(503);
    const nhanes = await post({ SurveyCode: 'NHANES', PopulationBaseCode: '*', TargetCodes: ['*'] });
    expect(nhanes.status).toBe(200);
  });
});
