// JSON, CSV, Arrow and text renderings of a table carry the same figures as tableStatistics().
import { tableFromIPC } from 'apache-arrow';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset, type TableResult } from '../../src/index.js';
import {
  TABLE_METADATA_KEY,
  tableStatistics,
  tableToArrow,
  tableToArrowIPC,
  tableToCSV,
  tableToJSON,
  tableToText,
  type TableStatistics,
} from '../../src/report/index.js';

const FIELDS = ['columnPct', 'rowPct', 'tablePct', 'index', 'effectiveBase', 'designEffect', 'columnPctSE', 'columnPctMoE', 'weightedSE', 'weightedMoE'] as const;

describe('table output formats', () => {
  let ds: Dataset;
  let result: TableResult;
  let statistics: TableStatistics;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').gss);
    // relig has small cells (caution and very unstable); degree=3..4 is a stand-alone column with empty cells.
    result = await ds.table({
      base: 'year=2024',
      rows: [{ variable: 'degree' }, { variable: 'relig' }],
      columns: [{ variable: 'sex' }, { variable: 'race' }, { expr: 'degree=3..4', label: 'BA+, "quoted", label' }],
      // Positions below are those of the value entries; "No answer" entries: test/missing-answers.test.ts.
      missing: 'hide',
    });
    statistics = tableStatistics(result, { stats: 'all', correction: 'holm' });
    return () => ds.close();
  });

  it('JSON: cells[row][column] hold the sums and every statistic; NaN becomes null', () => {
    const json = JSON.parse(JSON.stringify(tableToJSON(result, statistics)));
    const width = result.columns.length;
    expect(json.base).toBe('year=2024');
    expect(json.weight).toBe('wtssps');
    expect(json.units).toBe(1);
    expect(json.total.respondents).toBe(result.total.respondents);
    expect(json.rows.length).toBe(result.rows.length);
    expect(json.columns[0]).toEqual({ label: 'Male', expr: 'sex=1', variable: 'sex', value: '1', group: 0, letter: 'A' });
    expect(json.columns[5]).toEqual({ label: 'BA+, "quoted", label', expr: 'degree=3..4' });
    expect(json.statistics).toMatchObject({ se: 'linearization', test: 'linearization', correction: 'holm', alpha: 0.05, domain: 'file', designRespondents: ds.info.respondents });
    let nulls = 0;
    result.rows.forEach((_, r) =>
      result.columns.forEach((__, c) => {
        const cell = json.cells[r][c];
        const at = r * width + c;
        expect(cell.weighted).toBe(result.weighted[at]);
        expect(cell.respondents).toBe(result.respondents[at]);
        expect(cell.sumSqWeights).toBe(result.sumSqWeights[at]);
        expect(cell.stability).toBe(result.cell(r, c).stability);
        for (const field of FIELDS) {
          const value = statistics[field]![at]!;
          if (Number.isFinite(value)) expect(cell[field]).toBe(value);
          else {
            expect(cell[field]).toBeNull();
            nulls++;
          }
        }
        expect(cell.letters).toBe(statistics.letters![at]);
      }),
    );
    expect(nulls).toBeGreaterThan(0);
    expect(json.comparisons.length).toBe(statistics.comparisons!.length);
    expect(json.columnGroups.map((g: { variable: string }) => g.variable)).toEqual(['sex', 'race']);
  });

  it('Arrow round-trips through IPC bytes with the same figures', () => {
    const table = tableFromIPC(tableToArrowIPC(result, statistics));
    const width = result.columns.length;
    expect(table.numRows).toBe(result.rows.length * width);
    expect(table.schema.fields.map((f) => f.name)).toEqual([
      'row', 'rowLabel', 'rowExpr', 'column', 'columnLabel', 'columnExpr', 'columnLetter', 'weighted', 'respondents', 'sumSqWeights', 'stability',
      ...FIELDS, 'letters',
    ]);
    const context = JSON.parse(table.schema.metadata.get(TABLE_METADATA_KEY)!);
    expect(context.base).toBe('year=2024');
    expect(context.total.weighted).toBe(result.total.weighted);
    expect(context.statistics.correction).toBe('holm');
    for (let at = 0; at < table.numRows; at++) {
      const row = table.get(at)!.toJSON();
      const r = Math.floor(at / width);
      const c = at % width;
      expect(row['row']).toBe(r);
      expect(row['column']).toBe(c);
      expect(row['rowLabel']).toBe(result.rows[r]!.label);
      expect(row['columnLabel']).toBe(result.columns[c]!.label);
      expect(row['columnLetter']).toBe(statistics.columnLetters[c]);
      expect(row['weighted']).toBe(result.weighted[at]);
      expect(row['respondents']).toBe(result.respondents[at]);
      expect(row['sumSqWeights']).toBe(result.sumSqWeights[at]);
      expect(row['stability']).toBe(result.cell(r, c).stability);
      for (const field of FIELDS) {
        const value = statistics[field]![at]!;
        expect(row[field]).toBe(Number.isFinite(value) ? value : null);
      }
      expect(row['letters']).toBe(statistics.letters![at]);
    }
    // Without statistics: the sums only.
    expect(tableToArrow(result).schema.fields.length).toBe(11);
  });

  it('CSV: one line per cell, quoted labels, proportions in full precision', () => {
    const lines = tableToCSV(result, statistics).trimEnd().split('\n');
    expect(lines.length).toBe(1 + result.rows.length * result.columns.length);
    const header = lines[0]!.split(',');
    expect(header.slice(0, 11)).toEqual(['row', 'rowLabel', 'rowExpr', 'column', 'columnLabel', 'columnExpr', 'columnLetter', 'weighted', 'respondents', 'sumSqWeights', 'stability']);
    expect(header.at(-1)).toBe('letters');
    const first = lines[1]!.split(',');
    expect(first.slice(0, 7)).toEqual(['0', 'Less than high school', 'degree=0', '0', 'Male', 'sex=1', 'A']);
    expect(Number(first[header.indexOf('columnPct')])).toBe(statistics.columnPct![0]);
    expect(Number(first[header.indexOf('weighted')])).toBe(result.weighted[0]);
    expect(lines[6]).toContain(',"BA+, ""quoted"", label",degree=3..4,,');
  });

  it('text: labels, banners, letters and * / ** markers with a legend', () => {
    const text = tableToText(result, statistics, { title: 'GSS 2024', variableLabels: { sex: 'Sex', race: 'Race' } });
    expect(text).toMatch(/^GSS 2024\n/);
    for (const label of ['Less than high school', 'Protestant', 'Male', 'Female', 'White', 'Black', 'Other', 'Sex', 'Race', 'Total', 'Base', '(A)', '(C)']) {
      expect(text).toContain(label);
    }
    expect(text).toContain('vertical %');
    expect(text).toContain('12.4%');
    const lines = text.split('\n');
    const caution = lines.find((line) => /^\s+respondents/.test(line) && / 41  \*/.test(line));
    expect(caution, 'a caution cell (41 respondents) marked *').toBeDefined();
    const jewish = lines.findIndex((line) => line.startsWith('Jewish'));
    expect(lines[jewish + 1]).toMatch(/\d \*\*/);
    expect(text).toContain('* use with caution: 31–60 respondents; ** very unstable: 30 or fewer');
    expect(text).toContain('letters: the cell');
    expect(text).toContain('holm');
  });
});

describe('the statistics registry', () => {
  it('lists every per-cell figure once, in output order, and every statistic but sig and chisq has one', async () => {
    const { FIGURES, STAT_NAMES } = await import('../../src/report/statistics.js');
    expect(FIGURES.map((figure) => figure.field)).toEqual([...FIELDS]);
    expect(STAT_NAMES.filter((name) => !FIGURES.some((figure) => figure.stat === name))).toEqual(['sig', 'chisq']);
  });
});
