// ACS PUMS 2024 (2.7M respondents) pushed to two ClickHouse shards: the held-in DuckDB checks
// of test/acs.test.ts give the same answers on ClickHouse, on the WASM engine and in DuckDB.
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { ACS_DEFAULT_BUILD, acsDataset, acsDuckDb } from '../support/acs-builds.js';
import { ACS_DUCKDB_CELLS, ACS_DUCKDB_GROUP_BY, ACS_NETS } from '../support/acs-duckdb-checks.js';
import { skipClickHouse, startCluster, type ClickHouseCluster } from '../support/clickhouse-server.js';
import { acsCsv, hasAcs } from '../support/paths.js';
import { expectSameCrosstab, expectSameTable, pushToCluster } from './support.js';

if (!hasAcs) console.warn(`\n*** SKIPPED: the ClickHouse ACS tests need ${acsCsv}, which is not here. CI has it. ***\n`);

describe.skipIf(skipClickHouse || !hasAcs)('ACS on two ClickHouse shards equals the WASM engine and DuckDB', () => {
  let cluster: ClickHouseCluster;
  let local: Dataset;
  let remote: Dataset;
  let duck: Awaited<ReturnType<Awaited<ReturnType<typeof DuckDBInstance.create>>['connect']>>;

  beforeAll(async () => {
    // The default build and DuckDB's table of the CSV, shared with the other ACS files of the run.
    const out = await acsDataset(ACS_DEFAULT_BUILD);
    cluster = await startCluster(2);
    const started = performance.now();
    const url = await pushToCluster(cluster, out, 'acs');
    console.info(`ACS push to 2 ClickHouse shards: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    local = await openDataset(out, { execution: 'inline' });
    remote = await openDataset(url);
    duck = await (await DuckDBInstance.create(await acsDuckDb(), { access_mode: 'READ_ONLY' })).connect();
  }, 900_000);

  afterAll(() => {
    local?.close();
    remote?.close();
    cluster?.stop();
  });

  async function duckCell(where: string): Promise<[number, number]> {
    const reader = await duck.runAndReadAll(`SELECT COALESCE(SUM(PWGTP), 0)::DOUBLE AS w, COUNT(*)::DOUBLE AS n FROM acs WHERE ${where}`);
    return reader.getRows()[0] as [number, number];
  }

  it.each(ACS_DUCKDB_CELLS)('base %s, target %s: ClickHouse = WASM = DuckDB', async (base, target, where) => {
    const [clickhouse, wasm] = await Promise.all([remote.crosstab({ base, targets: [target] }), local.crosstab({ base, targets: [target] })]);
    expectSameCrosstab(clickhouse, wasm);
    const [w, n] = await duckCell(where);
    expect([clickhouse.targets[0]!.weighted, clickhouse.targets[0]!.respondents]).toEqual([w, n]); // integer weights: exact
  });

  it('OCCP x SEX (GROUP BY) and overlapping nets: ClickHouse = WASM = DuckDB', async () => {
    const byGroup = { base: 'ESR=1,2', rows: [{ variable: 'OCCP' }], columns: [{ variable: 'SEX' }] };
    const clickhouse = await remote.table(byGroup);
    expectSameTable(clickhouse, await local.table(byGroup));
    const rows = new Map(clickhouse.rows.map((row, r) => [Number(row.value), r]));
    const duckRows = (await duck.runAndReadAll(ACS_DUCKDB_GROUP_BY)).getRows() as Array<[number, number, number, number]>;
    expect(duckRows.length).toBeGreaterThan(500);
    for (const [occp, sex, w, n] of duckRows) {
      const cell = clickhouse.cell(rows.get(Number(occp))!, Number(sex) - 1);
      expect([cell.weighted, cell.respondents]).toEqual([w, n]);
    }
    const netsQuery = { base: ACS_NETS.base, rows: ACS_NETS.rows, columns: ACS_NETS.columns };
    const nets = await remote.table(netsQuery);
    expectSameTable(nets, await local.table(netsQuery));
    for (const [r, c, where] of ACS_NETS.cells) expect([nets.cell(r, c).weighted, nets.cell(r, c).respondents]).toEqual(await duckCell(where));
  });
});
