// A cell that holds every respondent of its column (or row, or base) is the same set of
// respondents, but its weights were summed apart (the bitsets plan sums a cell, another pass
// its margin), and sums in another order can differ in the last bit. Found by the live R
// differential test: GSS, base `ballot=NA`, the cell race=3 x race=3 summed to
// 386.41620404445314 against its column's 386.416204044453, so its column proportion was
// 1.0000000000000002, its SE 8.7e-10 instead of 0, its design effect -1.056, and its
// comparison with the race=2 column (p = 0) a "significant" z of -1.1e9. Equal sets now share
// one set of sums: Σw, Σw², per-PSU sums (NHANES), on both execution paths.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDataset, type Dataset } from '../src/facade/dataset.js';
import type { TableResult } from '../src/facade/types.js';
import { tableStatistics } from '../src/report/table-statistics.js';
import type { EngineTable } from '../src/facade/engine.js';
import { shareSameSetSums } from '../src/facade/same-sets.js';

const built = join(__dirname, '..', 'datasets', 'build');

/** Every cell, row total and column total that counts as many respondents as what it lies in has its exact sums. */
function expectSameSetsEqual(table: TableResult): number {
  const width = table.columns.length;
  let same = 0;
  const check = (part: { respondents: number; weighted: number; sumSqWeights: number }, whole: { respondents: number; weighted: number; sumSqWeights: number }) => {
    if (part.respondents !== whole.respondents) return;
    same++;
    expect(part.weighted).toBe(whole.weighted);
    expect(part.sumSqWeights).toBe(whole.sumSqWeights);
  };
  for (const margin of [...table.rowTotals, ...table.columnTotals]) check(margin, table.total);
  for (let r = 0; r < table.rows.length; r++) {
    for (let c = 0; c < width; c++) {
      const cell = table.cell(r, c);
      check(cell, table.rowTotals[r]!);
      check(cell, table.columnTotals[c]!);
    }
  }
  return same;
}

describe.each(['inline', 'pool'] as const)('equal sets of respondents, equal sums (%s)', (execution) => {
  let gss: Dataset;
  let nhanes: Dataset;
  beforeAll(async () => {
    gss = await openDataset(join(built, 'gss.arrow'), { execution, cellCache: 0 });
    nhanes = await openDataset(join(built, 'nhanes.arrow'), { execution, cellCache: 0 });
  });
  afterAll(async () => {
    await gss?.close();
    await nhanes?.close();
  });

  it('the R hunt case: a cell holding its whole column has proportion 1, SE 0, no design effect and no significant test against 0', async () => {
    const table = await gss.table({
      base: 'ballot=NA',
      rows: [{ variable: 'sex' }, { variable: 'race' }, 'NOT padeg=..4.001'],
      columns: ['sex=2 AND age=18..34', { variable: 'race' }, 'NOT fefam=1..2'],
    });
    expect(expectSameSetsEqual(table)).toBeGreaterThan(0);
    const row = table.rows.findIndex((entry) => entry.expr === 'race=3');
    const column = table.columns.findIndex((entry) => entry.expr === 'race=3');
    expect(row).toBeGreaterThanOrEqual(0);
    expect(column).toBeGreaterThanOrEqual(0);
    const at = row * table.columns.length + column;
    expect(table.respondents[at]).toBe(table.columnTotals[column]!.respondents);
    const stats = tableStatistics(table, { stats: ['vpct', 'se', 'deff', 'sig'] });
    expect(stats.columnPct![at]).toBe(1);
    expect(stats.columnPctSE![at]).toBe(0);
    expect(stats.designEffect![at]).toBeNaN();
    for (let i = 0; i < stats.columnPct!.length; i++) {
      expect(stats.columnPct![i]! <= 1 || Number.isNaN(stats.columnPct![i]!)).toBe(true);
      expect(stats.designEffect![i]! >= 0 || Number.isNaN(stats.designEffect![i]!)).toBe(true);
    }
    // A proportion of exactly 1 against one of exactly 0 has no sampling variance to test.
    for (const pair of stats.comparisons!) {
      const p = (c: number) => stats.columnPct![pair.row * table.columns.length + c]!;
      const degenerate = (value: number) => value === 0 || value === 1;
      if (degenerate(p(pair.columnA)) && degenerate(p(pair.columnB))) expect(pair.significant).toBe(false);
    }
  });

  it('compared columns holding the same respondents: the pair table (A AND B) has their sums, and the difference an SE of exactly 0', async () => {
    // In the base 'sex=1 AND race=2' the columns sex=1 and race=2 are the same respondents: the table
    // sums them by the group-by plan, the respondents in both (sex=1 AND race=2) by bitsets, in
    // another order. Before, Var(p_A - p_B) = Var + Var - 2 Cov was a last-bit remainder: an SE of
    // 1.2e-10, or NaN when it fell below 0 (10 of these 38 pairs inline, 5 of them NaN; 22 on the pool, 12 NaN).
    let pairs = 0;
    for (const [base, rows] of [['sex=1 AND race=2', 'polviews'], ['sex=2 AND race=1', 'relig'], ['sex=1 AND race=1', 'padeg'], ['sex=2 AND degree=1', 'relig']] as const) {
      const columns = base.split(' AND ');
      const table = await gss.table({ base, rows: [{ variable: rows }], columns, columnGroups: [[0, 1]], missing: 'hide' });
      expect(table.plan).toBe('groupBy');
      const overlaps = table.overlaps!;
      expect(overlaps.pairs).toEqual([[0, 1]]);
      expect(overlaps.totals[0]).toEqual(table.columnTotals[0]);
      for (let r = 0; r < table.rows.length; r++) {
        const at = r * table.columns.length;
        expect([overlaps.weighted[r], overlaps.sumSqWeights[r], overlaps.respondents[r]]).toEqual([table.weighted[at], table.sumSqWeights[at], table.respondents[at]]);
      }
      const stats = tableStatistics(table, { stats: ['vpct', 'sig'] });
      for (const pair of stats.comparisons!) {
        pairs++;
        expect(pair.difference).toBe(0);
        expect(pair.standardError).toBe(0);
        expect(pair.significant).toBe(false);
      }
    }
    expect(pairs).toBe(38);
  });

  it('a variable crossed with itself: every diagonal cell is its column, also per PSU (NHANES strata and PSUs: SE exactly 0)', async () => {
    for (const [variable, base] of [['RIAGENDR', '*'], ['race', 'HI_CHOL=1'], ['agecat', 'RIAGENDR=2'], ['HI_CHOL', 'race=2..4'], ['race', '*']] as const) {
      // Expressions beside the variables: the bitsets plan, whose cells are summed apart from their margins.
      const table = await nhanes.table({ base: base, rows: [{ variable }, 'agecat=1..2'], columns: ['RIAGENDR=2 AND agecat=2..4', { variable }, 'NOT race=1'] });
      expect(expectSameSetsEqual(table)).toBeGreaterThan(0);
      const stats = tableStatistics(table, { stats: ['vpct', 'se', 'deff'] });
      const width = table.columns.length;
      for (let r = 0; r < table.rows.length; r++) {
        const c = table.columns.findIndex((entry) => entry.expr === table.rows[r]!.expr);
        if (c < 0 || table.respondents[r * width + c] === 0) continue;
        expect(stats.columnPct![r * width + c]).toBe(1);
        expect(stats.columnPctSE![r * width + c]).toBe(0);
        expect(stats.designEffect![r * width + c]).toBeNaN();
      }
    }
  });
});

describe('shareSameSetSums on a hand-made table (1 row x 2 columns; the cell (0,0) holds all of column 0)', () => {
  const sums = (weighted: number, respondents: number) => ({ weighted, respondents, sumSqWeights: weighted * 2 });
  const made = (design: EngineTable['design']): EngineTable => ({
    sums: Float64Array.of(0.30000000000000004, 0.1),
    sumsSq: Float64Array.of(0.6000000000000001, 0.2),
    counts: Float64Array.of(3, 1),
    margins: { rows: [sums(0.4, 4)], columns: [sums(0.3, 3), sums(0.5, 5)] },
    total: sums(0.9, 9),
    plan: 'bitsets',
    execution: 'inline',
    design,
  });

  it('the cell takes its column total, per PSU too; slots are cells, row totals, column totals, the base', () => {
    // 2 PSUs x 5 slots: cell00 cell01 row0 column0 column1 base; per PSU the cell is 1 ulp off its column.
    const slots = 6;
    const cluster = Float64Array.of(0.20000000000000004, 0.05, 0.25, 0.2, 0.3, 0.5, 0.1, 0.05, 0.15, 0.1, 0.2, 0.4);
    const table = made({ kind: 'taylor', psus: { clusters: 2, stratumOf: Int32Array.of(0, 0), strata: 1 } as never, clusterSums: { clusters: 2, slots, sums: cluster } });
    shareSameSetSums(table, 1, 2);
    expect(table.sums[0]).toBe(0.3);
    expect(table.sumsSq[0]).toBe(0.6);
    expect(table.sums[1]).toBe(0.1);
    expect([...cluster]).toEqual([0.2, 0.05, 0.25, 0.2, 0.3, 0.5, 0.1, 0.05, 0.15, 0.1, 0.2, 0.4]);
  });

  it("under replicate weights, each replicate's cell takes its column total", () => {
    const replicate = { weighted: Float64Array.of(0.30000000000000004, 0.1), rowTotals: Float64Array.of(0.4), columnTotals: Float64Array.of(0.3, 0.5), total: 0.9 };
    const table = made({ kind: 'replicate', replicates: [replicate], degreesOfFreedom: 1, scale: 1, rscales: [1], mse: false } as never);
    shareSameSetSums(table, 1, 2);
    expect([...replicate.weighted]).toEqual([0.3, 0.1]);
  });

  it("under replicate weights, every kind of slot is read and written where it lies: the base, a row total, a column total, a cell", () => {
    // Row 0 and column 1 hold the whole base; cell (0,1) lies in both; each is 1 ulp off the base in the replicate.
    const replicate = { weighted: Float64Array.of(0.30000000000000004, 0.9000000000000001), rowTotals: Float64Array.of(0.8999999999999999), columnTotals: Float64Array.of(0.3, 0.9000000000000002), total: 0.9 };
    const table = made({ kind: 'replicate', replicates: [replicate], degreesOfFreedom: 1, scale: 1, rscales: [1], mse: false } as never);
    table.margins.rows[0] = sums(0.9, 9);
    table.margins.columns[1] = sums(0.9, 9);
    table.counts[1] = 9;
    shareSameSetSums(table, 1, 2);
    expect([...replicate.weighted]).toEqual([0.3, 0.9]);
    expect([...replicate.rowTotals]).toEqual([0.9]);
    expect([...replicate.columnTotals]).toEqual([0.3, 0.9]);
    expect(replicate.total).toBe(0.9);
  });

  it("a pair's respondents in both columns join the sets they lie in: two columns of the same respondents get one set of sums", () => {
    // Columns 0 and 1 are the same 3 respondents (their cells and totals 1 ulp apart); the pair table (A AND B) holds them too.
    const table = made({ kind: 'simple', fileRespondents: 9 });
    table.margins.columns[1] = sums(0.30000000000000004, 3);
    table.counts[1] = 3;
    table.sums[1] = 0.29999999999999993;
    const pairs: EngineTable = { ...made({ kind: 'simple', fileRespondents: 9 }), sums: Float64Array.of(0.29999999999999993), sumsSq: Float64Array.of(0.6), counts: Float64Array.of(3), margins: { rows: [sums(0.4, 4)], columns: [sums(0.30000000000000004, 3)] } };
    shareSameSetSums(table, 1, 2, { table: pairs, pairs: [[0, 1]] });
    expect(table.margins.columns[1]!.weighted).toBe(0.3);
    expect(pairs.margins.columns[0]!.weighted).toBe(0.3);
    expect([...table.sums]).toEqual([0.3, 0.3]);
    expect([...table.sumsSq]).toEqual([0.6, 0.6]);
    expect(pairs.sums[0]).toBe(0.3);
  });

  it('a margin holding the whole base takes the base sums, and its cells follow', () => {
    const table = made({ kind: 'simple', fileRespondents: 9 });
    table.margins.columns[1] = sums(0.9000000000000001, 9);
    table.counts[1] = 9;
    table.sums[1] = 0.8999999999999999;
    table.margins.rows[0] = sums(0.9000000000000002, 9);
    table.counts[0] = 3;
    shareSameSetSums(table, 1, 2);
    expect(table.margins.columns[1]!.weighted).toBe(0.9);
    expect(table.margins.rows[0]!.weighted).toBe(0.9);
    expect(table.sums[1]).toBe(0.9);
    expect(table.sums[0]).toBe(0.3);
  });
});
