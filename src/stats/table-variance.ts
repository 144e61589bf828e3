/**
 * Variances of a table's figures under its survey design: the column
 * proportion, the weighted total, the difference of two columns' proportions (with their
 * covariance), and the covariance matrix of a sub-table's cell proportions (Rao–Scott).
 * Every base is a domain of the whole file's design (R: `subset(design, base)`).
 */
import { type LonelyPsu, type PsuStructure, replicateCovariance, type ReplicateSettings, taylorCovariance } from './design-variance.js';
import type { CellSums } from './types.js';

/** Per-PSU weighted sums of a table: `sums[psu * slots + slot]`. */
export interface PsuSums {
  clusters: number;
  /** cells (row-major), then row margins, then column margins, then the base total. */
  slots: number;
  sums: Float64Array;
}

/** One replicate's weighted sums of a table. */
export interface ReplicateTable {
  weighted: Float64Array;
  rowTotals: Float64Array;
  columnTotals: Float64Array;
  total: number;
}

/** What a table's variances need beyond Σw, n and Σw² of its cells. */
export type TableDesign = (
  /** Independent respondents: R `svydesign(ids = ~1)` over the whole file, N = its respondents. */
  | { kind: 'simple'; fileRespondents: number }
  /** Strata and PSUs: per-PSU sums of every cell and margin. */
  | { kind: 'taylor'; psus: PsuStructure; clusterSums: PsuSums }
  /**
   * Replicate weights: every cell and margin under every replicate, and the base's degrees
   * of freedom (R `degf(subset(design, base))`).
   */
  | ({ kind: 'replicate'; replicates: ReplicateTable[]; degreesOfFreedom: number } & ReplicateSettings)
) & {
  /**
   * Respondents of the base whose weight is 0, when the weight has any. R's design effects
   * count only respondents with a weight above 0, which the cells' counts do not tell apart.
   */
  zeroWeights?: number;
};

/** Where a sum sits in a table: a cell (row-major index), a margin, the base total, or the sum of some cells. */
export type Slot = { cell: number } | { row: number } | { column: number } | 'total' | { cells: readonly number[] };

/** The sums of a table the variances start from. */
export interface TableSums {
  rows: number;
  columns: number;
  cell(at: number): CellSums;
  rowTotal(row: number): CellSums;
  columnTotal(column: number): CellSums;
  total: CellSums;
}

/**
 * An estimator as a linear combination of ratios and totals of table slots, kept in the
 * form its design's variance needs: per-PSU scores (Taylor) or replicate values.
 */
interface Estimate {
  value: number;
  scores?: Float64Array;
  replicates?: Float64Array;
}

/** Variances of one table's figures under its design; see docs/statistics.md § Complex designs. */
export class TableVariance {
  private touched: ((psu: number) => boolean) | undefined;
  /** Per-PSU sums of single slots, transposed once (the kernel writes them PSU-major). */
  private readonly psuColumns = new Map<number, Float64Array>();

  constructor(
    private readonly sums: TableSums,
    private readonly design: Exclude<TableDesign, { kind: 'simple' }>,
    private readonly lonelyPsu: LonelyPsu,
  ) {}

  /** Var of Σw of a slot (the projected audience): R `svytotal` on the domain. */
  totalVariance(slot: Slot): number {
    return this.covariance([this.totalOf(slot)])[0]!;
  }

  /** Var of Σw(a) / Σw(b): a domain mean / proportion, R `svymean` / `svyby`. */
  ratioVariance(numerator: Slot, denominator: Slot): number {
    return this.covariance([this.ratioOf(numerator, denominator)])[0]!;
  }

  /** Var of (a1/b1 − a2/b2): R `svycontrast(svyby(..., covmat = TRUE), c(1, -1))`. */
  differenceVariance(a1: Slot, b1: Slot, a2: Slot, b2: Slot): number {
    const first = this.ratioOf(a1, b1);
    const second = this.ratioOf(a2, b2);
    const v = this.covariance([first, second]);
    return v[0]! + v[3]! - 2 * v[1]!;
  }

  /** Covariance matrix of Σw(slot_j) / Σw(denominator) over the given slots (row-major). */
  ratioCovariance(numerators: readonly Slot[], denominator: Slot): Float64Array {
    const bottom = this.slotSums(denominator);
    return this.covariance(numerators.map((slot) => this.ratioOf(slot, denominator, bottom)));
  }

  private covariance(estimates: Estimate[]): Float64Array {
    const design = this.design;
    if (design.kind === 'taylor') {
      if (!this.touched) {
        const base = this.psuSums('total');
        this.touched = (psu) => base[psu] !== 0;
      }
      return taylorCovariance(estimates.map((e) => e.scores!), design.psus, this.lonelyPsu, this.touched);
    }
    return replicateCovariance(estimates.map((e) => e.replicates!), estimates.map((e) => e.value), design);
  }

  private totalOf(slot: Slot): Estimate {
    const value = this.weighted(slot);
    return this.design.kind === 'taylor' ? { value, scores: this.psuSums(slot) } : { value, replicates: this.replicateSums(slot) };
  }

  private ratioOf(numerator: Slot, denominator: Slot, bottom = this.slotSums(denominator)): Estimate {
    const y = this.weighted(numerator);
    const x = this.weighted(denominator);
    const value = y / x;
    if (this.design.kind === 'taylor') {
      const top = this.psuSums(numerator);
      const scores = new Float64Array(top.length);
      for (let k = 0; k < scores.length; k++) scores[k] = (top[k]! - value * bottom[k]!) / x;
      return { value, scores };
    }
    const top = this.replicateSums(numerator);
    return { value, replicates: top.map((t, r) => t / bottom[r]!) };
  }

  /** Per-PSU sums (Taylor) or replicate sums of a slot. */
  private slotSums(slot: Slot): Float64Array {
    return this.design.kind === 'taylor' ? this.psuSums(slot) : this.replicateSums(slot);
  }

  /** The base's per-PSU Σw (Taylor designs): which PSUs the base reaches. */
  basePsuSums(): Float64Array {
    return this.psuSums('total');
  }

  private weighted(slot: Slot): number {
    const sums = this.sums;
    if (slot === 'total') return sums.total.weighted;
    if ('cells' in slot) return slot.cells.reduce((total, at) => total + sums.cell(at).weighted, 0);
    if ('cell' in slot) return sums.cell(slot.cell).weighted;
    if ('row' in slot) return sums.rowTotal(slot.row).weighted;
    return sums.columnTotal(slot.column).weighted;
  }

  private slotIndex(slot: Exclude<Slot, { cells: readonly number[] }>): number {
    const cells = this.sums.rows * this.sums.columns;
    if (slot === 'total') return cells + this.sums.rows + this.sums.columns;
    if ('cell' in slot) return slot.cell;
    if ('row' in slot) return cells + slot.row;
    return cells + this.sums.rows + slot.column;
  }

  private psuSums(slot: Slot): Float64Array {
    const { clusterSums } = this.design as Extract<TableDesign, { kind: 'taylor' }>;
    const column = (at: number): Float64Array => {
      let sums = this.psuColumns.get(at);
      if (!sums) {
        sums = new Float64Array(clusterSums.clusters);
        for (let k = 0; k < sums.length; k++) sums[k] = clusterSums.sums[k * clusterSums.slots + at]!;
        this.psuColumns.set(at, sums);
      }
      return sums;
    };
    if (slot === 'total' || !('cells' in slot)) return column(this.slotIndex(slot));
    const out = new Float64Array(clusterSums.clusters);
    for (const at of slot.cells) {
      const sums = column(at);
      for (let k = 0; k < out.length; k++) out[k]! += sums[k]!;
    }
    return out;
  }

  private replicateSums(slot: Slot): Float64Array {
    const { replicates } = this.design as Extract<TableDesign, { kind: 'replicate' }>;
    return Float64Array.from(replicates, (replicate) => {
      if (slot === 'total') return replicate.total;
      if ('cells' in slot) return slot.cells.reduce((total, at) => total + replicate.weighted[at]!, 0);
      if ('cell' in slot) return replicate.weighted[slot.cell]!;
      if ('row' in slot) return replicate.rowTotals[slot.row]!;
      return replicate.columnTotals[slot.column]!;
    });
  }
}

/**
 * Covariance of the cell proportions π_a = W_a / Σ_b W_b of a sub-table under the simple
 * design with N respondents (each its own PSU): N/(N−1) · [δ_ab S_a − π_b S_a − π_a S_b +
 * π_a π_b Σ_c S_c] / X², from each cell's Σw (W) and Σw² (S); X = Σ_a W_a.
 */
export function simpleProportionCovariance(cells: readonly CellSums[], designRespondents: number): Float64Array {
  const p = cells.length;
  const x = cells.reduce((sum, cell) => sum + cell.weighted, 0);
  const sTotal = cells.reduce((sum, cell) => sum + cell.sumSqWeights, 0);
  const pi = cells.map((cell) => cell.weighted / x);
  const n = designRespondents;
  const out = new Float64Array(p * p);
  for (let a = 0; a < p; a++) {
    for (let b = 0; b < p; b++) {
      const sa = cells[a]!.sumSqWeights;
      const sb = cells[b]!.sumSqWeights;
      const inner = (a === b ? sa : 0) - pi[b]! * sa - pi[a]! * sb + pi[a]! * pi[b]! * sTotal;
      out[a * p + b] = ((n / (n - 1)) * inner) / (x * x);
    }
  }
  return out;
}
