import type { TableResult } from '../facade/types.js';
import type { LonelyPsu, PsuStructure } from '../stats/design-variance.js';
import { linearizationVariance, totalStandardError } from '../stats/standard-error.js';
import { type TableDesign, TableVariance, type TableSums } from '../stats/table-variance.js';
import type { CellSums } from '../stats/types.js';
import { overlapCovariance } from '../stats/overlap-covariance.js';
import { overlapSums, type OverlapSums } from './overlap-sums.js';
import { percentBases, type PercentBases } from './percent-bases.js';

/** How the variances of a table are computed. */
/** What a simple design's N is when the base is a subset: the whole file's respondents (`file`, the default) or the base's. */
export const DOMAINS = ['file', 'base'] as const;
export type Domain = (typeof DOMAINS)[number];

export type VarianceKind = 'simple' | 'taylor' | 'replicate';

/** The design-based variances a table report needs, whatever the design. */
export interface DesignFigures {
  variance: VarianceKind;
  /** N of the simple design's N/(N−1) (the whole file's respondents by default); NaN for other designs. */
  designRespondents: number;
  /** Var of the column proportion of cell (row, column); NaN when undefined. */
  proportionVariance(row: number, column: number): number;
  /** SE of the cell's Σw (the projected audience, before units). */
  totalSE(row: number, column: number): number;
  /** Var of p(row, a) − p(row, b), with the covariance of the two columns. */
  differenceVariance(row: number, a: number, b: number): number;
  /** The respondents in both columns of a pair (counted by ds.table() for its columnGroups). */
  overlaps: OverlapSums;
  sums: TableSums;
  /** The design's variance engine (absent for the simple design). */
  engine?: TableVariance;
  /** Taylor designs: the PSU structure. */
  taylor?: { psus: PsuStructure };
  /** Replicate designs: the base's degrees of freedom (R `degf(subset(design, base))`). */
  replicateDegreesOfFreedom?: number;
}

/**
 * The variance figures of `result` under its design, of the percentages over `bases`
 * (default: the column totals). `domain: 'file'` (default) treats the
 * base as a domain of the whole file (R `subset(design, base)`): the simple design's N is
 * the file's respondents; `'base'` uses the base's respondents (R: a design built on the
 * base's rows). Complex designs are always domains of the whole file.
 */
export function designFigures(result: TableResult, domain: Domain, lonelyPsu: LonelyPsu, bases: PercentBases = percentBases(result, 'total')): DesignFigures {
  const columns = result.columns.length;
  const sums: TableSums = {
    rows: result.rows.length,
    columns,
    cell: (at) => ({ weighted: result.weighted[at]!, respondents: result.respondents[at]!, sumSqWeights: result.sumSqWeights[at]! }),
    rowTotal: (row) => result.rowTotals[row]!,
    columnTotal: (column) => result.columnTotals[column]!,
    total: result.total,
  };
  const design: TableDesign = result.design ?? { kind: 'simple', fileRespondents: result.total.respondents };
  const overlaps = overlapSums(result, bases);
  if (design.kind === 'simple') {
    const n = domain === 'base' ? result.total.respondents : design.fileRespondents;
    const ok = n >= 2;
    const variance = (row: number, column: number) => {
      const base = bases.column(row, column);
      return ok && base !== null ? linearizationVariance(sums.cell(row * columns + column), base.sums, n) : Number.NaN;
    };
    return {
      variance: 'simple',
      designRespondents: n,
      sums,
      proportionVariance: variance,
      totalSE: (row, column) => (ok ? totalStandardError(sums.cell(row * columns + column), n) : Number.NaN),
      overlaps,
      // Disjoint columns: the covariance is exactly 0 (docs/statistics.md); columns sharing
      // respondents covary through them (docs/tables.md § Overlapping columns).
      differenceVariance: (row, a, b) => {
        const both = overlaps.both(row, a, b);
        if (both === null) return Number.NaN;
        const sum = variance(row, a) + variance(row, b);
        if (both.column.respondents === 0) return sum;
        const cell = (column: number) => sums.cell(row * columns + column);
        return sum - 2 * overlapCovariance(cell(a), bases.column(row, a)!.sums, cell(b), bases.column(row, b)!.sums, both.cell, both.column, n);
      },
    };
  }
  const engine = new TableVariance(sums, design, lonelyPsu);
  return {
    variance: design.kind,
    designRespondents: Number.NaN,
    sums,
    engine,
    overlaps,
    ...(design.kind === 'taylor' ? { taylor: { psus: design.psus } } : { replicateDegreesOfFreedom: design.degreesOfFreedom }),
    proportionVariance: (row, column) => {
      const base = bases.column(row, column);
      return base === null ? Number.NaN : engine.ratioVariance({ cell: row * columns + column }, base.slot);
    },
    totalSE: (row, column) => Math.sqrt(engine.totalVariance({ cell: row * columns + column })),
    differenceVariance: (row, a, b) => {
      const baseA = bases.column(row, a);
      const baseB = bases.column(row, b);
      return baseA === null || baseB === null ? Number.NaN : engine.differenceVariance({ cell: row * columns + a }, baseA.slot, { cell: row * columns + b }, baseB.slot);
    },
  };
}
