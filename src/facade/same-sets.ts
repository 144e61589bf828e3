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
import type { ReplicateTable, TableDesign } from '../stats/table-variance.js';
import type { EngineTable } from './engine.js';

/** Gives every cell and margin of `table` that holds the same respondents as one it lies in the same sums, in place. */
export function shareSameSetSums(table: EngineTable, nRows: number, nColumns: number): void {
  const cells = nRows * nColumns;
  // Nodes: 0 the base, 1..nRows the row totals, then the column totals, then the cells (row-major).
  const firstColumn = 1 + nRows;
  const firstCell = firstColumn + nColumns;
  const nodes = firstCell + cells;
  const parent = new Int32Array(nodes);
  for (let i = 0; i < nodes; i++) parent[i] = i;
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
  // The smaller node (the wider set, or the earlier margin) leads its group.
  const join = (a: number, b: number): void => {
    const ra = find(a);
    const rb = find(b);
    if (ra < rb) parent[rb] = ra;
    else if (rb < ra) parent[ra] = rb;
  };
  // A margin's sums (the base, a row total, a column total); undefined for a cell, whose sums are in the table's arrays.
  const sumsOf = (node: number): CellSums | undefined => {
    if (node === 0) return table.total;
    if (node < firstColumn) return table.margins.rows[node - 1];
    if (node < firstCell) return table.margins.columns[node - firstColumn];
    return undefined;
  };
  const count = (node: number): number => sumsOf(node)?.respondents ?? table.counts[node - firstCell]!;
  let joined = false;
  const same = (part: number, whole: number): void => {
    if (count(part) === count(whole)) {
      join(part, whole);
      joined = true;
    }
  };
  for (let r = 0; r < nRows; r++) same(1 + r, 0);
  for (let c = 0; c < nColumns; c++) same(firstColumn + c, 0);
  for (let r = 0; r < nRows; r++) {
    for (let c = 0; c < nColumns; c++) {
      const cell = firstCell + r * nColumns + c;
      same(cell, 1 + r);
      same(cell, firstColumn + c);
    }
  }
  if (!joined) return;

  // The design's slot of a node: cells (row-major), then row totals, then column totals, then the base.
  const slotOf = (node: number): number => (node === 0 ? cells + nRows + nColumns : node < firstColumn ? cells + node - 1 : node < firstCell ? cells + nRows + node - firstColumn : node - firstCell);
  for (let node = 1; node < nodes; node++) {
    const lead = find(node);
    if (lead === node) continue;
    const from = sumsOf(lead);
    const weighted = from ? from.weighted : table.sums[lead - firstCell]!;
    const sumSq = from ? from.sumSqWeights : table.sumsSq[lead - firstCell]!;
    const to = sumsOf(node);
    if (to) {
      to.weighted = weighted;
      to.sumSqWeights = sumSq;
    } else {
      table.sums[node - firstCell] = weighted;
      table.sumsSq[node - firstCell] = sumSq;
    }
    copyDesignSums(table.design, slotOf(lead), slotOf(node), nRows, nColumns);
  }
}

function copyDesignSums(design: TableDesign, from: number, to: number, nRows: number, nColumns: number): void {
  if (design.kind === 'taylor') {
    const { clusters, slots, sums } = design.clusterSums;
    for (let k = 0; k < clusters; k++) sums[k * slots + to] = sums[k * slots + from]!;
  } else if (design.kind === 'replicate') {
    for (const replicate of design.replicates) replicateSlot(replicate, to, nRows, nColumns).set(replicateSlot(replicate, from, nRows, nColumns).get());
  }
}

/** A replicate's sum at a design slot (cells row-major, then row totals, then column totals, then the base). */
function replicateSlot(replicate: ReplicateTable, slot: number, nRows: number, nColumns: number): { get(): number; set(value: number): void } {
  const cells = nRows * nColumns;
  const [values, at] = slot < cells ? [replicate.weighted, slot] : slot < cells + nRows ? [replicate.rowTotals, slot - cells] : slot < cells + nRows + nColumns ? [replicate.columnTotals, slot - cells - nRows] : [undefined, 0];
  if (values === undefined) return { get: () => replicate.total, set: (value) => (replicate.total = value) };
  return { get: () => values[at]!, set: (value) => (values[at] = value) };
}
