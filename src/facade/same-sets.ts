/**
 * One set of respondents, one set of sums. A cell (base AND row AND column) lies inside its
 * row total (base AND row) and its column total (base AND column), which lie inside the base;
 * when a part counts as many respondents as the whole it lies in, the two are the same
 * respondents. Their weights are still summed apart (a cell by the bitsets plan, its column
 * total in another pass or order), and floating-point sums in another order can differ in the
 * last bit: a column proportion of 1.0000000000000002, a standard error of 1e-9 where it is 0,
 * a negative design effect, a "significant" difference of 1 against 0. So each such group of
 * equal sets takes the sums of its first member (the base, then row totals, then column
 * totals, then cells): Σw, Σw², and the per-PSU sums or replicate sums of its design.
 */
import type { CellSums } from '../kernel/kernel.js';
import type { TableDesign } from '../stats/table-variance.js';
import type { EngineTable } from './engine.js';

/** Gives every cell and margin of `table` that holds the same respondents as one it lies in the same sums, in place. */
export function shareSameSetSums(table: EngineTable, nRows: number, nColumns: number): void {
  const { counts, margins, total } = table;
  const cells = nRows * nColumns;
  // Margins: 0 the base, 1..nRows the row totals, then the column totals. A cell lies only in its
  // row total and its column total, so a group of more than one always holds a margin, and a
  // margin leads it (the smallest: the wider set, or the earlier margin). Groups are kept among
  // the margins alone; a cell equal to both of its margins joins the two, and a cell equal to
  // one is listed: a big table (OCCP x INDP, 140,450 cells) lists a few thousand, and its pass
  // is the comparisons of each cell's count with its row's and its column's.
  const firstColumn = 1 + nRows;
  const marginNodes = firstColumn + nColumns;
  const parent = new Int32Array(marginNodes);
  for (let i = 0; i < marginNodes; i++) parent[i] = i;
  const find = (node: number): number => {
    let root = node;
    while (parent[root] !== root) root = parent[root]!;
    while (parent[node] !== root) {
      const next = parent[node]!;
      parent[node] = root;
      node = next;
    }
    return root;
  };
  const join = (a: number, b: number): void => {
    const ra = find(a);
    const rb = find(b);
    if (ra < rb) parent[rb] = ra;
    else if (rb < ra) parent[ra] = rb;
  };
  const columnCounts = new Float64Array(nColumns);
  for (let c = 0; c < nColumns; c++) {
    columnCounts[c] = margins.columns[c]!.respondents;
    if (columnCounts[c] === total.respondents) join(firstColumn + c, 0);
  }
  // Cells as many as their row total or column total (row-major indices).
  const sameCells: number[] = [];
  for (let r = 0; r < nRows; r++) {
    const rowCount = margins.rows[r]!.respondents;
    if (rowCount === total.respondents) join(1 + r, 0);
    for (let c = 0, at = r * nColumns; c < nColumns; c++, at++) {
      const count = counts[at]!;
      const ofRow = count === rowCount;
      const ofColumn = count === columnCounts[c];
      if (ofRow || ofColumn) {
        sameCells.push(at);
        if (ofRow && ofColumn) join(1 + r, firstColumn + c);
      }
    }
  }

  const sumsOf = (margin: number): CellSums => (margin === 0 ? total : margin < firstColumn ? margins.rows[margin - 1]! : margins.columns[margin - firstColumn]!);
  // The design's slot of a margin: after the cells (row-major), the row totals, then the column totals, then the base.
  const slotOf = (margin: number): number => (margin === 0 ? cells + nRows + nColumns : margin < firstColumn ? cells + margin - 1 : cells + nRows + margin - firstColumn);
  for (let margin = 1; margin < marginNodes; margin++) {
    const lead = find(margin);
    if (lead === margin) continue;
    const from = sumsOf(lead);
    const to = sumsOf(margin);
    to.weighted = from.weighted;
    to.sumSqWeights = from.sumSqWeights;
    copyDesignSums(table.design, slotOf(lead), slotOf(margin), nRows, nColumns);
  }
  for (const at of sameCells) {
    const r = Math.floor(at / nColumns);
    const lead = find(counts[at] === margins.rows[r]!.respondents ? 1 + r : firstColumn + at - r * nColumns);
    const from = sumsOf(lead);
    table.sums[at] = from.weighted;
    table.sumsSq[at] = from.sumSqWeights;
    copyDesignSums(table.design, slotOf(lead), at, nRows, nColumns);
  }
}

function copyDesignSums(design: TableDesign, from: number, to: number, nRows: number, nColumns: number): void {
  if (design.kind === 'taylor') {
    const { clusters, slots, sums } = design.clusterSums;
    for (let k = 0; k < clusters; k++) sums[k * slots + to] = sums[k * slots + from]!;
  } else if (design.kind === 'replicate') {
    const cells = nRows * nColumns;
    for (const replicate of design.replicates) {
      const read = (slot: number): number =>
        slot < cells ? replicate.weighted[slot]! : slot < cells + nRows ? replicate.rowTotals[slot - cells]! : slot < cells + nRows + nColumns ? replicate.columnTotals[slot - cells - nRows]! : replicate.total;
      const value = read(from);
      if (to < cells) replicate.weighted[to] = value;
      else if (to < cells + nRows) replicate.rowTotals[to - cells] = value;
      else if (to < cells + nRows + nColumns) replicate.columnTotals[to - cells - nRows] = value;
      else replicate.total = value;
    }
  }
}
