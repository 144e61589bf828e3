/** What every table plan takes and gives back. */
import { throwIfCancelled } from '../../errors.js';
import type { CellSums, Kernel, WeightVector } from '../../kernel/kernel.js';
import type { DenseView, Evaluator } from '../evaluate.js';
import type { Executor } from '../executor.js';
import type { Bound } from '../resolve.js';

/**
 * The plan that computed a table: `groupBy`, one pass over the base's respondents adding
 * each into the cells of its values (group-by.ts, group-by-multi.ts, group-by-design.ts);
 * `bitsets`, row and column bitsets ANDed tile by tile (bitset-tiles.ts).
 */
export type PlanName = 'groupBy' | 'bitsets';

export interface TableCells {
  sums: Float64Array;
  sumsSq: Float64Array;
  counts: Float64Array;
  plan: PlanName;
  /** Where the cells were computed. */
  execution: 'inline' | 'pool';
  /** base AND row, base AND column. */
  margins: { rows: CellSums[]; columns: CellSums[] };
}

/**
 * What a table plan computes over: the kernel and the dataset's evaluator, the base's
 * respondents, the row and column expressions (`Axis`: bound expressions, or values of
 * single-coded variables for the group-by plans), the weights and the run (signal, executor).
 */
export interface TableInput<Axis = Bound> {
  kernel: Kernel;
  evaluator: Evaluator;
  base: DenseView;
  rows: Axis[];
  columns: Axis[];
  weights: WeightVector;
  run: TableRun;
}

export interface TableRun {
  signal?: AbortSignal | undefined;
  onProgress?: ((doneCells: number, totalCells: number) => void) | undefined;
  /** Picks inline or pool execution for work estimated at `estimatedMs`. */
  choose: (estimatedMs: number) => { executor: Executor; execution: 'inline' | 'pool' };
}

/** An axis entry that is one value of one variable. */
export type ValueNode = Extract<Bound, { op: 'ranks' }>;

/**
 * True when every entry is one value of some variable, each (variable, value) once. Rank 0,
 * the blank (`VAR=NA`, a table's "No answer" entry), counts as a value: the group-by
 * kernels map every rank, blank included, to its position on the axis.
 */
export function valueAxis(axis: Bound[], evaluator: Pick<Evaluator, 'isMulti'>): axis is ValueNode[] {
  // Ranks seen per variable (numbers, not "variable:rank" strings: S3's 795 entries are
  // checked on every table).
  const seen = new Map<number, Set<number>>();
  for (const node of axis) {
    // A multi-response variable has no index column to group by: its values go by bitsets.
    if (node.op !== 'ranks' || node.ranks.length !== 1 || evaluator.isMulti(node.variable)) return false;
    let ranks = seen.get(node.variable);
    if (ranks === undefined) seen.set(node.variable, (ranks = new Set()));
    const rank = node.ranks[0]!;
    if (ranks.has(rank)) return false;
    ranks.add(rank);
  }
  return true;
}

/** True when every entry is one value of one and the same variable, each value once. */
export function singleVariableAxis(axis: Bound[], evaluator: Pick<Evaluator, 'isMulti'>): axis is ValueNode[] {
  const first = axis[0];
  return first !== undefined && first.op === 'ranks' && valueAxis(axis, evaluator) && axis.every((node) => (node as ValueNode).variable === first.variable);
}

export function checkAborted(signal: AbortSignal | undefined): void {
  throwIfCancelled(signal, 'the query');
}
