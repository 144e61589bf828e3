// Two clickhouse-server instances (two shards) on loopback for the ClickHouse tests; the
// work is in scripts/clickhouse-cluster.mjs, shared with `npm run bench`. Under CI=true a
// missing clickhouse-server fails the tests (.ci/run installs it); elsewhere they skip loudly.
// @ts-expect-error a plain ES module without types
import { clickhouseBinary, startClickHouseCluster } from '../../scripts/clickhouse-cluster.mjs';

export interface ClickHouseCluster {
  cluster: string;
  /** Every shard, in the cluster's order: HTTP and native ports, HTTP URL. */
  shards: Array<{ http: number; tcp: number; url: string }>;
  /** HTTP URL of the first shard, which holds the Distributed and metadata tables. */
  url: string;
  pids: number[];
  stop(): void;
}

/** True when clickhouse-server is installed here. */
export const hasClickHouse: boolean = clickhouseBinary() !== undefined;

/** Under CI the ClickHouse tests must run; elsewhere they may skip, saying so. */
export const skipClickHouse: boolean = !hasClickHouse && process.env.CI !== 'true';

if (skipClickHouse) {
  console.warn('\n*** SKIPPED: the ClickHouse tests need Debian\'s clickhouse-server (apt-get install clickhouse-server); CI installs it and runs them. ***\n');
}

export function startCluster(shards = 2): Promise<ClickHouseCluster> {
  return startClickHouseCluster({ shards }) as Promise<ClickHouseCluster>;
}
