// `crosstab push` of a dataset file in segments (waves added by `crosstab append`) loads into
// ClickHouse the same tables and rows as the push of the compact file of the same waves
// (`crosstab append --compact`), shard by shard; and the pushed dataset answers as a build of
// all the rows does.
import { execFile } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDataset } from '../../src/index.js';
import { skipClickHouse, startCluster, type ClickHouseCluster } from '../support/clickhouse-server.js';
import { cliPath } from '../support/paths.js';
import { appendWave, buildWaveCsv, segmentParts, WAVE_QUERIES } from '../support/survey-waves.js';
import { expectSameCrosstab } from './support.js';

const WAVES = [30_000, 32_000, 33_500];

describe.skipIf(skipClickHouse)('crosstab push of a file in segments', () => {
  let cluster: ClickHouseCluster;
  beforeAll(async () => {
    cluster = await startCluster(2);
  });
  afterAll(() => cluster?.stop());

  /** Rows of a query on the server at `url` (HTTP), as TSV text. */
  async function text(url: string, sql: string): Promise<string> {
    const response = await fetch(`${url}/?query=${encodeURIComponent(sql)}`);
    const body = await response.text();
    expect(response.status, body).toBe(200);
    return body;
  }

  /** What a push left in ClickHouse under `table`: each table's columns and rows (on the entry server and on each shard), and the version's metadata. */
  async function pushed(table: string): Promise<Record<string, string>> {
    const found: Record<string, string> = {};
    for (const [index, url] of [...new Set([cluster.url, ...cluster.shards.map((shard) => shard.url)])].entries()) {
      const names = (await text(url, `SELECT name FROM system.tables WHERE database = 'crosstab_test' AND name LIKE '${table}\\_\\_%' ORDER BY name`)).trim().split('\n').filter(Boolean);
      for (const name of names) {
        const generic = `${index}:${name.slice(table.length)}`;
        found[`${generic} columns`] = await text(url, `DESCRIBE TABLE crosstab_test.${name}`);
        found[`${generic} engine`] = (await text(url, `SELECT engine FROM system.tables WHERE database = 'crosstab_test' AND name = '${name}'`)).trim();
        if (name.endsWith('__versions')) {
          const [meta] = JSON.parse(await text(url, `SELECT meta FROM crosstab_test.${name} FORMAT JSONEachRow`).then((rows) => JSON.stringify(rows.trim().split('\n').map((row) => JSON.parse(row).meta as string)))) as string[];
          const { createdAt: _built, ...rest } = JSON.parse(meta!) as Record<string, unknown>;
          found[`${generic} meta`] = JSON.stringify(rest);
        } else found[`${generic} rows`] = await text(url, `SELECT * FROM crosstab_test.${name} ORDER BY rid`);
      }
    }
    return found;
  }

  it('the same tables, columns, rows per shard and metadata as the push of the compact file; answers as a build of all the rows', async () => {
    const base = await buildWaveCsv(WAVES[0]!);
    const [segmented, compact] = [`${base}.segmented.arrow`, `${base}.compact.arrow`];
    copyFileSync(base, segmented);
    copyFileSync(base, compact);
    for (const wave of [1, 2]) {
      expect(await appendWave(segmented, WAVES[wave - 1]!, WAVES[wave]!)).toBe(wave + 1);
      expect(await appendWave(compact, WAVES[wave - 1]!, WAVES[wave]!, ['--compact'])).toBe(1);
    }
    expect(segmentParts(segmented).format).toBe('crosstab-engine/4');
    expect(segmentParts(compact).parts).toEqual([]);
    const push = (path: string, table: string) =>
      promisify(execFile)(process.execPath, [cliPath, 'push', path, '--clickhouse', `clickhouse://127.0.0.1:${cluster.shards[0]!.http}/crosstab_test?table=${table}`, '--cluster', cluster.cluster, '--shards', '2', ...cluster.shards.flatMap((shard) => ['--shard-url', shard.url])], { encoding: 'utf8' });
    expect((await push(segmented, 'segmented')).stdout).toMatch(/pushed 33,500 respondents/);
    expect((await push(compact, 'compact')).stdout).toMatch(/pushed 33,500 respondents/);
    const [fromSegments, fromCompact] = [await pushed('segmented'), await pushed('compact')];
    // The Distributed table and its versions row on the entry server, a MergeTree on each shard.
    expect(Object.keys(fromSegments).filter((key) => key.endsWith(' rows')).sort()).toEqual(['0:__v1 rows', '0:__v1_local rows', '1:__v1_local rows']);
    expect(Object.keys(fromSegments).some((key) => key.endsWith(' meta'))).toBe(true);
    expect(fromSegments['0:__v1 rows']?.split('\n').length).toBe(WAVES[2]! + 1);
    expect(Object.keys(fromSegments)).toEqual(Object.keys(fromCompact));
    for (const key of Object.keys(fromCompact)) expect(fromSegments[key], key).toBe(fromCompact[key]);

    // Answers from ClickHouse, against a build of all the rows (no append, no segments) read locally.
    const [remote, whole] = [await openDataset(`clickhouse://127.0.0.1:${cluster.shards[0]!.http}/crosstab_test?table=segmented`), await openDataset(await buildWaveCsv(WAVES[2]!))];
    try {
      for (const query of WAVE_QUERIES) {
        const request = { base: query.PopulationBaseCode, targets: query.TargetCodes };
        expectSameCrosstab(await remote.crosstab(request), await whole.crosstab(request));
      }
    } finally {
      await Promise.all([remote.close(), whole.close()]);
    }
  }, 240_000);
});
