/**
 * Group-by plan for one variable per axis (kernel `groupBy`): the respondents of the base,
 * partitioned by row value and added into a grid with one extra row and column for values
 * off the axes (so margins are grid sums); split by word range across the pool when it is
 * worth it.
 */
import type { KernelTask } from '../../kernel/exports.js';
import type { CellSums } from '../../kernel/kernel.js';
import { NS_PER_RESPONDENT } from '../costs.js';
import { settleAll } from '../executor.js';
import { scratchMemory, singleVariableMap, splitWords, sumParts } from './group-by-parts.js';
import type { TableCells, TableInput, ValueNode } from './plan.js';

export async function groupByTable(input: TableInput<ValueNode>): Promise<TableCells> {
  const { kernel, evaluator, base, rows, columns, weights, run } = input;
  const memory = kernel.memory;
  const words = evaluator.words;
  const nRows = rows.length;
  const nColumns = columns.length;
  const width = nColumns + 1;
  const slots = (nRows + 1) * width;
  const estimatedMs = (kernel.exports.popcount(base.ptr, words) * NS_PER_RESPONDENT) / 1e6;
  const { executor, execution, ranges } = splitWords(run, estimatedMs, words, slots * kernel.layout.cellBytes);
  const a = evaluator.indexColumn(rows[0]!.variable);
  const b = evaluator.indexColumn(columns[0]!.variable);
  const scratch = scratchMemory(memory);
  try {
    const mapA = singleVariableMap(kernel, evaluator, scratch, rows);
    const mapB = singleVariableMap(kernel, evaluator, scratch, columns);
    const tasks = ranges.map(({ from, to }) => {
      const respondents = to > from ? kernel.exports.popcount(base.ptr + from * 8, to - from) : 0;
      const grid = scratch.alloc(slots * kernel.layout.cellBytes);
      // Written in full by the kernel before it reads them: no zero-fill.
      const rowStart = scratch.alloc((nRows + 2) * 4, false);
      const bucketColumns = scratch.alloc(respondents * 4 + 4, false);
      const bucketWeights = scratch.alloc(respondents * 8 + 8, false);
      const task: KernelTask = {
        fn: 'groupBy',
        args: [base.ptr, from, to, a.ptr, a.width, mapA, b.ptr, b.width, mapB, nRows, nColumns, weights.ptr, grid, rowStart, bucketColumns, bucketWeights],
      };
      return { grid, task };
    });
    await settleAll(tasks.map(({ task }) => executor.run(task, run.signal)));
    const grid = sumParts(memory, tasks.map((task) => task.grid), slots * 3);
    // Cells are the grid without its extra row and column; margins are its row and column sums.
    const cells = nRows * nColumns;
    const sums = new Float64Array(cells);
    const sumsSq = new Float64Array(cells);
    const counts = new Float64Array(cells);
    const rowTotals = new Float64Array(nRows * 3);
    const columnTotals = new Float64Array(nColumns * 3);
    for (let r = 0; r <= nRows; r++) {
      for (let c = 0; c <= nColumns; c++) {
        const at = (r * width + c) * 3;
        if (r < nRows && c < nColumns) {
          const cell = r * nColumns + c;
          sums[cell] = grid[at]!;
          sumsSq[cell] = grid[at + 1]!;
          counts[cell] = grid[at + 2]!;
        }
        for (let k = 0; k < 3; k++) {
          if (r < nRows) rowTotals[r * 3 + k]! += grid[at + k]!;
          if (c < nColumns) columnTotals[c * 3 + k]! += grid[at + k]!;
        }
      }
    }
    const margin = (totals: Float64Array, i: number): CellSums => ({ weighted: totals[i * 3]!, sumSqWeights: totals[i * 3 + 1]!, respondents: totals[i * 3 + 2]! });
    const rowMargins = rows.map((_, r) => margin(rowTotals, r));
    const columnMargins = columns.map((_, c) => margin(columnTotals, c));
    run.onProgress?.(cells, cells);
    return { sums, sumsSq, counts, plan: 'groupBy', execution, margins: { rows: rowMargins, columns: columnMargins } };
  } finally {
    scratch.releaseAll();
  }
}
