// A JSON table document read back (tableFromJson) is the table and statistics it was written
// from, for everything the other layouts use: written again as JSON it is the same document,
// and its chart, banner layout and Total-column shares are those of the original; with
// percentages of the valid answers too (the Total column's share then comes from the runs).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bannerLayout, chartToSVG, openDataset, tableChart, tableFromJson, tableStatistics, tableToJSON, type Dataset, type TableQuery } from '../../src/index.js';

let ds: Dataset;
beforeAll(async () => {
  ds = await openDataset(inject('testDatasets').gss);
});
afterAll(() => ds.close());

describe('tableFromJson', () => {
  const cases: Array<[string, TableQuery]> = [
    ['percentages of the total, "No answer" entries shown', { base: 'year=2024', rows: [{ variable: 'degree' }], columns: [{ variable: 'sex' }, { variable: 'race' }] }],
    ['valid percentages, an expression column', { base: 'year=2022..2024', rows: [{ variable: 'degree' }, { expr: 'age=18..34' }], columns: [{ variable: 'race' }, { expr: 'sex=2' }], percentBase: 'valid' }],
  ];
  it.each(cases)('gives back the table and statistics of its document: %s', async (_name, query) => {
    const result = await ds.table(query);
    const statistics = tableStatistics(result, { stats: 'all' });
    const json = tableToJSON(result, statistics);
    const revived = tableFromJson(JSON.parse(JSON.stringify(json)));
    expect(tableToJSON(revived.result, revived.statistics)).toEqual(json);
    expect([...revived.statistics!.rowShare]).toEqual([...statistics.rowShare]);
    const display = { title: 'GSS', variableLabels: { degree: 'Highest degree' } };
    expect(bannerLayout(revived.result, revived.statistics, display)).toEqual(bannerLayout(result, statistics, display));
    expect(chartToSVG(tableChart(revived.result, revived.statistics!, display))).toBe(chartToSVG(tableChart(result, statistics, display)));
  });

  it('gives a table without statistics back without statistics', async () => {
    const result = await ds.table({ base: '*', rows: [{ variable: 'degree' }], columns: [{ variable: 'sex' }] });
    const revived = tableFromJson(tableToJSON(result));
    expect(revived.statistics).toBeUndefined();
    expect(tableToJSON(revived.result)).toEqual(tableToJSON(result));
  });
});

describe('bannerLayout', () => {
  it('lays out the Total column, banners, base lines and one line per figure, letters beside the vertical %', async () => {
    const result = await ds.table({ base: 'year=2024', rows: [{ variable: 'degree' }], columns: [{ variable: 'sex' }, { variable: 'race' }], missing: 'hide' });
    const statistics = tableStatistics(result, { stats: ['vpct', 'index', 'sig'] });
    const layout = bannerLayout(result, statistics, { variableLabels: { sex: 'Sex', race: 'Race' } });
    expect(layout.banners).toEqual([
      { label: 'Sex', columns: [0, 1] },
      { label: 'Race', columns: [2, 3, 4] },
    ]);
    expect(layout.bases.map((line) => line.total!.value)).toEqual([result.total.weighted / result.units, result.total.respondents]);
    const width = result.columns.length;
    for (const row of layout.rows) {
      expect(row.lines.map((line) => line.name)).toEqual(['Weighted', 'Respondents', 'Vertical %', 'Index']);
      const vpct = row.lines[2]!;
      expect(vpct.total!.value).toBe(statistics.rowShare[row.row]);
      expect(vpct.cells.map((cell) => cell.value)).toEqual([...statistics.columnPct!.subarray(row.row * width, (row.row + 1) * width)]);
      expect(vpct.cells.map((cell) => cell.letters ?? '')).toEqual(statistics.letters!.slice(row.row * width, (row.row + 1) * width));
      expect(row.lines[3]!.total!.value).toBe(100);
    }
    expect(layout.rows[0]!.heading).toBe('degree');
  });
});
