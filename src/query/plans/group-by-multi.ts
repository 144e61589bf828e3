/**
 * Group-by plan for axes made of values of several single-coded variables (kernel
 * `groupByMulti`): each respondent of the base adds to the (row value, column value) cells
 * it has, margins in the same pass; split by word range across the pool when it is worth it.
 */
import type { KernelExports } from '../../kernel/exports.js';
import { NS_PER_RESPONDENT } from '../costs.js';
import { settleAll } from '../executor.js';
import { axisVariables, cellsFromTriples, type ScratchMemory, scratchMemory, splitWords, sumParts, type WordRange } from './group-by-parts.js';
import type { TableCells, TableInput, ValueNode } from './plan.js';

/** The axis variables of both axes, the pass's cost estimate and its split into word ranges. */
export function multiPass(
  input: TableInput<ValueNode>,
  scratch: ScratchMemory,
  extraSlots: number,
  /** Accumulator bytes of one word range. */
  partBytes: number,
) {
  const { kernel, evaluator, base, rows, columns, weights, run } = input;
  const words = evaluator.words;
  const rowVars = axisVariables(kernel, evaluator, scratch, rows);
  const colVars = axisVariables(kernel, evaluator, scratch, columns);
  const respondents = kernel.exports.popcount(base.ptr, words);
  const pairs = rowVars.count * colVars.count + rowVars.count + colVars.count + extraSlots;
  const split = splitWords(run, (respondents * NS_PER_RESPONDENT * pairs) / 1e6, words, partBytes);
  /** Arguments of groupByMulti for one word range, with its accumulator. */
  const args = ({ from, to }: WordRange, acc: number): Parameters<KernelExports['groupByMulti']> => {
    const hits = scratch.alloc((rowVars.count + colVars.count) * 4 + 8);
    return [base.ptr, from, to, rowVars.entries, rowVars.count, colVars.entries, colVars.count, rows.length, columns.length, weights.ptr, acc, hits];
  };
  return { ...split, args };
}

export async function groupByMultiTable(input: TableInput<ValueNode>): Promise<TableCells> {
  const { kernel, rows, columns, run } = input;
  const nRows = rows.length;
  const nColumns = columns.length;
  const cells = nRows * nColumns;
  const slots = cells + nRows + nColumns;
  const scratch = scratchMemory(kernel.memory);
  try {
    const pass = multiPass(input, scratch, 0, slots * kernel.layout.cellBytes);
    const accs = pass.ranges.map(() => scratch.alloc(slots * kernel.layout.cellBytes));
    await settleAll(pass.ranges.map((range, part) => pass.executor.run({ fn: 'groupByMulti', args: pass.args(range, accs[part]!) }, run.signal)));
    run.onProgress?.(cells, cells);
    return { ...cellsFromTriples(sumParts(kernel.memory, accs, slots * 3), nRows, nColumns), plan: 'groupBy', execution: pass.execution };
  } finally {
    scratch.releaseAll();
  }
}
