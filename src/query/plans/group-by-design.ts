/**
 * Group-by plan of a Taylor-linearization design (kernel `groupByDesign`), for axes of
 * values of single-coded variables: the triples of groupByMulti and the per-PSU sums of
 * every cell, margin and the base total in the same pass, split by word range across the
 * pool like the other group-by plans.
 */
import type { PsuSums } from '../../stats/table-variance.js';
import { settleAll } from '../executor.js';
import { cellsFromTriples, scratchMemory, sumParts } from './group-by-parts.js';
import { multiPass } from './group-by-multi.js';
import type { TableCells, TableInput, ValueNode } from './plan.js';

/** PSU numbers of every respondent, in kernel memory (u32, padded to words * 64). */
export interface ClusterColumn {
  ptr: number;
  clusters: number;
}

export async function groupByDesignTable(input: TableInput<ValueNode>, psus: ClusterColumn): Promise<TableCells & { clusterSums: PsuSums }> {
  const { kernel, rows, columns, run } = input;
  const memory = kernel.memory;
  const nRows = rows.length;
  const nColumns = columns.length;
  const cells = nRows * nColumns;
  const slots = cells + nRows + nColumns + 1;
  const scratch = scratchMemory(memory);
  try {
    // One more slot per respondent than groupByMulti: the base total per PSU.
    const pass = multiPass(input, scratch, 1, (cells + nRows + nColumns) * kernel.layout.cellBytes + psus.clusters * slots * 8);
    const tasks = pass.ranges.map(() => ({ acc: scratch.alloc((cells + nRows + nColumns) * kernel.layout.cellBytes), psuAcc: scratch.alloc(psus.clusters * slots * 8) }));
    await settleAll(
      pass.ranges.map((range, part) => {
        const { acc, psuAcc } = tasks[part]!;
        return pass.executor.run({ fn: 'groupByDesign', args: [...pass.args(range, acc), psus.ptr, psuAcc] }, run.signal);
      }),
    );
    const totals = sumParts(memory, tasks.map((task) => task.acc), (cells + nRows + nColumns) * 3);
    const clusterSums = sumParts(memory, tasks.map((task) => task.psuAcc), psus.clusters * slots);
    run.onProgress?.(cells, cells);
    return {
      ...cellsFromTriples(totals, nRows, nColumns),
      plan: 'groupBy',
      execution: pass.execution,
      clusterSums: { clusters: psus.clusters, slots, sums: clusterSums },
    };
  } finally {
    scratch.releaseAll();
  }
}
