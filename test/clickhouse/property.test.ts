// The property test's random datasets and expressions, pushed to two ClickHouse shards (a
// Distributed table over two servers): the WASM engine and ClickHouse give the same cells
// (counts exactly, sums to 1e-9), for crosstab() and table(). Bases, targets and axis entries
// are random expressions and, as often, the shapes the server's analyzer rewrites
// (rewritten-shapes.ts: OR-chains of single values of one column inside AND, NOT and OR).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { tablePlans } from '../../src/facade/clickhouse-engine.js';
import { openDataset } from '../../src/index.js';
import type { Expr } from '../../src/query/ast.js';
import { skipClickHouse, startCluster, type ClickHouseCluster } from '../support/clickhouse-server.js';
import { toText } from '../support/expression-text.js';
import { writeMadeDataset } from '../support/make-dataset.js';
import { datasetArb, exprArb, present } from '../support/random-data.js';
import { rewrittenShapeArb } from './rewritten-shapes.js';
import { expectSameCrosstab, expectSameTable, pushToCluster } from './support.js';

describe.skipIf(skipClickHouse)('ClickHouse vs the WASM engine on random data', () => {
  const defaultLimit = tablePlans.cellAggregatesMax;
  let cluster: ClickHouseCluster;
  beforeAll(async () => {
    cluster = await startCluster(2);
  });
  afterAll(() => {
    tablePlans.cellAggregatesMax = defaultLimit;
    cluster?.stop();
  });

  it('random crosstabs and tables: every cell and margin equal', async () => {
    await fc.assert(
      fc.asyncProperty(
        datasetArb.chain((data) => {
          const columns = { num1: data.num1, num2: data.num2, txt: data.txt };
          const expression = fc.oneof(exprArb(columns).map(toText), rewrittenShapeArb(columns));
          const single = (name: string, value: string) => toText({ var: name, in: [value] } as Expr);
          const allValues = Object.entries(columns).flatMap(([name, values]) => present(values).map((value) => single(name, value)));
          const valueAxes = Object.entries(columns)
            .filter(([, values]) => present(values).length > 0)
            .map(([name, values]) => fc.shuffledSubarray(present(values), { minLength: 1 }).map((list) => list.map((value) => single(name, value))));
          const axis = fc.oneof(fc.array(expression, { minLength: 1, maxLength: 4 }), fc.shuffledSubarray(allValues, { minLength: 1 }), ...valueAxes);
          return fc.tuple(fc.constant(data), expression, fc.array(expression, { minLength: 1, maxLength: 4 }), axis, axis);
        }),
        async ([data, base, targets, rows, columns]) => {
          const path = await writeMadeDataset({ num1: data.num1, num2: data.num2, txt: data.txt }, data.weights);
          const url = await pushToCluster(cluster, path);
          const [local, remote] = await Promise.all([openDataset(path), openDataset(url)]);
          try {
            for (const weight of [undefined, null] as const) {
              const query = { base, targets, ...(weight === null ? { weight } : {}) };
              expectSameCrosstab(await remote.crosstab(query), await local.crosstab(query));
            }
            const table = { base, rows, columns };
            const expected = await local.table(table);
            for (const limit of [0, defaultLimit]) {
              tablePlans.cellAggregatesMax = limit; // 0: the arrayJoin GROUP BY plan; default: countIf per cell for small tables
              expectSameTable(await remote.table(table), expected);
            }
          } finally {
            local.close();
            remote.close();
          }
        },
      ),
      { numRuns: 150 },
    );
  }, 600_000);
});
