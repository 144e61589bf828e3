/**
 * Table plans for a Taylor-linearization design: besides each cell's Σw, n and
 * Σw², the weighted sum of every cell, margin and the base total per PSU, which is all a
 * linearization variance needs (see src/stats/design-variance.ts).
 *
 * Axes of values of single-coded variables (the group-by shapes) take one group-by pass
 * (plans/group-by-design.ts): the triples and the per-PSU sums in the same pass over the
 * base. Axes of arbitrary expressions (overlapping codes, nets) keep their bitset plan for
 * the triples and add one `clusterSumsAnd` pass per cell (plans/psu-cell-by-cell.ts).
 */
import { CrosstabError, ErrorCode } from '../errors.js';
import type { PsuSums } from '../stats/table-variance.js';
import { type ClusterColumn, groupByDesignTable } from './plans/group-by-design.js';
import { checkAborted, type TableCells, type TableInput, valueAxis } from './plans/plan.js';
import { psuSumsCellByCell } from './plans/psu-cell-by-cell.js';
import { computeTable } from './table.js';

export type { ClusterColumn } from './plans/group-by-design.js';

/** Per-PSU sums of one table (per task on the pool) stay under this many bytes. */
const MAX_PSU_SUMS_BYTES = 512 * 2 ** 20;

/** The cells of a table with their per-PSU sums. */
export async function computeTableWithPsuSums(input: TableInput, psus: ClusterColumn): Promise<TableCells & { clusterSums: PsuSums }> {
  const { rows, columns, run } = input;
  checkAborted(run.signal);
  const slots = rows.length * columns.length + rows.length + columns.length + 1;
  const bytes = slots * psus.clusters * 8;
  if (bytes > MAX_PSU_SUMS_BYTES) {
    throw new CrosstabError(ErrorCode.invalidOption, `the table's per-PSU sums (${slots} cells and margins x ${psus.clusters} PSUs) would take ${(bytes / 2 ** 30).toFixed(1)} GiB`, {
      field: 'rows',
      hint: `Split the table: with this design a table may have at most about ${Math.floor(MAX_PSU_SUMS_BYTES / 8 / psus.clusters)} cells.`,
    });
  }
  if (valueAxis(rows, input.evaluator) && valueAxis(columns, input.evaluator)) {
    return groupByDesignTable({ ...input, rows, columns }, psus);
  }
  const cells = await computeTable(input);
  return { ...cells, clusterSums: psuSumsCellByCell(input, psus) };
}
