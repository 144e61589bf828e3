// The ClickHouse backend of crosstab-engine: the same openDataset/crosstab/table, through a
// dataset pushed with `crosstab push` to a 2-shard ClickHouse cluster that the bench starts on
// loopback (Debian's clickhouse-server; scripts/clickhouse-cluster.mjs, as the tests do).
// It shows the price of going distributed (HTTP round trips, SQL planning, shard merge) on
// S1-S4; S5's 5,000-code rows are left out. Skipped, with the reason printed, when
// clickhouse-server is not installed or dist/ is not built.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clickhouseBinary, startClickHouseCluster } from '../../scripts/clickhouse-cluster.mjs';

const distUrl = new URL('../../dist/index.js', import.meta.url);

export function createPeer() {
  let api, buildDir, cluster;
  const datasets = new Map();

  return {
    name: 'clickhouse',
    description: 'crosstab-engine on ClickHouse (crosstab push to 2 shards, openDataset("clickhouse://..."))',
    usesColumnStore: false,
    async available() {
      const binary = clickhouseBinary();
      if (!binary) return { ok: false, reason: 'clickhouse-server is not installed (apt-get install clickhouse-server)' };
      if (!existsSync(fileURLToPath(distUrl))) return { ok: false, reason: 'dist/index.js not found (run `npm run build` first)' };
      api = await import(distUrl.href);
      return { ok: true, server: binary, shards: 2 };
    },
    variantsFor(shape) {
      return shape.id === 'S5' ? [] : [null];
    },
    async prepare({ dataset }) {
      cluster ??= await startClickHouseCluster({ shards: 2, cluster: 'crosstab_bench' });
      buildDir ??= mkdtempSync(join(tmpdir(), 'crosstab-bench-clickhouse-'));
      const path = join(buildDir, `${dataset.id}.arrow`);
      await api.buildDataset(dataset.path, { weights: [dataset.weight], survey: dataset.id.toUpperCase(), out: path });
      const url = `clickhouse://127.0.0.1:${cluster.shards[0].http}/bench?table=${dataset.id}`;
      const push = await api.pushDataset(path, { clickhouse: url, cluster: cluster.cluster, shards: 2, shardUrls: cluster.shards.map((s) => s.url), replace: true });
      datasets.set(dataset.id, await api.openDataset(url));
      return { url, pushSeconds: Number(push.seconds.toFixed(1)), shards: push.shards };
    },
    async run(shape) {
      const ds = datasets.get(shape.dataset);
      if (shape.kind === 'targets') {
        const result = await ds.crosstab({ base: shape.base.text, targets: shape.targets.map((t) => t.text) });
        const cells = [result.base, ...result.targets];
        return { weighted: Float64Array.from(cells, (c) => c.weighted), respondents: Float64Array.from(cells, (c) => c.respondents), method: 'crosstab (SQL countIf/sumIf)' };
      }
      const result = await ds.table({ base: shape.base.text, rows: shape.rows.map((c) => c.text), columns: shape.columns.map((c) => c.text) });
      return { weighted: Float64Array.from(result.weighted), respondents: Float64Array.from(result.respondents), method: `table (${result.plan}, ${result.execution})` };
    },
    async release(datasetId) {
      datasets.get(datasetId)?.close();
      datasets.delete(datasetId);
    },
    async close() {
      for (const id of [...datasets.keys()]) await this.release(id);
      cluster?.stop();
      cluster = undefined;
      if (buildDir) rmSync(buildDir, { recursive: true, force: true });
    },
  };
}
