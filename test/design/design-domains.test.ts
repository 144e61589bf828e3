// Random domains of replicate designs against R: the randomDomains of
// test/fixtures/r/design.reference.json (make-design-reference.R draws them with a fixed seed:
// strata ranges, age ranges, sex and race sets, alone or together, over JKn, JK1, bootstrap,
// BRR and Fay replicates, with and without mse). R's subset() recomputes the degrees of
// freedom from the domain's rows, so every Rao–Scott ddf and p here depends on the domain.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset, TableResult } from '../../src/index.js';
import { tableStatistics } from '../../src/report/index.js';
import { checkDesignTable, closeDesignDatasets, designFixture, ErrorLedger, figuresFromLibrary, openDesignDataset } from './support.js';

const ledger = new ErrorLedger();
afterAll(() => closeDesignDatasets());
afterAll(() => console.log(`max relative error vs R, random domains of replicate designs (statistic, compared, error):\n${ledger.table()}`));

const domains = designFixture.randomDomains;

it('the fixture holds random domains of every replicate type, many reaching fewer dimensions than the whole file', () => {
  const types = new Set(domains.map((table) => table.build.replicateType));
  expect([...types].sort()).toEqual(['BRR', 'Fay', 'JK1', 'JKn', 'bootstrap']);
  const narrower = domains.filter((table) => table.chisq.some((test) => test.degf < table.build.degf!));
  expect(narrower.length).toBeGreaterThanOrEqual(domains.length / 2);
});

const cases = (['inline', 'pool'] as const).flatMap((execution) => domains.map((table) => [execution, table.id, table.base, table] as const));

describe.each(cases)('%s: R random domain %s (%s)', (execution, _id, _base, table) => {
  let ds: Dataset;
  let result: TableResult;
  beforeAll(async () => {
    ds = await openDesignDataset(table, execution);
    result = await ds.table({ base: table.base, rows: [...table.rows, { variable: 'HI_CHOL' }], columns: table.columns.map((variable) => ({ variable })) });
  });

  it('matches R to 1e-9, Rao-Scott ddf and p with the domain\'s degrees of freedom', () => {
    const statistics = tableStatistics(result, { stats: 'all' });
    expect(statistics.variance).toBe('replicate');
    checkDesignTable(table, figuresFromLibrary(result, statistics), ledger, 'library');
  });
});
