// Complex-design figures in every table format: CSV, Arrow, text and HTML carry the
// weighted total's SE/MoE, the variance method and the Rao–Scott tests the library computes.
import { tableFromIPC } from 'apache-arrow';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDataset, TABLE_METADATA_KEY, tableStatistics, tableToArrowIPC, tableToCSV, tableToHTML, tableToText, type TableResult, type TableStatistics } from '../../src/index.js';
import { datasetOf, designFixture } from './support.js';

describe('complex-design figures in the table formats', () => {
  let result: TableResult;
  let statistics: TableStatistics;
  beforeAll(async () => {
    const ds = await openDataset(await datasetOf(designFixture.tables.find((table) => table.id === 'nhanes-taylor')!));
    result = await ds.table({ base: '*', rows: [{ variable: 'HI_CHOL' }], columns: [{ variable: 'agecat' }, { variable: 'race' }] });
    statistics = tableStatistics(result, { stats: 'all' });
    ds.close();
  });

  it('CSV has weightedSE and weightedMoE columns with the library figures', () => {
    const [header, ...lines] = tableToCSV(result, statistics).trim().split('\n');
    const fields = header!.split(',');
    const se = fields.indexOf('weightedSE');
    const moe = fields.indexOf('weightedMoE');
    expect(se).toBe(fields.indexOf('columnPctMoE') + 1);
    expect(moe).toBe(se + 1);
    lines.forEach((line, at) => {
      const values = line.split(',');
      expect(Number(values[se])).toBe(statistics.weightedSE![at]);
      expect(Number(values[moe])).toBe(statistics.weightedMoE![at]);
    });
  });

  it('Arrow has the columns, and the design and Rao-Scott tests in its metadata', () => {
    const table = tableFromIPC(tableToArrowIPC(result, statistics));
    expect([...table.getChild('weightedSE')!.toArray()]).toEqual([...statistics.weightedSE!]);
    const meta = JSON.parse(table.schema.metadata.get(TABLE_METADATA_KEY)!);
    expect(meta.statistics).toMatchObject({ variance: 'taylor', lonelyPsu: 'fail', designRespondents: null });
    expect(meta.raoScott.map((test: { rowVariable: string; columnVariable: string }) => `${test.rowVariable} x ${test.columnVariable}`)).toEqual(['HI_CHOL x agecat', 'HI_CHOL x race']);
    expect(meta.raoScott[0].statistic).toBe(statistics.raoScott![0]!.statistic);
  });

  it('text and HTML say how variances were computed and print the Rao-Scott tests', () => {
    const text = tableToText(result, statistics);
    const html = tableToHTML(result, statistics);
    for (const output of [text, html]) {
      expect(output).toContain('Taylor linearization with strata and PSUs, base as a domain of the whole file, lonely PSU fail');
      expect(output).toMatch(/Rao-Scott chi-square HI_CHOL x agecat: F = 62\.891 on 2\.64 and 42\.19 df, p = 6\.74e-15/);
    }
    expect(text).toContain('SE weighted');
  });
});
