/**
 * Table plans for a Taylor-linearization design (issue 10): besides each cell's Σw, n and
 * Σw², the weighted sum of every cell, margin and the base total per PSU, which is all a
 * linearization variance needs (see src/stats/design-variance.ts).
 *
 * Axes of values of single-coded variables (the scatter shapes) take one group-by pass
 * (`groupByDesign`): the triples and the per-PSU sums in the same pass over the base, split
 * by word range across the pool like the other group-by plans. Axes of arbitrary
 * expressions (overlapping codes, nets) keep their bitset plan for the triples and add one
 * `clusterSumsAnd` pass per cell on the calling thread.
 */
import { CrosstabError, ErrorCode } from '../errors.js';
import type { Kernel, WeightVector } from '../kernel/kernel.js';
import type { PsuSums } from '../stats/table-design.js';
import type { DenseView, Evaluator } from './evaluate.js';
import { NS_PER_RESPONDENT } from './executor.js';
import type { Bound } from './resolve.js';
import { cellsFromTriples, checkAborted, computeTable, scratchMemory, sumParts, type TableCells, type TableRun, valueAxis } from './table.js';

type ValueNode = Extract<Bound, { op: 'ranks' }>;

type ClusterSums = PsuSums;

/** Per-PSU sums of one table (per task on the pool) stay under this many bytes. */
const MAX_PSU_SUMS_BYTES = 512 * 2 ** 20;

/** PSU numbers of every respondent, in kernel memory (u32, padded to words * 64). */
export interface ClusterColumn {
  ptr: number;
  clusters: number;
}

/** The cells of a table with their per-PSU sums. */
export async function computeDesignTable(
  kernel: Kernel,
  evaluator: Evaluator,
  base: DenseView,
  rows: Bound[],
  columns: Bound[],
  weights: WeightVector,
  psus: ClusterColumn,
  run: TableRun,
): Promise<TableCells & { clusterSums: ClusterSums }> {
  checkAborted(run.signal);
  const slots = rows.length * columns.length + rows.length + columns.length + 1;
  const bytes = slots * psus.clusters * 8;
  if (bytes > MAX_PSU_SUMS_BYTES) {
    throw new CrosstabError(ErrorCode.invalidOption, `the table's per-PSU sums (${slots} cells and margins x ${psus.clusters} PSUs) would take ${(bytes / 2 ** 30).toFixed(1)} GiB`, {
      field: 'rows',
      hint: `Split the table: with this design a table may have at most about ${Math.floor(MAX_PSU_SUMS_BYTES / 8 / psus.clusters)} cells.`,
    });
  }
  if (valueAxis(rows) && valueAxis(columns)) {
    return groupByDesign(kernel, evaluator, base, rows as ValueNode[], columns as ValueNode[], weights, psus, run);
  }
  const cells = await computeTable(kernel, evaluator, base, rows, columns, weights, run);
  return { ...cells, clusterSums: cellByCell(kernel, evaluator, base, rows, columns, weights, psus) };
}

async function groupByDesign(
  kernel: Kernel,
  evaluator: Evaluator,
  base: DenseView,
  rows: ValueNode[],
  columns: ValueNode[],
  weights: WeightVector,
  psus: ClusterColumn,
  run: TableRun,
): Promise<TableCells & { clusterSums: ClusterSums }> {
  const memory = kernel.memory;
  const words = evaluator.words;
  const nRows = rows.length;
  const nColumns = columns.length;
  const cells = nRows * nColumns;
  const slots = cells + nRows + nColumns + 1;
  const scratch = scratchMemory(memory);
  const alloc = (bytes: number) => scratch.alloc(bytes);
  /** One 12-byte entry per variable on the axis: index column, bytes per rank, rank -> position map. */
  const variables = (axis: ValueNode[]) => {
    const maps = new Map<number, number>();
    axis.forEach((node, position) => {
      let map = maps.get(node.variable);
      if (map === undefined) {
        const bytes = (evaluator.rankCount(node.variable) + 1) * 4;
        map = alloc(bytes);
        new Int32Array(memory.memory.buffer, map, bytes / 4).fill(-1);
        maps.set(node.variable, map);
      }
      new Int32Array(memory.memory.buffer, map, evaluator.rankCount(node.variable) + 1)[node.ranks[0]!] = position;
    });
    const entries = alloc(maps.size * 12);
    const table = new Uint32Array(memory.memory.buffer, entries, maps.size * 3);
    [...maps].forEach(([variable, map], i) => {
      const index = evaluator.indexColumn(variable);
      table.set([index.ptr, index.width, map], i * 3);
    });
    return { entries, count: maps.size };
  };
  try {
    const rowVars = variables(rows);
    const colVars = variables(columns);
    const respondents = kernel.exports.popcount(base.ptr, words);
    const estimatedMs = (respondents * NS_PER_RESPONDENT * (rowVars.count * colVars.count + rowVars.count + colVars.count + 1)) / 1e6;
    const { executor, execution } = run.choose(estimatedMs);
    const parts = execution === 'pool' ? executor.parallelism : 1;
    const span = Math.ceil(words / parts);
    const tasks = Array.from({ length: parts }, () => ({ acc: alloc((cells + nRows + nColumns) * 24), psuAcc: alloc(psus.clusters * slots * 8) }));
    await Promise.all(
      tasks.map(({ acc, psuAcc }, part) => {
        const hits = alloc((rowVars.count + colVars.count) * 4 + 8);
        const args = [base.ptr, Math.min(words, part * span), Math.min(words, (part + 1) * span), rowVars.entries, rowVars.count, colVars.entries, colVars.count, nRows, nColumns, weights.ptr, acc, hits, psus.ptr, psuAcc];
        return executor.run({ fn: 'groupByDesign', args }, run.signal);
      }),
    );
    const totals = sumParts(memory, tasks.map((task) => task.acc), (cells + nRows + nColumns) * 3);
    const clusterSums = sumParts(memory, tasks.map((task) => task.psuAcc), psus.clusters * slots);
    run.onProgress?.(cells, cells);
    return {
      ...cellsFromTriples(totals, nRows, nColumns),
      plan: 'scatter',
      execution,
      clusterSums: { clusters: psus.clusters, slots, sums: clusterSums },
    };
  } finally {
    scratch.releaseAll();
  }
}

/** Per-PSU sums one cell at a time (bitset rows x bitset columns), on the calling thread. */
function cellByCell(kernel: Kernel, evaluator: Evaluator, base: DenseView, rows: Bound[], columns: Bound[], weights: WeightVector, psus: ClusterColumn): ClusterSums {
  const memory = kernel.memory;
  const nRows = rows.length;
  const nColumns = columns.length;
  const cells = nRows * nColumns;
  const slots = cells + nRows + nColumns + 1;
  const clusters = psus.clusters;
  const out = new Float64Array(clusters * slots);
  const acc = memory.alloc(clusters * 8);
  const rowViews = rows.map((row) => evaluator.intersect(base, row));
  const columnViews = columns.map((column) => evaluator.materialize(column));
  try {
    const collect = (a: number, b: number, slot: number) => {
      memory.f64(acc, clusters).fill(0);
      kernel.exports.clusterSumsAnd(a, b, evaluator.words, weights.ptr, psus.ptr, acc);
      const sums = memory.f64(acc, clusters);
      for (let k = 0; k < clusters; k++) out[k * slots + slot] = sums[k]!;
    };
    rowViews.forEach((row, r) => {
      columnViews.forEach((column, c) => collect(row.ptr, column.ptr, r * nColumns + c));
      collect(row.ptr, row.ptr, cells + r);
    });
    columnViews.forEach((column, c) => collect(base.ptr, column.ptr, cells + nRows + c));
    collect(base.ptr, base.ptr, slots - 1);
  } finally {
    for (const view of [...rowViews, ...columnViews]) evaluator.release(view);
    memory.release(acc, clusters * 8);
  }
  return { clusters, slots, sums: out };
}
