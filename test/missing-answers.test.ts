// Tables' "No answer" entries (missing: show | hide) and valid percentages (percentBase),
// on GSS 2024 sex x race: figures against a plain scan of the CSV and against R's survey
// package (test/fixtures/r/missing.reference.json, make-missing-reference.R).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { buildDataset, CrosstabError, ErrorCode, openDataset, parseExpression, type Dataset, type TableQuery, type TableResult } from '../src/index.js';
import { tableStatistics, type TableStatistics } from '../src/report/index.js';
import { gssCsv, rFixtures } from './support/paths.js';

const BASE = 'year=2024';
type Code = '1' | '2' | '3' | 'NA';

/** Σw and n of GSS 2024 by (sex, race) codes, blank = NA: a plain scan of the CSV, in f64. */
function scanGss(): { cell(sex: Code | '*', race: Code | '*', weighted: boolean): number } {
  const lines = gunzipSync(readFileSync(gssCsv)).toString('utf8').trimEnd().split('\n');
  const header = lines[0]!.split(',');
  const [year, sex, race, weight] = ['year', 'sex', 'race', 'wtssps'].map((name) => header.indexOf(name));
  const records = lines.slice(1).map((line) => line.split(',')).filter((fields) => fields[year!] === '2024');
  const code = (text: string): Code => (text === '' ? 'NA' : (text as Code));
  return {
    cell(s, r, weighted) {
      let sum = 0;
      for (const fields of records) {
        if (s !== '*' && code(fields[sex!]!) !== s) continue;
        if (r !== '*' && code(fields[race!]!) !== r) continue;
        sum += weighted ? Number(fields[weight!]) : 1;
      }
      return sum;
    },
  };
}

interface ReferenceCell {
  sex: Code;
  race: Code;
  weighted: number;
  respondents: number;
  columnPct: number;
  columnPctSE: number;
  validColumnPct?: number;
  validColumnPctSE?: number;
  validRowPct?: number;
  validTablePct?: number;
}
const reference = JSON.parse(readFileSync(join(rFixtures, 'missing.reference.json'), 'utf8')) as {
  baseRespondents: number;
  baseWeighted: number;
  cells: ReferenceCell[];
  validContrasts: Array<{ sex: string; raceA: string; raceB: string; difference: number; standardError: number; pValue: number }>;
  raoScott: { statistic: number; ndf: number; ddf: number; pValue: number };
  taylor: { base: string; cells: Array<{ degree: string; sex: string; columnPct: number; columnPctSE: number; validColumnPct?: number; validColumnPctSE?: number }> };
};

const relative = (a: number, b: number) => (a === b ? 0 : Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b)));
const codeOf = (entry: { value?: string; missing?: true }): Code => (entry.missing ? 'NA' : (entry.value as Code));

const scan = scanGss();

describe.each(['inline', 'pool'] as const)('"No answer" entries, %s', (execution) => {
  let ds: Dataset;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').gss, { execution });
    return () => ds.close();
  });
  const table = (query: Partial<TableQuery>) => ds.table({ base: BASE, rows: [{ variable: 'sex' }], columns: [{ variable: 'race' }], ...query });

  describe.each([
    ['weighted', undefined],
    ['unweighted', null],
  ] as const)('%s', (_name, weight) => {
    const weighted = weight === undefined;
    it.each([
      ['rows and columns', [{ variable: 'sex' }], [{ variable: 'race' }]],
      ['rows only', [{ variable: 'sex' }], ['*']],
      ['columns only', ['*'], [{ variable: 'race' }]],
    ] as const)('%s: the entries add up to the base, and every cell equals the scan of the CSV', async (_axes, rows, columns) => {
      const result = await table({ rows: [...rows], columns: [...columns], weight });
      const total = result.total;
      expect(total.respondents).toBe(scan.cell('*', '*', false));
      expect(relative(total.weighted, scan.cell('*', '*', weighted))).toBeLessThan(1e-12);
      for (const [axis, entries, totals] of [['rows', result.rows, result.rowTotals], ['columns', result.columns, result.columnTotals]] as const) {
        if (entries[0]!.variable === undefined) continue;
        const missing = entries.filter((entry) => entry.missing);
        expect(missing, axis).toEqual([{ label: 'No answer', expr: `${entries[0]!.variable}=NA`, variable: entries[0]!.variable, missing: true }]);
        expect(entries.at(-1)!.missing, 'after the values').toBe(true);
        // Respondents add up exactly; weights to the last bits of a sum in another order.
        expect(totals.reduce((sum, cell) => sum + cell.respondents, 0)).toBe(total.respondents);
        const sum = totals.reduce((acc, cell) => acc + cell.weighted, 0);
        if (weighted) expect(relative(sum, total.weighted)).toBeLessThan(1e-12);
        else expect(sum).toBe(total.weighted);
      }
      const width = result.columns.length;
      result.rows.forEach((row, r) => {
        const sex = row.variable ? codeOf(row) : '*';
        result.columns.forEach((column, c) => {
          const race = column.variable ? codeOf(column) : '*';
          expect(result.respondents[r * width + c], `${sex} x ${race}`).toBe(scan.cell(sex, race, false));
          expect(relative(result.weighted[r * width + c]!, scan.cell(sex, race, weighted)), `${sex} x ${race}`).toBeLessThan(1e-12);
        });
        // Each column's cells add up to the column total: no respondent of the base is left out.
      });
      result.columns.forEach((_, c) => {
        expect(result.rows.reduce((sum, __, r) => sum + result.respondents[r * width + c]!, 0)).toBe(result.columnTotals[c]!.respondents);
      });
    });
  });

  it('the "No answer" expression selects exactly those respondents', async () => {
    const result = await table({});
    for (const [entries, totals] of [[result.rows, result.rowTotals], [result.columns, result.columnTotals]] as const) {
      const at = entries.findIndex((entry) => entry.missing);
      const entry = entries[at]!;
      expect(parseExpression(entry.expr)).toMatchObject({ var: entry.variable, missing: true });
      const [cell] = (await ds.crosstab({ base: BASE, targets: [entry.expr] })).targets;
      expect(cell!.respondents).toBe(totals[at]!.respondents);
      expect(relative(cell!.weighted, totals[at]!.weighted)).toBeLessThan(1e-12);
      const code = entry.variable === 'sex' ? scan.cell('NA', '*', false) : scan.cell('*', 'NA', false);
      expect(cell!.respondents).toBe(code);
    }
  });

  it('hide: the value entries only, the same cells as the values written as expressions', async () => {
    const hidden = await table({ missing: 'hide' });
    expect(hidden.missing).toBe('hide');
    expect(hidden.rows.map((row) => row.expr)).toEqual(['sex=1', 'sex=2']);
    expect(hidden.columns.map((column) => column.expr)).toEqual(['race=1', 'race=2', 'race=3']);
    const written = await ds.table({ base: BASE, rows: ['sex=1', 'sex=2'], columns: ['race=1', 'race=2', 'race=3'] });
    expect([...hidden.respondents]).toEqual([...written.respondents]);
    expect([...hidden.weighted]).toEqual([...written.weighted]);
    expect([...hidden.sumSqWeights]).toEqual([...written.sumSqWeights]);
    expect(hidden.rowTotals).toEqual(written.rowTotals);
    expect(hidden.columnTotals).toEqual(written.columnTotals);
  });

  it('a variable with no blank in the base gets no "No answer" entry', async () => {
    const answered = await ds.table({ base: `${BASE} AND sex=1,2`, rows: [{ variable: 'sex' }], columns: [{ variable: 'race' }, { variable: 'year' }] });
    expect(answered.rows.map((row) => row.expr)).toEqual(['sex=1', 'sex=2']);
    // race has blanks in this base; year has none anywhere.
    expect(answered.columns.filter((column) => column.missing).map((column) => column.expr)).toEqual(['race=NA']);
  });

  it('several variables per axis (multi-variable group-by) give the "No answer" cells of bitset tiles', async () => {
    const rows = [{ variable: 'sex' }, { variable: 'degree' }];
    const multi = await table({ rows, columns: [{ variable: 'race' }, { variable: 'sex' }] });
    const tiled = await table({ rows, columns: [{ variable: 'race' }, { variable: 'sex' }, '*'] });
    expect([multi.plan, tiled.plan]).toEqual(['groupBy', 'bitsets']);
    expect(multi.rows.filter((row) => row.missing).map((row) => row.expr)).toEqual(['sex=NA', 'degree=NA']);
    const width = multi.columns.length;
    multi.rows.forEach((_, r) => {
      for (let c = 0; c < width; c++) {
        expect(tiled.respondents[r * (width + 1) + c]).toBe(multi.respondents[r * width + c]);
        expect(relative(tiled.weighted[r * (width + 1) + c]!, multi.weighted[r * width + c]!)).toBeLessThan(1e-12);
      }
    });
  });

  it('the "No answer" entry goes by every plan: group-by with it on the axis, bitset tiles beside an expression', async () => {
    const grouped = await table({});
    const tiled = await table({ rows: [{ variable: 'sex' }, 'degree=3..4'] });
    expect([grouped.plan, tiled.plan]).toEqual(['groupBy', 'bitsets']);
    expect([grouped.rows.at(-1)!.expr, grouped.columns.at(-1)!.expr, tiled.rows[2]!.expr]).toEqual(['sex=NA', 'race=NA', 'sex=NA']);
    const width = grouped.columns.length;
    for (let r = 0; r < grouped.rows.length; r++) {
      for (let c = 0; c < width; c++) {
        expect(tiled.respondents[r * width + c]).toBe(grouped.respondents[r * width + c]);
        expect(relative(tiled.weighted[r * width + c]!, grouped.weighted[r * width + c]!)).toBeLessThan(1e-12);
      }
    }
  });
});

describe('statistics with "No answer" entries and valid percentages', () => {
  let ds: Dataset;
  let shown: TableResult;
  let hidden: TableResult;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').gss);
    shown = await ds.table({ base: BASE, rows: [{ variable: 'sex' }], columns: [{ variable: 'race' }] });
    hidden = await ds.table({ base: BASE, rows: [{ variable: 'sex' }], columns: [{ variable: 'race' }], missing: 'hide' });
    return () => ds.close();
  });
  const at = (result: TableResult, sex: Code, race: Code) => {
    const r = result.rows.findIndex((row) => codeOf(row) === sex);
    const c = result.columns.findIndex((column) => codeOf(column) === race);
    return r < 0 || c < 0 ? -1 : r * result.columns.length + c;
  };

  it.each(['total', 'valid'] as const)('%s: every figure of the answered cells, the tests and Rao-Scott are the same shown or hidden', (percentBase) => {
    const options = { stats: 'all', percentBase, correction: 'holm' } as const;
    const a = tableStatistics(shown, options);
    const b = tableStatistics(hidden, options);
    for (const field of ['columnPct', 'rowPct', 'tablePct', 'index', 'effectiveBase', 'designEffect', 'columnPctSE', 'columnPctMoE', 'weightedSE', 'weightedMoE'] as const) {
      for (const sex of ['1', '2'] as const) {
        for (const race of ['1', '2', '3'] as const) expect(a[field]![at(shown, sex, race)], `${field} ${sex} ${race}`).toBe(b[field]![at(hidden, sex, race)]);
      }
    }
    const pairs = (s: TableStatistics, result: TableResult) =>
      s.comparisons!.map((pair) => ({ ...pair, row: result.rows[pair.row]!.expr, columnA: result.columns[pair.columnA]!.expr, columnB: result.columns[pair.columnB]!.expr }));
    expect(pairs(a, shown)).toEqual(pairs(b, hidden));
    expect(a.raoScott!.map(({ statistic, ndf, ddf, pValue }) => [statistic, ndf, ddf, pValue])).toEqual(b.raoScott!.map(({ statistic, ndf, ddf, pValue }) => [statistic, ndf, ddf, pValue]));
    // The "No answer" row and column: no letters, in no group, never compared.
    const noAnswerRow = shown.rows.findIndex((row) => row.missing);
    const noAnswerColumn = shown.columns.findIndex((column) => column.missing);
    expect(a.columnLetters[noAnswerColumn]).toBeNull();
    expect(a.groups.flatMap((group) => group.columns)).not.toContain(noAnswerColumn);
    expect(a.comparisons!.some((pair) => pair.row === noAnswerRow || pair.columnA === noAnswerColumn || pair.columnB === noAnswerColumn)).toBe(false);
    shown.columns.forEach((_, c) => expect(a.letters![noAnswerRow * shown.columns.length + c]).toBe(''));
    shown.rows.forEach((_, r) => expect(a.letters![r * shown.columns.length + noAnswerColumn]).toBe(''));
  });

  it('total percentages and SEs of every cell, "No answer" ones included, equal R to 1e-9', () => {
    const s = tableStatistics(shown, { stats: ['vpct', 'se'] });
    expect(s.percentBase).toBe('total');
    for (const cell of reference.cells) {
      const i = at(shown, cell.sex, cell.race);
      expect(shown.respondents[i]).toBe(cell.respondents);
      expect(relative(shown.weighted[i]!, cell.weighted), `${cell.sex} ${cell.race}`).toBeLessThan(1e-9);
      expect(relative(s.columnPct![i]!, cell.columnPct), `${cell.sex} ${cell.race}`).toBeLessThan(1e-9);
      expect(relative(s.columnPctSE![i]!, cell.columnPctSE), `${cell.sex} ${cell.race}`).toBeLessThan(1e-9);
    }
    expect(shown.total.respondents).toBe(reference.baseRespondents);
  });

  it('valid percentages, their SEs and column tests equal R to 1e-9; "No answer" is outside the valid base', async () => {
    const fromQuery = await ds.table({ base: BASE, rows: [{ variable: 'sex' }], columns: [{ variable: 'race' }], percentBase: 'valid' });
    const s = tableStatistics(fromQuery, { stats: ['vpct', 'hpct', 'tpct', 'se', 'sig'] });
    expect(s.percentBase).toBe('valid');
    for (const cell of reference.cells) {
      const i = at(shown, cell.sex, cell.race);
      const check = (value: number, expected: number | undefined, what: string) => {
        if (expected === undefined) expect(value, `${what} ${cell.sex} ${cell.race}`).toBeNaN();
        else expect(relative(value, expected), `${what} ${cell.sex} ${cell.race}`).toBeLessThan(1e-9);
      };
      check(s.columnPct![i]!, cell.validColumnPct, 'vpct');
      check(s.columnPctSE![i]!, cell.validColumnPctSE, 'SE');
      check(s.rowPct![i]!, cell.validRowPct, 'hpct');
      check(s.tablePct![i]!, cell.validTablePct, 'tpct');
    }
    for (const expected of reference.validContrasts) {
      const row = fromQuery.rows.findIndex((entry) => entry.value === expected.sex);
      const pair = s.comparisons!.find(
        (candidate) => candidate.row === row && fromQuery.columns[candidate.columnA]!.value === expected.raceA && fromQuery.columns[candidate.columnB]!.value === expected.raceB,
      )!;
      expect(relative(pair.difference, expected.difference)).toBeLessThan(1e-9);
      expect(relative(pair.standardError, expected.standardError)).toBeLessThan(1e-9);
      expect(relative(pair.pValue, expected.pValue)).toBeLessThan(1e-9);
    }
  });

  it('valid percentages add up to 100% over the answered categories', () => {
    const s = tableStatistics(shown, { stats: ['vpct', 'hpct', 'tpct'], percentBase: 'valid' });
    const width = shown.columns.length;
    const valueRows = shown.rows.flatMap((row, r) => (row.missing ? [] : [r]));
    const valueColumns = shown.columns.flatMap((column, c) => (column.missing ? [] : [c]));
    for (let c = 0; c < width; c++) expect(valueRows.reduce((sum, r) => sum + s.columnPct![r * width + c]!, 0)).toBeCloseTo(1, 12);
    for (const r of valueRows) expect(valueColumns.reduce((sum, c) => sum + s.rowPct![r * width + c]!, 0)).toBeCloseTo(1, 12);
    expect(valueRows.reduce((sum, r) => sum + valueColumns.reduce((inner, c) => inner + s.tablePct![r * width + c]!, 0), 0)).toBeCloseTo(1, 12);
    // Total percentages of the value rows fall short by the "No answer" row's share; with it they add up.
    const total = tableStatistics(shown, { stats: ['vpct'] });
    for (let c = 0; c < width; c++) {
      expect(valueRows.reduce((sum, r) => sum + total.columnPct![r * width + c]!, 0)).toBeLessThan(1);
      expect(shown.rows.reduce((sum, _, r) => sum + total.columnPct![r * width + c]!, 0)).toBeCloseTo(1, 12);
    }
  });

  it('Rao-Scott on the answered categories equals R svychisq', () => {
    const [test] = tableStatistics(shown, { stats: ['chisq'] }).raoScott!;
    expect(test!.rows.map((r) => shown.rows[r]!.expr)).toEqual(['sex=1', 'sex=2']);
    expect(test!.columns.map((c) => shown.columns[c]!.expr)).toEqual(['race=1', 'race=2', 'race=3']);
    expect(relative(test!.statistic, reference.raoScott.statistic)).toBeLessThan(1e-9);
    expect(relative(test!.ddf, reference.raoScott.ddf)).toBeLessThan(1e-9);
    expect(relative(test!.pValue, reference.raoScott.pValue)).toBeLessThan(1e-9);
  });

  it('refuses a bad missing or percentBase, naming it', async () => {
    const refused = async (query: Partial<TableQuery>) => {
      const error = await ds.table({ base: BASE, rows: [{ variable: 'sex' }], columns: ['*'], ...query }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(CrosstabError);
      return error as CrosstabError;
    };
    const missing = await refused({ missing: 'omit' as never });
    expect([missing.code, missing.details.field]).toEqual([ErrorCode.invalidOption, 'missing']);
    const percentBase = await refused({ percentBase: 'answered' as never });
    expect([percentBase.code, percentBase.details.field]).toEqual([ErrorCode.invalidOption, 'percentBase']);
    expect(() => tableStatistics(shown, { percentBase: 'answered' as never })).toThrow(expect.objectContaining({ code: ErrorCode.invalidOption, details: expect.objectContaining({ field: 'options.percentBase' }) }));
  });
});


describe('valid percentages under strata and PSUs', () => {
  it('the valid vertical % and its Taylor SE of every cell (and the total ones of the "No answer" row) equal R to 1e-9', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'crosstab-missing-taylor-'));
    try {
      const out = join(folder, 'gss-design.arrow');
      await buildDataset(join(rFixtures, 'gss-design.csv.gz'), { weights: ['wtssps'], survey: 'GSS', out, design: { strata: 'vstrat', psu: 'vpsu', nest: true } });
      const ds = await openDataset(out);
      try {
        const result = await ds.table({ base: reference.taylor.base, rows: [{ variable: 'degree' }], columns: [{ variable: 'sex' }] });
        const total = tableStatistics(result, { stats: ['vpct', 'se'] });
        const valid = tableStatistics(result, { stats: ['vpct', 'se'], percentBase: 'valid' });
        expect(total.variance).toBe('taylor');
        const width = result.columns.length;
        for (const cell of reference.taylor.cells) {
          const r = result.rows.findIndex((row) => codeOf(row) === cell.degree);
          const c = result.columns.findIndex((column) => codeOf(column) === cell.sex);
          const at = r * width + c;
          const where = `degree ${cell.degree} sex ${cell.sex}`;
          expect(relative(total.columnPct![at]!, cell.columnPct), where).toBeLessThan(1e-9);
          expect(relative(total.columnPctSE![at]!, cell.columnPctSE), where).toBeLessThan(1e-9);
          if (cell.validColumnPct === undefined) {
            expect(valid.columnPct![at]).toBeNaN();
            continue;
          }
          expect(relative(valid.columnPct![at]!, cell.validColumnPct), where).toBeLessThan(1e-9);
          expect(relative(valid.columnPctSE![at]!, cell.validColumnPctSE!), where).toBeLessThan(1e-9);
        }
      } finally {
        await ds.close();
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
