// push --replace while datasets are open on the same URL, on two shards: every answer, from
// a dataset opened before the push or opened while it runs, equals the exact figures of the
// old data or of the new data, never anything else (no empty base, no part of the shards, no
// old metadata over new rows), and no query fails. A dataset opened before keeps the version
// it opened; once later pushes remove that version, its queries are refused, saying so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDataset, pushDataset, type CrosstabResult, type Dataset } from '../../src/index.js';
import { skipClickHouse, startCluster, type ClickHouseCluster } from '../support/clickhouse-server.js';
import { writeMadeDataset } from '../support/make-dataset.js';
import { rejection } from './support.js';

/** Seeded rows: a text column (blanks too), a numeric one, integer weights (so sums are exact on both engines). */
function madeRows(rows: number, seed: number, regions: string[]): { columns: Record<string, string[]>; weights: number[] } {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const region: string[] = [];
  const age: string[] = [];
  const weights: number[] = [];
  for (let i = 0; i < rows; i++) {
    region.push(next() < 0.05 ? '' : regions[Math.floor(next() * regions.length)]!);
    age.push(String(18 + Math.floor(next() * 60)));
    weights.push(1 + Math.floor(next() * 5));
  }
  return { columns: { region, age }, weights };
}

const query = { base: 'age=30..', targets: ['region=b', 'region=c,d', 'age=40..49 AND region=a', 'region=NA', 'NOT region=b,c'] };
const figures = (result: CrosstabResult) => [result.base, ...result.targets].flatMap((cell) => [cell.respondents, cell.weighted]);

describe.skipIf(skipClickHouse)('push --replace under open readers, two shards', () => {
  let cluster: ClickHouseCluster;
  let url: string;
  const paths = { old: '', new: '' };
  const expected = { old: [] as number[], new: [] as number[] };

  beforeAll(async () => {
    cluster = await startCluster(2);
    url = `clickhouse://127.0.0.1:${cluster.shards[0]!.http}/replaced?table=panel`;
    const old = madeRows(30_000, 7, ['a', 'b', 'c', 'd']);
    // The new data has a value that sorts between a and b: the ranks of b, c and d move, so old metadata over new rows would answer wrong.
    const fresh = madeRows(40_000, 11, ['a', 'aa', 'b', 'c', 'd']);
    paths.old = await writeMadeDataset(old.columns, old.weights);
    paths.new = await writeMadeDataset(fresh.columns, fresh.weights);
    for (const version of ['old', 'new'] as const) {
      const local = await openDataset(paths[version]);
      expected[version] = figures(await local.crosstab(query));
      local.close();
    }
    expect(expected.old).not.toEqual(expected.new);
  });

  afterAll(() => cluster?.stop());

  const push = (path: string, options: { replace?: boolean; chunkRows?: number; onProgress?: () => void } = {}) =>
    pushDataset(path, { clickhouse: url, cluster: cluster.cluster, shardUrls: cluster.shards.map((shard) => shard.url), ...options });

  it('readers see the old version or the new one, whole; a reader keeps the version it opened; removed versions are refused', async () => {
    expect((await push(paths.old)).version).toBe(1);
    const held = await openDataset(url);
    const seen = { old: 0, new: 0 };
    const wrong: string[] = [];
    const check = async (dataset: Dataset, allowed: ReadonlyArray<'old' | 'new'>, who: string) => {
      try {
        const answer = figures(await dataset.crosstab(query));
        const version = (['old', 'new'] as const).find((name) => JSON.stringify(answer) === JSON.stringify(expected[name]));
        if (version !== undefined && allowed.includes(version)) seen[version]++;
        else wrong.push(`${who}: ${JSON.stringify(answer)}`);
      } catch (error) {
        wrong.push(`${who}: ${(error as Error).message}`);
      }
    };
    const freshReader = async () => {
      try {
        const dataset = await openDataset(url);
        try {
          await check(dataset, ['old', 'new'], 'opened during the push');
        } finally {
          dataset.close();
        }
      } catch (error) {
        wrong.push(`opening during the push: ${(error as Error).message}`);
      }
    };

    // Readers run all along the push, and one pair is started at every chunk the push streams (so some overlap its inserts for sure).
    const during: Array<Promise<void>> = [];
    let pushing = true;
    const replaced = push(paths.new, {
      replace: true,
      chunkRows: 1000,
      onProgress: () => during.push(check(held, ['old'], 'opened before the push'), freshReader()),
    }).finally(() => (pushing = false));
    const loop = (async () => {
      while (pushing) await Promise.all([check(held, ['old'], 'opened before the push'), freshReader()]);
    })();
    const report = await replaced;
    await Promise.all([loop, ...during]);
    expect(wrong).toEqual([]);
    expect(report.version).toBe(2);
    expect(seen.old).toBeGreaterThanOrEqual(during.length / 2);

    // After the push: the held dataset still answers from version 1, a new one from version 2.
    await check(held, ['old'], 'opened before, after the push');
    const second = await openDataset(url);
    await check(second, ['new'], 'opened after the push');
    expect(wrong).toEqual([]);

    // A third push keeps version 2 (the one it replaces) for readers, and removes version 1 on every server.
    const third = await push(paths.old, { replace: true });
    expect([third.version, third.removedVersions]).toEqual([3, [1]]);
    await check(second, ['new'], 'opened at version 2, after version 3');
    expect(wrong).toEqual([]);
    const refused = await rejection(held.crosstab(query));
    expect(refused.code).toBe('backend_unavailable');
    expect(refused.message).toContain('version 1 of the dataset, which this dataset was opened at, has been removed by a later push (the current version is 3)');
    expect(refused.details.hint).toMatch(/Open the URL again/);
    for (const shard of cluster.shards) {
      const names = (await (await fetch(`${shard.url}/?query=${encodeURIComponent("SELECT name FROM system.tables WHERE database = 'replaced' ORDER BY name")}`)).text()).trim().split('\n');
      const versions = names.filter((name) => /^panel__v\d/.test(name));
      expect(versions.every((name) => /^panel__v[23](_local)?$/.test(name)), names.join(', ')).toBe(true);
      expect(versions.some((name) => name === 'panel__v2_local') && versions.some((name) => name === 'panel__v3_local')).toBe(true);
    }
    held.close();
    second.close();
    const latest = await openDataset(url);
    await check(latest, ['old'], 'opened at version 3');
    latest.close();
    expect(wrong).toEqual([]);
  });

  const sql = async (server: string, statement: string) => {
    const response = await fetch(`${server}/`, { method: 'POST', body: statement });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return text.trim();
  };
  const tablesOn = async (server: string, database: string) => (await sql(server, `SELECT name FROM system.tables WHERE database = '${database}' ORDER BY name`)).split('\n').filter(Boolean);

  it('--keep-versions 0 removes the replaced version at once; an interrupted push\'s tables go with the next push', async () => {
    const where = `clickhouse://127.0.0.1:${cluster.shards[0]!.http}/replaced?table=kept`;
    const shardUrls = cluster.shards.map((shard) => shard.url);
    const options = { clickhouse: where, cluster: cluster.cluster, shardUrls };
    expect((await rejection(pushDataset(paths.old, { ...options, keepVersions: -1 }))).details.field).toBe('keepVersions');
    expect((await pushDataset(paths.old, options)).version).toBe(1);
    // What an interrupted push of version 2 leaves: its tables, no row.
    await sql(shardUrls[1]!, 'CREATE TABLE replaced.kept__v2_local (rid UInt32) ENGINE = MergeTree ORDER BY rid');
    const held = await openDataset(where);
    const report = await pushDataset(paths.new, { ...options, replace: true, keepVersions: 0 });
    expect([report.version, report.removedVersions]).toEqual([3, [1, 2]]);
    for (const server of shardUrls) expect((await tablesOn(server, 'replaced')).filter((name) => /^kept__v\d/.test(name))).toEqual(server === shardUrls[0] ? ['kept__v3', 'kept__v3_local'] : ['kept__v3_local']);
    const refused = await rejection(held.crosstab(query));
    expect(refused.message).toContain('version 1 of the dataset, which this dataset was opened at, has been removed by a later push (the current version is 3)');
    held.close();
    const latest = await openDataset(where);
    expect(figures(await latest.crosstab(query))).toEqual(expected.new);
    latest.close();
  });

  it('a dataset pushed before versions: refused on opening, replaced by push --replace, which drops its tables', async () => {
    const [entry, other] = cluster.shards.map((shard) => shard.url) as [string, string];
    // The earlier layout: a TinyLog metadata row, a Distributed table, a MergeTree per shard.
    for (const server of [entry, other]) {
      await sql(server, 'CREATE DATABASE IF NOT EXISTS replaced');
      await sql(server, 'CREATE TABLE replaced.early_local (rid UInt32) ENGINE = MergeTree ORDER BY rid');
    }
    await sql(entry, `CREATE TABLE replaced.early (rid UInt32) ENGINE = Distributed('${cluster.cluster}', 'replaced', 'early_local', rid)`);
    await sql(entry, 'CREATE TABLE replaced.early_meta (meta String, checksum String, shards UInt32, cluster String, pushed_at String) ENGINE = TinyLog');
    const where = `clickhouse://127.0.0.1:${cluster.shards[0]!.http}/replaced?table=early`;
    const opening = await rejection(openDataset(where));
    expect(opening.code).toBe('unsupported_version');
    expect(opening.details.hint).toMatch(/--replace/);
    const options = { clickhouse: where, cluster: cluster.cluster, shardUrls: [entry, other] };
    const refused = await rejection(pushDataset(paths.old, options));
    expect(refused.code).toBe('invalid_option');
    expect(refused.message).toContain('early_meta on');
    expect((await pushDataset(paths.old, { ...options, replace: true })).version).toBe(1);
    expect((await tablesOn(entry, 'replaced')).filter((name) => name.startsWith('early'))).toEqual(['early__v1', 'early__v1_local', 'early__versions']);
    expect((await tablesOn(other, 'replaced')).filter((name) => name.startsWith('early'))).toEqual(['early__v1_local']);
    const reopened = await openDataset(where);
    expect(figures(await reopened.crosstab(query))).toEqual(expected.old);
    reopened.close();
  });
});
