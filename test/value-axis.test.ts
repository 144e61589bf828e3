// Which table plan an axis of values takes: a value listed twice on an axis cannot be one
// grid row (or column) of a group-by pass, so the table goes by bitsets and both entries
// hold the value's figures.
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../src/index.js';

describe.each(['inline', 'pool'] as const)('%s: an axis of values with a value listed twice', (execution) => {
  let ds: Dataset;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').gss, { execution, cellCache: 0 });
    return () => ds.close();
  });

  it.each([
    ['rows', { rows: ['degree=1', 'degree=3', 'degree=1'], columns: ['sex=1', 'sex=2'] }],
    ['columns', { rows: ['sex=1', 'sex=2'], columns: ['degree=1', 'degree=3', 'degree=1'] }],
  ] as const)('on the %s: bitsets, and each entry has its own figures', async (_axis, axes) => {
    const table = await ds.table({ base: 'year=2000..', ...axes });
    expect(table.plan).toBe('bitsets');
    for (let r = 0; r < table.rows.length; r++) {
      for (let c = 0; c < table.columns.length; c++) {
        const [cell] = (await ds.crosstab({ base: `year=2000.. AND ${table.rows[r]!.expr}`, targets: [table.columns[c]!.expr] })).targets;
        expect(table.cell(r, c).respondents).toBe(cell!.respondents);
        expect(table.cell(r, c).weighted).toBe(cell!.weighted);
        expect(table.cell(r, c).respondents).toBeGreaterThan(0);
      }
    }
  });
});
