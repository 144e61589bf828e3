/**
 * Group-by plan for one variable per axis (kernel `groupBy`): one pass over the base's
 * respondents adding each into a grid with one extra row and column for values off the
 * axes (so margins are grid sums). A table is cut into tasks by grid rows, never by
 * respondents: every cell is summed by one task in respondent order, so the sums are the
 * same to the last bit however many tasks (inline slices or pool threads) computed them.
 */
import type { KernelTask } from '../../kernel/exports.js';
import { NS_PER_RESPONDENT } from '../costs.js';
import { settleAll, SLICE_MS } from '../executor.js';
import type { Evaluator } from '../evaluate.js';
import { gridCells } from './group-by-grid.js';
import { scratchMemory, singleVariableMap } from './group-by-parts.js';
import type { TableCells, TableInput, ValueNode } from './plan.js';

/** Most inline slices of one table: each slice walks the whole base again. */
const MAX_INLINE_SLICES = 4;

export async function groupByTable(input: TableInput<ValueNode>): Promise<TableCells> {
  const { kernel, evaluator, base, rows, columns, weights, run } = input;
  const memory = kernel.memory;
  const words = evaluator.words;
  const nRows = rows.length;
  const nColumns = columns.length;
  const cellBytes = kernel.layout.cellBytes;
  const estimatedMs = (kernel.exports.popcount(base.ptr, words) * NS_PER_RESPONDENT) / 1e6;
  const { executor, execution } = run.choose(estimatedMs);
  const parts = execution === 'pool' ? executor.parallelism : Math.min(MAX_INLINE_SLICES, Math.max(1, Math.ceil(estimatedMs / SLICE_MS)));
  const a = evaluator.indexColumn(rows[0]!.variable);
  const b = evaluator.indexColumn(columns[0]!.variable);
  const scratch = scratchMemory(memory);
  try {
    const mapA = singleVariableMap(kernel, evaluator, scratch, rows);
    const mapB = singleVariableMap(kernel, evaluator, scratch, columns);
    const grid = scratch.alloc((nRows + 1) * (nColumns + 1) * cellBytes);
    const tasks = rowRanges(rowRespondents(evaluator, rows), parts).map(({ from, to }): KernelTask => ({
      fn: 'groupBy',
      args: [base.ptr, words, a.ptr, a.width, mapA, b.ptr, b.width, mapB, nRows, nColumns, from, to, weights.ptr, grid],
    }));
    await settleAll(tasks.map((task) => executor.run(task, run.signal)));
    const cells = nRows * nColumns;
    const { sums, sumsSq, counts, margins } = gridCells(memory.f64(grid, ((nRows + 1) * (nColumns + 1) * cellBytes) / 8), cellBytes / 8, nRows, nColumns);
    run.onProgress?.(cells, cells);
    return { sums, sumsSq, counts, plan: 'groupBy', execution, margins };
  } finally {
    scratch.releaseAll();
  }
}

/**
 * Respondents of each grid row over the whole dataset (the base's own counts are not known
 * before the pass): the row values' counts, then for the extra row those with a value off
 * the axis. Blanks off the axis are left out of the estimate: a blank is mostly "not asked"
 * (ACS: no occupation outside the labour force), so a base that gives the axis meaning has
 * few of them, and counting them would hand one task the rows of most of the base (S3:
 * 75% instead of half).
 */
function rowRespondents(evaluator: Evaluator, rows: ValueNode[]): number[] {
  const perRank = evaluator.rankRespondents(rows[0]!.variable);
  const onAxis = new Set(rows.map((node) => node.ranks[0]!));
  const perRow = rows.map((node) => perRank[node.ranks[0]!] ?? 0);
  perRow.push(perRank.reduce((sum, n, rank) => (rank > 0 && !onAxis.has(rank) ? sum + n : sum), 0));
  return perRow;
}

/** Cuts the grid rows (respondents per row: `perRow`) into at most `parts` ranges of about equal respondents. */
export function rowRanges(perRow: readonly number[], parts: number): Array<{ from: number; to: number }> {
  const total = perRow.reduce((sum, n) => sum + n, 0);
  const ranges: Array<{ from: number; to: number }> = [];
  let from = 0;
  let seen = 0;
  for (let part = 1; part <= parts && from < perRow.length; part++) {
    let to = from;
    const target = (total * part) / parts;
    while (to < perRow.length && (to === from || seen + perRow[to]! <= target || part === parts)) seen += perRow[to++]!;
    ranges.push({ from, to });
    from = to;
  }
  return ranges;
}
