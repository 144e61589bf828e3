// What the ClickHouse tests share: a 2-shard cluster, pushing a dataset to it, and the
// equality of a local (WASM) answer and a ClickHouse one.
import { expect } from 'vitest';
import { pushDataset, type Cell, type CrosstabResult, type TableResult } from '../../src/index.js';
import type { ClickHouseCluster } from '../support/clickhouse-server.js';

let serial = 0;

/** Pushes `path` to both shards of `cluster` under a fresh table name; its clickhouse:// URL. */
export async function pushToCluster(cluster: ClickHouseCluster, path: string, table = `t${process.pid}_${serial++}`): Promise<string> {
  const url = `clickhouse://127.0.0.1:${cluster.shards[0]!.http}/crosstab_test?table=${table}`;
  await pushDataset(path, { clickhouse: url, cluster: cluster.cluster, shards: cluster.shards.length, shardUrls: cluster.shards.map((shard) => shard.url) });
  return url;
}

/** Weighted sums to 1e-9 relative, counts exactly. */
export function expectSameSums(actual: { respondents: number; weighted: number; sumSqWeights: number }, expected: { respondents: number; weighted: number; sumSqWeights: number }, where = ''): void {
  expect(actual.respondents, `respondents ${where}`).toBe(expected.respondents);
  expect(Math.abs(actual.weighted - expected.weighted), `weighted ${where}: ${actual.weighted} vs ${expected.weighted}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected.weighted)));
  expect(Math.abs(actual.sumSqWeights - expected.sumSqWeights), `sumSqWeights ${where}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected.sumSqWeights)));
}

export function expectSameCell(actual: Cell, expected: Cell, where = ''): void {
  expectSameSums(actual, expected, where);
  expect(actual.stability, `stability ${where}`).toBe(expected.stability);
}

export function expectSameCrosstab(actual: CrosstabResult, expected: CrosstabResult): void {
  expectSameCell(actual.base, expected.base, 'base');
  expect(actual.targets).toHaveLength(expected.targets.length);
  expected.targets.forEach((cell, i) => expectSameCell(actual.targets[i]!, cell, `targets[${i}]`));
  expect([actual.weight, actual.units]).toEqual([expected.weight, expected.units]);
}

export function expectSameTable(actual: TableResult, expected: TableResult): void {
  expect(actual.rows).toEqual(expected.rows);
  expect(actual.columns).toEqual(expected.columns);
  expected.rows.forEach((_, r) => {
    expectSameCell(actual.rowTotals[r]!, expected.rowTotals[r]!, `rowTotals[${r}]`);
    expected.columns.forEach((_, c) => expectSameCell(actual.cell(r, c), expected.cell(r, c), `cell(${r}, ${c})`));
  });
  expected.columns.forEach((_, c) => expectSameCell(actual.columnTotals[c]!, expected.columnTotals[c]!, `columnTotals[${c}]`));
  expectSameCell(actual.total, expected.total, 'total');
  // The base's respondents of weight 0 (design effects count them out), as the engine counts them.
  expect(actual.design?.zeroWeights, 'design.zeroWeights').toBe(expected.design?.zeroWeights);
  expect(actual.plan).toBe('sql');
  expect(actual.execution).toBe('clickhouse');
}

/** The rejection of a promise (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string; details: Record<string, unknown> };
  }
  throw new Error('expected a rejection');
}
