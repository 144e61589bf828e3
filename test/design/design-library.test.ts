// Complex designs through the library: every cell, column pair and Rao–Scott test of
// test/fixtures/r/design.reference.json (R's survey package) on both execution paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dataset, TableResult } from '../../src/index.js';
import { tableStatistics } from '../../src/report/index.js';
import { checkDesignTable, closeDesignDatasets, designFixture, ErrorLedger, figuresFromLibrary, openDesignDataset } from './support.js';

const ledger = new ErrorLedger();
afterAll(() => closeDesignDatasets());
afterAll(() => console.log(`max relative error vs R, complex designs, library (statistic, compared, error):\n${ledger.table()}`));

const paths = ['inline', 'pool'] as const;
const cases = paths.flatMap((execution) => designFixture.tables.map((table) => [execution, table.id, table] as const));


describe.each(cases)('%s: R design table %s', (execution, _id, table) => {
  let ds: Dataset;
  let result: TableResult;
  beforeAll(async () => {
    ds = await openDesignDataset(table, execution);
    const variables = [...new Set(table.chisq.map((test) => test.rowVariable))];
    result = await ds.table({ base: table.base, rows: [...table.rows, ...variables.map((variable) => ({ variable }))], columns: table.columns.map((variable) => ({ variable })) });
  });

  it('matches R to 1e-9: proportions, totals, their SEs, column differences, Rao-Scott', () => {
    if (execution === 'pool' && result.plan === 'groupBy') expect(result.execution).toBe('pool');
    const statistics = tableStatistics(result, { stats: 'all', lonelyPsu: table.lonelyPsu });
    expect(statistics.variance).toBe(table.build.replicateWeights ? 'replicate' : table.build.psu ? 'taylor' : 'simple');
    // Replicate designs: the default degrees of freedom (replicates − 1) are R's degf().
    if (table.build.degf !== undefined) expect(ds.info.design.replicates!.degf).toBe(table.build.degf);
    if (table.build.givenDegf !== undefined) expect(ds.info.design.replicates!.degf).toBe(table.build.givenDegf);
    checkDesignTable(table, figuresFromLibrary(result, statistics), ledger, 'library');
  });
});
