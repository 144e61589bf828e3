import type { TableResult } from '../facade/types.js';
import { raoScott } from '../stats/rao-scott.js';
import { simpleProportionCovariance } from '../stats/table-variance.js';
import { columnGroups, type ColumnGroup } from './column-groups.js';
import type { DesignFigures } from './design-figures.js';

/** The Rao–Scott test of one row variable against one column variable of a table. */
export interface RaoScottTest {
  rowVariable: string;
  columnVariable: string;
  /** Table rows and columns in the test (values with respondents in the base). */
  rows: number[];
  columns: number[];
  /** Pearson X² of the cell proportions scaled to the base's respondents. */
  pearson: number;
  /** Rao–Scott second-order F = X² / tr Δ (R `svychisq(statistic = "F")`). */
  statistic: number;
  ndf: number;
  ddf: number;
  pValue: number;
}

/**
 * A column group with no Rao–Scott test: its columns share respondents (`overlapping-columns`),
 * or, against the multi-response row variable `rowVariable`, the rows do (`overlapping-rows`).
 */
export type RaoScottNotDefined = { group: number; reason: 'overlapping-columns' } | { group: number; reason: 'overlapping-rows'; rowVariable: string };

/**
 * A Rao–Scott test for every pair (row variable, column variable) whose values were
 * expanded whole on the table (`{ variable }` entries), multi-response row variables aside
 * (their rows overlap: tableStatistics() says so in `raoScottNotDefined`): respondents blank in either
 * variable are left out of the proportions, as `svychisq` does, but N stays the base's
 * respondents. ν (R `degf(subset(design, base))`): simple design N − 1; Taylor PSUs − strata
 * reached by the base; replicate designs the base's, which the table's design carries (the
 * rank of the replicate weights over the base's respondents − 1, or the design's degf for a
 * base of every respondent).
 */
export function raoScottTests(result: TableResult, figures: DesignFigures, columnGroupList: readonly ColumnGroup[]): RaoScottTest[] {
  const width = result.columns.length;
  const present = <T extends { respondents: number }>(totals: readonly T[]) => (index: number) => totals[index]!.respondents > 0;
  const rowGroups = columnGroups(result.rows).filter((group) => group.variable !== null && !group.columns.some((r) => result.rows[r]!.multi));
  const tests: RaoScottTest[] = [];
  const degreesOfFreedom =
    figures.variance === 'simple' ? result.total.respondents - 1 : figures.variance === 'taylor' ? taylorDegreesOfFreedom(figures) : figures.replicateDegreesOfFreedom!;
  for (const rowGroup of rowGroups) {
    const rows = rowGroup.columns.filter(present(result.rowTotals));
    for (const columnGroup of columnGroupList) {
      if (columnGroup.variable === null) continue;
      const columns = columnGroup.columns.filter(present(result.columnTotals));
      if (rows.length < 2 || columns.length < 2) continue;
      // Cells in svychisq's order: rows vary fastest.
      const cells = columns.flatMap((c) => rows.map((r) => r * width + c));
      const x = cells.reduce((sum, at) => sum + result.weighted[at]!, 0);
      const pi = cells.map((at) => result.weighted[at]! / x);
      const covariance = figures.engine
        ? figures.engine.ratioCovariance(cells.map((cell) => ({ cell })), { cells })
        : simpleProportionCovariance(cells.map((at) => figures.sums.cell(at)), figures.designRespondents);
      const test = raoScott(rows.length, columns.length, pi, covariance, result.total.respondents, degreesOfFreedom);
      tests.push({ rowVariable: rowGroup.variable!, columnVariable: columnGroup.variable, rows, columns, ...test });
    }
  }
  return tests;
}

/** R's svychisq ν: PSUs the base reaches minus the strata they are in. */
function taylorDegreesOfFreedom(figures: DesignFigures): number {
  const design = figures.engine!;
  const base = design.basePsuSums();
  const { psus } = figures.taylor!;
  const strata = new Set<number>();
  let count = 0;
  base.forEach((sum, psu) => {
    if (sum === 0) return;
    count++;
    strata.add(psus.stratumOf[psu]!);
  });
  return count - strata.size;
}
