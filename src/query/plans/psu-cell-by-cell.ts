/**
 * Per-PSU sums of a design table whose axes are arbitrary expressions (overlapping codes,
 * nets): one `clusterSumsAnd` pass per cell and margin, on the calling thread, beside the
 * bitset plan that computes the table's triples.
 */
import type { PsuSums } from '../../stats/table-variance.js';
import type { ClusterColumn } from './group-by-design.js';
import type { TableInput } from './plan.js';

export function psuSumsCellByCell(input: TableInput, psus: ClusterColumn): PsuSums {
  const { kernel, evaluator, base, rows, columns, weights } = input;
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
