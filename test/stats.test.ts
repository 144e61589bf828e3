import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  adjustPValues,
  columnLetter,
  columnProportion,
  compareProportions,
  designEffect,
  erfc,
  horizontalPercent,
  index,
  kishDesignEffect,
  kishEffectiveBase,
  kishStandardError,
  linearizationStandardError,
  marginOfError,
  normalCdf,
  normalUpperTail,
  proportionStandardError,
  tablePercent,
  testColumns,
  totalStandardError,
  twoSidedPValue,
  verticalPercent,
  type CellSums,
  type ColumnCell,
  type Correction,
} from '../src/stats/index.js';
import { isCrosstabError } from '../src/errors.js';

/*
 * Every statistic of src/stats, computed from the per-cell Σw, n and Σw² that
 * test/fixtures/r/make-reference.R wrote, against the figures R's survey package
 * computed from the microdata (svymean, svyby, svytotal, svycontrast, svyttest,
 * prop.test, p.adjust, pnorm). Tolerance: relative 1e-9, or absolute 1e-12 near zero.
 */

type Nullable = number | null;

interface FixtureCell {
  row: string;
  columnVariable: string;
  column: number;
  letter: string;
  cell: CellSums;
  columnTotal: CellSums;
  svytotal: number;
  svytotalSE: number;
  proportion: number;
  verticalPct: number;
  horizontalPct: number;
  tablePct: number;
  index: number;
  se: number;
  seFullFileDesign: number;
  marginOfError95: number;
  deff: Nullable;
  deffReplacement: Nullable;
  kishEffectiveBase: number;
  kishSE: number;
  letters?: Record<Correction, string>;
}

interface FixtureComparison {
  row: string;
  columnVariable: string;
  columnA: number;
  columnB: number;
  difference: number;
  se: number;
  z: Nullable;
  p: Nullable;
  svyttestT: Nullable;
  pooledEffectiveZ: Nullable;
  pooledEffectiveP: Nullable;
  pBonferroni: Nullable;
  pHolm: Nullable;
}

interface FixtureTable {
  id: string;
  base: string;
  designRespondents: number;
  fileRespondents: number;
  total: CellSums;
  columnVariables: Array<{ variable: string; columns: Array<{ code: number; letter: string; total: CellSums }> }>;
  rows: Array<{ id: string; total: CellSums; share: number }>;
  cells: FixtureCell[];
  comparisons: FixtureComparison[];
}

interface Fixture {
  meta: { r: string; survey: string; qnorm975: number };
  normalTail: Array<{ z: number; upperTail: number; twoSided: number }>;
  tables: FixtureTable[];
}

const fixture = JSON.parse(
  readFileSync(new URL('./fixtures/r/tables.reference.json', import.meta.url), 'utf8'),
) as Fixture;

const RELATIVE = 1e-9;
const ABSOLUTE = 1e-12;

/** Largest relative error seen per statistic (where |R| > ABSOLUTE), for docs/statistics.md. */
const worst = new Map<string, { relative: number; count: number }>();

function expectClose(statistic: string, actual: number, expected: Nullable, where: string): void {
  if (expected === null) {
    expect(Number.isFinite(actual), `${statistic} at ${where}: R has no value, we have ${actual}`).toBe(false);
    return;
  }
  const error = Math.abs(actual - expected);
  const relative = Math.abs(expected) > ABSOLUTE ? error / Math.abs(expected) : 0;
  const seen = worst.get(statistic) ?? { relative: 0, count: 0 };
  worst.set(statistic, { relative: Math.max(seen.relative, relative), count: seen.count + 1 });
  const ok = error <= ABSOLUTE || relative <= RELATIVE;
  expect(ok, `${statistic} at ${where}: ${actual} vs R ${expected} (relative error ${relative.toExponential(2)})`).toBe(true);
}

afterAll(() => {
  const summary = [...worst.entries()].map(([statistic, { relative, count }]) => ({
    statistic,
    compared: count,
    maxRelativeError: relative.toExponential(2),
  }));
  console.log(`R ${fixture.meta.r}, survey ${fixture.meta.survey}`);
  console.table(summary);
});

function rowTotal(table: FixtureTable, row: string): CellSums {
  const found = table.rows.find((candidate) => candidate.id === row);
  if (found === undefined) throw new Error(`fixture: no row ${row} in ${table.id}`);
  return found.total;
}

function cellAt(cell: FixtureCell): string {
  return `${cell.row} × ${cell.columnVariable}=${cell.column}`;
}

describe.each(fixture.tables)('R survey reference $id (base $base)', (table) => {
  it('has cells, rows and comparisons to check', () => {
    expect(table.cells.length).toBeGreaterThan(10);
    expect(table.comparisons.length).toBeGreaterThan(5);
  });

  it('percentages and index match', () => {
    for (const cell of table.cells) {
      const row = rowTotal(table, cell.row);
      const where = cellAt(cell);
      expectClose('proportion (svymean)', columnProportion(cell.cell, cell.columnTotal), cell.proportion, where);
      expectClose('vertical %', verticalPercent(cell.cell, cell.columnTotal), cell.verticalPct, where);
      expectClose('horizontal %', horizontalPercent(cell.cell, row), cell.horizontalPct, where);
      expectClose('table % (svymean)', tablePercent(cell.cell, table.total), cell.tablePct, where);
      expectClose('index', index(cell.cell, row, cell.columnTotal, table.total), cell.index, where);
      expectClose('weighted total (svytotal)', cell.cell.weighted, cell.svytotal, where);
    }
  });

  it('column totals are the column variable totals', () => {
    for (const cell of table.cells) {
      const variable = table.columnVariables.find((candidate) => candidate.variable === cell.columnVariable);
      const column = variable?.columns.find((candidate) => candidate.code === cell.column);
      expect(column?.total).toEqual(cell.columnTotal);
      expect(column?.letter).toBe(cell.letter);
    }
  });

  it('linearization SEs match svyby(svymean) with the design n', () => {
    for (const cell of table.cells) {
      const where = cellAt(cell);
      const se = linearizationStandardError(cell.cell, cell.columnTotal, table.designRespondents);
      expectClose('SE, linearization (design = base rows)', se, cell.se, where);
      expectClose(
        'SE, linearization (design = whole file, subset to base)',
        linearizationStandardError(cell.cell, cell.columnTotal, table.fileRespondents),
        cell.seFullFileDesign,
        where,
      );
      expectClose('95% margin of error', marginOfError(se), cell.marginOfError95, where);
      expectClose('SE of total (svytotal)', totalStandardError(cell.cell, table.designRespondents), cell.svytotalSE, where);
      expect(proportionStandardError(cell.cell, cell.columnTotal, { designRespondents: table.designRespondents })).toBe(se);
    }
  });

  it('design effects and Kish figures match', () => {
    for (const cell of table.cells) {
      const where = cellAt(cell);
      const n = table.designRespondents;
      expectClose(
        'deff (svymean deff=TRUE)',
        designEffect(cell.cell, cell.columnTotal, n, { populationCorrection: true }),
        cell.deff,
        where,
      );
      expectClose('deff (SRS with replacement)', designEffect(cell.cell, cell.columnTotal, n), cell.deffReplacement, where);
      expectClose('Kish effective base', kishEffectiveBase(cell.columnTotal), cell.kishEffectiveBase, where);
      expectClose('SE, Kish', kishStandardError(cell.cell, cell.columnTotal), cell.kishSE, where);
      expect(proportionStandardError(cell.cell, cell.columnTotal, { method: 'kish' })).toBe(
        kishStandardError(cell.cell, cell.columnTotal),
      );
      const kishDeff = kishDesignEffect(cell.columnTotal);
      expect(Math.abs(kishDeff * kishEffectiveBase(cell.columnTotal) - cell.columnTotal.respondents)).toBeLessThan(1e-9);
    }
  });

  const columnCell = (row: string, variable: string, code: number): ColumnCell => {
    const cell = table.cells.find((c) => c.row === row && c.columnVariable === variable && c.column === code);
    if (cell === undefined) throw new Error(`fixture: no cell ${row} × ${variable}=${code}`);
    return { cell: cell.cell, column: cell.columnTotal };
  };

  it('column z-tests match svycontrast / svyttest and prop.test', () => {
    for (const pair of table.comparisons) {
      const where = `${pair.row} × ${pair.columnVariable} ${pair.columnA} vs ${pair.columnB}`;
      const a = columnCell(pair.row, pair.columnVariable, pair.columnA);
      const b = columnCell(pair.row, pair.columnVariable, pair.columnB);
      const linear = compareProportions(a, b, { designRespondents: table.designRespondents });
      expectClose('difference of proportions (svycontrast)', linear.difference, pair.difference, where);
      expectClose('SE of difference (svycontrast)', linear.standardError, pair.se, where);
      expectClose('z, linearization (svycontrast)', linear.z, pair.z, where);
      expectClose('z, linearization (svyttest t)', linear.z, pair.svyttestT, where);
      expectClose('p, linearization (2*pnorm)', linear.pValue, pair.p, where);
      if (pair.pooledEffectiveZ !== null) {
        const pooled = compareProportions(a, b, { method: 'pooled-effective' });
        expectClose('z, pooled effective base (prop.test)', pooled.z, pair.pooledEffectiveZ, where);
        expectClose('p, pooled effective base (prop.test)', pooled.pValue, pair.pooledEffectiveP, where);
      }
    }
  });

  it('Bonferroni and Holm p-values and SPSS letters match p.adjust', () => {
    for (const variable of table.columnVariables) {
      if (variable.columns.length < 2) continue;
      for (const row of table.rows) {
        const columns = variable.columns.map((column) => columnCell(row.id, variable.variable, column.code));
        const cells = variable.columns.map(
          (column) =>
            table.cells.find((c) => c.row === row.id && c.columnVariable === variable.variable && c.column === column.code)!,
        );
        for (const correction of ['none', 'bonferroni', 'holm'] as const) {
          const result = testColumns(columns, { designRespondents: table.designRespondents, correction });
          expect(result.letters, `${correction} letters for ${row.id} × ${variable.variable}`).toEqual(
            cells.map((cell) => cell.letters?.[correction]),
          );
          if (correction === 'none') continue;
          for (const pair of result.pairs) {
            const codeA = variable.columns[pair.a]!.code;
            const codeB = variable.columns[pair.b]!.code;
            const reference = table.comparisons.find(
              (c) => c.row === row.id && c.columnVariable === variable.variable && c.columnA === codeA && c.columnB === codeB,
            )!;
            expectClose(
              `p, ${correction} (p.adjust)`,
              pair.adjustedPValue,
              correction === 'holm' ? reference.pHolm : reference.pBonferroni,
              `${row.id} × ${variable.variable} ${codeA} vs ${codeB}`,
            );
          }
        }
      }
    }
  });
});

describe('normal distribution', () => {
  it('tail probabilities match R pnorm to 1e-14 relative wherever R has a normal double', () => {
    for (const { z, upperTail } of fixture.normalTail) {
      if (upperTail < 1e-300) continue;
      const relative = Math.abs(normalUpperTail(z) - upperTail) / upperTail;
      expect(relative, `Q(${z}) relative error`).toBeLessThan(1e-14);
      const seen = worst.get('normal upper tail, relative, all Q > 1e-300') ?? { relative: 0, count: 0 };
      worst.set('normal upper tail, relative, all Q > 1e-300', { relative: Math.max(seen.relative, relative), count: seen.count + 1 });
    }
  });

  it('tail probabilities match R pnorm', () => {
    for (const { z, upperTail, twoSided } of fixture.normalTail) {
      expectClose('normal upper tail (pnorm)', normalUpperTail(z), upperTail, `z=${z}`);
      expectClose('two-sided p (2*pnorm)', twoSidedPValue(z), twoSided, `z=${z}`);
      expectClose('two-sided p (2*pnorm)', twoSidedPValue(-z), twoSided, `z=${-z}`);
      expectClose('normal CDF (pnorm)', normalCdf(-z), upperTail, `z=${-z}`);
    }
  });

  it('qnorm(0.975) is the default critical value', () => {
    expect(marginOfError(1)).toBe(fixture.meta.qnorm975);
  });

  it('erfc is continuous across its approximation breakpoints', () => {
    for (const x of [0.46875, 4]) {
      const below = erfc(x - 1e-12);
      const above = erfc(x + 1e-12);
      expect(Math.abs(below - above) / above).toBeLessThan(1e-10);
    }
    expect(erfc(0)).toBe(1);
    expect(erfc(-30)).toBe(2);
    expect(erfc(30)).toBe(0);
    expect(Number.isNaN(erfc(Number.NaN))).toBe(true);
  });
});

describe('the R comparison can fail', () => {
  const [table] = fixture.tables;
  const cell = table!.cells.find((c) => c.cell.respondents > 50 && c.proportion < 0.5)!;

  it('n of the column instead of the design is caught', () => {
    const wrong = linearizationStandardError(cell.cell, cell.columnTotal, cell.columnTotal.respondents);
    expect(Math.abs(wrong - cell.se) / cell.se).toBeGreaterThan(RELATIVE);
  });

  it('the whole-file n and the base n give different SEs, each matching its own R design', () => {
    expect(Math.abs(cell.se - cell.seFullFileDesign) / cell.se).toBeGreaterThan(1e-6);
  });

  it('the Kish SE is not the linearization SE', () => {
    const kish = kishStandardError(cell.cell, cell.columnTotal);
    expect(Math.abs(kish - cell.se) / cell.se).toBeGreaterThan(1e-4);
  });
});

describe('options are validated', () => {
  const sums: CellSums = { weighted: 1, respondents: 1, sumSqWeights: 1 };
  const column: CellSums = { weighted: 4, respondents: 4, sumSqWeights: 4 };

  it('rejects a missing or invalid designRespondents', () => {
    for (const call of [
      () => proportionStandardError(sums, column),
      () => linearizationStandardError(sums, column, 1),
      () => linearizationStandardError(sums, column, 2.5),
      () => compareProportions({ cell: sums, column }, { cell: sums, column }),
    ]) {
      let thrown: unknown;
      try {
        call();
      } catch (error) {
        thrown = error;
      }
      expect(isCrosstabError(thrown) && thrown.code).toBe('invalid_option');
    }
  });

  it('letters run A…Z, AA, AB', () => {
    expect([0, 1, 25, 26, 27, 701, 702].map(columnLetter)).toEqual(['A', 'B', 'Z', 'AA', 'AB', 'ZZ', 'AAA']);
  });

  it('adjusts like p.adjust with untested pairs left out of the family', () => {
    expect(adjustPValues([0.01, Number.NaN, 0.04, 0.03], 'bonferroni')).toEqual([0.03, Number.NaN, 0.12, 0.09]);
    const holm = adjustPValues([0.01, Number.NaN, 0.04, 0.03], 'holm');
    expect(holm[0]).toBeCloseTo(0.03, 15);
    expect(holm[2]).toBeCloseTo(0.06, 15);
    expect(holm[3]).toBeCloseTo(0.06, 15);
  });
});
