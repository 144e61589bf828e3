/**
 * Which plan computes a table, by the shape of its axes (one plan per file in plans/):
 * values of one variable per axis → group-by (plans/group-by.ts); values of several
 * single-coded variables → one multi-variable group-by pass (plans/group-by-multi.ts);
 * anything else (overlapping codes, nets, ranges) → bitset tiles (plans/bitset-tiles.ts).
 */
import { bitsetTable } from './plans/bitset-tiles.js';
import { groupByTable } from './plans/group-by.js';
import { groupByMultiTable } from './plans/group-by-multi.js';
import { checkAborted, singleVariableAxis, type TableCells, type TableInput, valueAxis } from './plans/plan.js';

export { checkAborted, type PlanName, type TableCells, type TableInput, type TableRun } from './plans/plan.js';

/** Computes every cell base AND row AND column, choosing the plan by the shape of the axes. */
export async function computeTable(input: TableInput): Promise<TableCells> {
  const { rows, columns, run } = input;
  checkAborted(run.signal);
  if (singleVariableAxis(rows, input.evaluator) && singleVariableAxis(columns, input.evaluator)) return groupByTable({ ...input, rows, columns });
  if (valueAxis(rows, input.evaluator) && valueAxis(columns, input.evaluator)) return groupByMultiTable({ ...input, rows, columns });
  return bitsetTable(input);
}
