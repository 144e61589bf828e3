/**
 * Which plan computes a table, by the shape of its axes (one plan per file in plans/):
 * values of one variable per axis → group-by (plans/group-by.ts); values of several
 * single-coded variables → one multi-variable group-by pass (plans/group-by-multi.ts);
 * anything else (overlapping codes, nets, ranges) → bitset tiles (plans/bitset-tiles.ts).
 */
import type { Kernel, WeightVector } from '../kernel/kernel.js';
import type { DenseView, Evaluator } from './evaluate.js';
import { bitsetTable } from './plans/bitset-tiles.js';
import { groupByTable } from './plans/group-by.js';
import { groupByMultiTable } from './plans/group-by-multi.js';
import { checkAborted, singleVariableAxis, type TableCells, type TableRun, valueAxis } from './plans/plan.js';
import type { Bound } from './resolve.js';

export { checkAborted, type PlanName, type TableCells, type TableRun } from './plans/plan.js';

/** Computes every cell base AND row AND column, choosing the plan by the shape of the axes. */
export async function computeTable(
  kernel: Kernel,
  evaluator: Evaluator,
  base: DenseView,
  rows: Bound[],
  columns: Bound[],
  weights: WeightVector,
  run: TableRun,
): Promise<TableCells> {
  checkAborted(run.signal);
  if (singleVariableAxis(rows) && singleVariableAxis(columns)) return groupByTable(kernel, evaluator, base, rows, columns, weights, run);
  if (valueAxis(rows) && valueAxis(columns)) return groupByMultiTable(kernel, evaluator, base, rows, columns, weights, run);
  return bitsetTable(kernel, evaluator, base, rows, columns, weights, run);
}
