// The GSS and NHANES datasets pushed to two ClickHouse shards on loopback: every R reference
// query, tables, groups and errors give the WASM engine's answers (weights to 1e-9, counts exactly).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { tablePlans } from '../../src/facade/clickhouse-engine.js';
import { openDataset, type Dataset } from '../../src/index.js';
import { referenceFiles, referenceQueries } from '../support/reference-queries.js';
import { skipClickHouse, startCluster, type ClickHouseCluster } from '../support/clickhouse-server.js';
import { expectSameCrosstab, expectSameTable, pushToCluster, rejection } from './support.js';

const names = Object.keys(referenceFiles) as Array<keyof typeof referenceFiles>;

describe.skipIf(skipClickHouse)('ClickHouse backend, two shards: the same answers as the WASM engine', () => {
  let cluster: ClickHouseCluster;
  const local = {} as Record<keyof typeof referenceFiles, Dataset>;
  const remote = {} as Record<keyof typeof referenceFiles, Dataset>;
  const urls = {} as Record<keyof typeof referenceFiles, string>;

  beforeAll(async () => {
    cluster = await startCluster(2);
    const paths = inject('testDatasets');
    for (const name of names) {
      urls[name] = await pushToCluster(cluster, paths[name], name);
      local[name] = await openDataset(paths[name]);
      remote[name] = await openDataset(urls[name]);
    }
  });

  afterAll(() => {
    for (const name of names) {
      local[name]?.close();
      remote[name]?.close();
    }
    cluster?.stop();
  });

  it('the respondents are split over both shards, and opening needs only the URL', async () => {
    const counts = await Promise.all(cluster.shards.map(async (shard) => Number(await (await fetch(`${shard.url}/?query=${encodeURIComponent('SELECT count() FROM crosstab_test.gss__v1_local')}`)).text())));
    expect(counts.every((count) => count > 0)).toBe(true);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(local.gss.info.respondents);
    const { checksum, ...info } = remote.gss.info;
    const { checksum: localChecksum, ...localInfo } = local.gss.info;
    expect(checksum).toBe(localChecksum);
    expect({ ...info, design: undefined }).toEqual({ ...localInfo, design: undefined });
  });

  describe.each(names)('%s', (name) => {
    it('every R reference query: ClickHouse equals the WASM engine and R', async () => {
      const queries = referenceQueries(name);
      expect(queries.length).toBe(name === 'gss' ? 20 : 10);
      for (const q of queries) {
        const query = { base: q.base, targets: [q.target] };
        const [wasm, clickhouse] = await Promise.all([local[name].crosstab(query), remote[name].crosstab(query)]);
        expectSameCrosstab(clickhouse, wasm);
        expect(clickhouse.targets[0]!.respondents).toBe(q.respondents);
        expect(Math.abs(clickhouse.targets[0]!.weighted - q.weightedSum)).toBeLessThanOrEqual(1e-9 * Math.max(1, q.weightedSum));
        expect(clickhouse.base.respondents).toBe(q.baseRespondents);
      }
    });

    it('all reference targets in one call, unweighted too', async () => {
      const queries = referenceQueries(name);
      for (const weight of [undefined, null] as const) {
        const query = { base: '*', targets: queries.map((q) => `(${q.base}) AND (${q.target})`), ...(weight === null ? { weight } : {}) };
        expectSameCrosstab(await remote[name].crosstab(query), await local[name].crosstab(query));
      }
    });
  });

  it('table(): whole variables (one GROUP BY lookup), free and overlapping nets, codes, NA rows', async () => {
    const queries = [
      { base: '*', rows: [{ variable: 'sex' }], columns: [{ variable: 'degree' }] },
      { base: 'year=2010..', rows: [{ variable: 'race' }, 'F18-34', 'BA+', 'age=NA'], columns: ['LIBERAL', 'CONSERVATIVE', 'NONES OR relig=NA', 'NOT sex=1', '*'] },
      { base: 'age=18..', rows: ['degree=3..4', 'degree=4', 'degree=0 OR degree=4'], columns: [{ variable: 'polviews' }], weight: null },
      { base: 'sex=2', rows: [{ variable: 'year' }], columns: [{ variable: 'relig' }] },
    ];
    const defaultLimit = tablePlans.cellAggregatesMax;
    try {
      // 0: every table through the arrayJoin GROUP BY plan; then the default (countIf per cell for small tables).
      for (const limit of [0, defaultLimit]) {
        tablePlans.cellAggregatesMax = limit;
        for (const query of queries) expectSameTable(await remote.gss.table(query), await local.gss.table(query));
        const nhanes = { base: '*', rows: [{ variable: nameOf(local.nhanes, 0) }], columns: [{ variable: nameOf(local.nhanes, 1) }, '*'] };
        expectSameTable(await remote.nhanes.table(nhanes), await local.nhanes.table(nhanes));
      }
    } finally {
      tablePlans.cellAggregatesMax = defaultLimit;
    }
  });

  it('OR-chains of single values of one variable inside AND (the server rewrites them to IN on the shards): the same cells', async () => {
    const targets = [
      '(sex=1 AND (age=20 OR age=21 OR age=22)) OR race=1 OR race=2 OR race=3',
      'sex=2 AND madeg=1,NA,NA',
      'sex=1 AND age=20..20,21..21,22..22',
      'NOT (year=2010 AND (race=1 OR race=NA OR race=3 OR race=1))',
    ];
    for (const weight of [undefined, null] as const) {
      const query = { base: 'age=18..', targets, ...(weight === null ? { weight } : {}) };
      expectSameCrosstab(await remote.gss.crosstab(query), await local.gss.crosstab(query));
    }
    const table = { base: 'sex=1 AND (madeg=1 OR madeg=NA OR madeg=2)', rows: targets, columns: [{ variable: 'race' }, 'race=1 OR race=2 OR race=3'] };
    const defaultLimit = tablePlans.cellAggregatesMax;
    try {
      for (const limit of [0, defaultLimit]) {
        tablePlans.cellAggregatesMax = limit;
        expectSameTable(await remote.gss.table(table), await local.gss.table(table));
      }
    } finally {
      tablePlans.cellAggregatesMax = defaultLimit;
    }
  });

  it('groups and entitlements: the same refusals, the same answers within the allowed groups', async () => {
    const allowed = ['demographics'];
    const ok = { base: 'sex=2', targets: ['F18-34', 'degree=3..4'], allowedGroups: allowed };
    expectSameCrosstab(await remote.gss.crosstab(ok), await local.gss.crosstab(ok));
    for (const target of ['LIBERAL', 'relig=4', 'NOT polviews=1..3']) {
      const bad = { base: '*', targets: [target], allowedGroups: allowed };
      const [a, b] = await Promise.all([rejection(local.gss.crosstab(bad)), rejection(remote.gss.crosstab(bad))]);
      expect(b.code).toMatch(/^unknown_(code|variable)$/);
      expect([b.code, b.message, b.details]).toEqual([a.code, a.message, a.details]);
    }
    expect(remote.gss.groupsOf('LIBERAL AND sex=2')).toEqual(local.gss.groupsOf('LIBERAL AND sex=2'));
  });

  it('bad queries: the same error codes, messages and suggestions', async () => {
    const bad = [
      { base: '*', targets: ['LIBRAL'] },
      { base: '*', targets: ['sexx=1'] },
      { base: 'year=1800', targets: ['sex=2'] },
      { base: '*', targets: ['age=40..30'] },
      { base: '*', targets: ['sex=2 AND'] },
      { base: '*', targets: ['sex>=2'] },
      { base: '*', targets: ['sex=2'], weight: 'nope' },
      { base: '*', targets: 'sex=2' },
    ];
    for (const query of bad) {
      const [a, b] = await Promise.all([rejection(local.gss.crosstab(query as never)), rejection(remote.gss.crosstab(query as never))]);
      expect([b.code, b.message, b.details]).toEqual([a.code, a.message, a.details]);
    }
    const unknownCode = await rejection(remote.gss.crosstab({ base: '*', targets: ['LIBRAL'] }));
    expect(unknownCode.code).toBe('unknown_code');
    expect(unknownCode.details.suggestions).toContain('LIBERAL');
    const table = { base: '*', rows: [{ variable: 'sexx' }], columns: ['*'] };
    const [a, b] = await Promise.all([rejection(local.gss.table(table)), rejection(remote.gss.table(table))]);
    expect([b.code, b.message, b.details]).toEqual([a.code, a.message, a.details]);
  });

  it('push refuses an existing dataset unless --replace; clear errors for a bad URL and an unreachable server', async () => {
    const { pushDataset, labelledHint } = await import('../../src/index.js');
    const { flagOf } = await import('../../src/cli/flag-labels.js');
    const paths = inject('testDatasets');
    const again = await rejection(pushDataset(paths.gss, { clickhouse: urls.gss, cluster: cluster.cluster, shardUrls: cluster.shards.map((s) => s.url) }));
    expect(again.code).toBe('invalid_option');
    expect(again.details.hint).toMatch(/Set `replace` to publish/);
    expect(labelledHint(again, flagOf)).toMatch(/Set --replace to publish/);
    await pushDataset(paths.gss, { clickhouse: urls.gss, cluster: cluster.cluster, shardUrls: cluster.shards.map((s) => s.url), replace: true });
    const reopened = await openDataset(urls.gss);
    try {
      expectSameCrosstab(await reopened.crosstab({ base: '*', targets: ['sex=2'] }), await local.gss.crosstab({ base: '*', targets: ['sex=2'] }));
    } finally {
      reopened.close();
    }
    const single = `clickhouse://127.0.0.1:${cluster.shards[1]!.http}/one_server`;
    await pushDataset(paths.gss, { clickhouse: single, table: 'gss_single' });
    const oneServer = await openDataset(`${single}?table=gss_single`);
    try {
      expectSameCrosstab(await oneServer.crosstab({ base: 'year=2024', targets: ['F18-34'] }), await local.gss.crosstab({ base: 'year=2024', targets: ['F18-34'] }));
    } finally {
      oneServer.close();
    }
    expect((await rejection(pushDataset(paths.gss, { clickhouse: single, table: 'bad-name' }))).details.field).toBe('table');
    expect((await rejection(pushDataset(paths.gss, { clickhouse: 'ftp://x/db' }))).code).toBe('invalid_option');
    expect((await rejection(pushDataset(paths.gss, { clickhouse: urls.gss, cluster: 'nope', shardUrls: [] }))).details.hint).toMatch(/crosstab_test/);
    expect((await rejection(pushDataset(paths.gss, { clickhouse: urls.gss, cluster: cluster.cluster, shards: 3, shardUrls: [] }))).details.field).toBe('shards');
    expect((await rejection(pushDataset(paths.gss, { clickhouse: 'clickhouse://127.0.0.1:1/db' }))).code).toBe('backend_unavailable');
    expect((await rejection(openDataset('clickhouse://127.0.0.1:1/db?table=gss'))).code).toBe('backend_unavailable');
    expect((await rejection(openDataset(`clickhouse://127.0.0.1:${cluster.shards[0]!.http}/crosstab_test?table=missing`))).code).toBe('file_not_found');
    expect((await rejection(openDataset(`clickhouse://127.0.0.1:${cluster.shards[0]!.http}/crosstab_test`))).code).toBe('invalid_option');
  });
});

describe.skipIf(skipClickHouse)('push: every --shard-url must be a shard of --cluster, each once', () => {
  let cluster: ClickHouseCluster;
  let outsider: ClickHouseCluster;
  const paths = inject('testDatasets');

  beforeAll(async () => {
    // A server outside the cluster: its own config names a one-server cluster of the same name.
    [cluster, outsider] = await Promise.all([startCluster(2), startCluster(1)]);
  });

  afterAll(() => {
    cluster?.stop();
    outsider?.stop();
  });

  const exists = async (url: string, table: string) => Number(await (await fetch(`${url}/?query=${encodeURIComponent(`EXISTS TABLE crosstab_test.${table}`)}`)).text());
  const members = () => cluster.shards.map((shard, i) => `127.0.0.1:${shard.tcp} (shard ${i + 1})`);

  it('refuses a URL outside the cluster, a shard given twice and a shard not given, naming the URL and the members; writes nothing', async () => {
    const { pushDataset, labelledHint } = await import('../../src/index.js');
    const { flagOf } = await import('../../src/cli/flag-labels.js');
    const url = `clickhouse://127.0.0.1:${cluster.shards[0]!.http}/crosstab_test?table=mismatch`;
    const push = (shardUrls: string[]) => rejection(pushDataset(paths.gss, { clickhouse: url, cluster: cluster.cluster, shardUrls }));
    const [first, second] = cluster.shards.map((shard) => shard.url) as [string, string];

    const outside = await push([first, outsider.url]);
    expect(outside.code).toBe('invalid_option');
    expect(outside.details.field).toBe('shardUrl');
    expect(outside.message).toContain(`shardUrl ${outsider.url} is not a member of cluster "crosstab_test"`);
    for (const member of members()) expect(outside.message).toContain(member);

    const twice = await push([first, first]);
    expect(twice.details.field).toBe('shardUrl');
    expect(twice.message).toContain(`shardUrl ${first} and shardUrl ${first} are the same server`);

    const missing = await push([second]);
    expect(missing.details.field).toBe('shardUrl');
    expect(missing.message).toContain(`shardUrl is missing for ${members()[0]}`);

    for (const server of [first, second, outsider.url]) {
      for (const table of ['mismatch__versions', 'mismatch__v1', 'mismatch__v1_local']) expect(await exists(server, table), `${table} on ${server}`).toBe(0);
    }
  });

  it('accepts the shards in any order: the answers are the local engine\'s', async () => {
    const { pushDataset, labelledHint } = await import('../../src/index.js');
    const { flagOf } = await import('../../src/cli/flag-labels.js');
    const url = `clickhouse://127.0.0.1:${cluster.shards[0]!.http}/crosstab_test?table=reversed`;
    await pushDataset(paths.gss, { clickhouse: url, cluster: cluster.cluster, shardUrls: cluster.shards.map((shard) => shard.url).reverse() });
    const [remote, local] = await Promise.all([openDataset(url), openDataset(paths.gss)]);
    try {
      const query = { base: 'year=2000..', targets: ['sex=2', 'F18-34', 'degree=3..4'] };
      expectSameCrosstab(await remote.crosstab(query), await local.crosstab(query));
    } finally {
      remote.close();
      local.close();
    }
  });
});

function nameOf(ds: Dataset, i: number): string {
  return ds.info.variables.filter((variable) => variable.values && variable.values.length <= 12)[i]!.name;
}
