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
 *
 * The respondents in both columns of a compared pair (ColumnOverlaps, another table whose
 * columns are A AND B) join in too: base AND A AND B lies inside both column totals, and
 * base AND row AND A AND B inside both cells of the row and inside its pair's total. A pair
 * whose columns hold the same respondents then has the same sums in both, and its difference
 * a variance of exactly 0, not a last-bit remainder (1e-10, or NaN when it falls below 0).
 */
import type { CellSums } from '../kernel/kernel.js';
import type { ReplicateTable, TableDesign } from '../stats/table-variance.js';
import type { EngineTable } from './engine.js';

/** The table of a table's compared pairs: its columns are (A AND B) for each pair [A, B] of the table's columns. */
export interface PairTable {
  table: EngineTable;
  pairs: ReadonlyArray<readonly [number, number]>;
}

/**
 * Gives every cell and margin of `table` that holds the same respondents as one it lies in the
 * same sums, in place; and every cell and column total of `both` (its compared pairs) likewise.
 */
export function shareSameSetSums(table: EngineTable, nRows: number, nColumns: number, both?: PairTable): void {
  const cells = nRows * nColumns;
  const nPairs = both?.pairs.length ?? 0;
  // Nodes: 0 the base, 1..nRows the row totals, then the column totals, then the cells (row-major),
  // then each pair's total (base AND A AND B), then the pairs' cells (row-major).
  const firstColumn = 1 + nRows;
  const firstCell = firstColumn + nColumns;
  const firstPairTotal = firstCell + cells;
  const firstPairCell = firstPairTotal + nPairs;
  const nodes = firstPairCell + nRows * nPairs;
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
  // A margin's sums (the base, a row total, a column total, a pair's total); undefined for a cell, whose sums are in its table's arrays.
  const sumsOf = (node: number): CellSums | undefined => {
    if (node === 0) return table.total;
    if (node < firstColumn) return table.margins.rows[node - 1];
    if (node < firstCell) return table.margins.columns[node - firstColumn];
    if (node < firstPairTotal) return undefined;
    if (node < firstPairCell) return both!.table.margins.columns[node - firstPairTotal];
    return undefined;
  };
  const tableOf = (node: number): EngineTable => (node < firstPairTotal ? table : both!.table);
  const cellAt = (node: number): number => (node < firstPairTotal ? node - firstCell : node - firstPairCell);
  const count = (node: number): number => sumsOf(node)?.respondents ?? tableOf(node).counts[cellAt(node)]!;
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
  both?.pairs.forEach(([a, b], k) => {
    same(firstPairTotal + k, firstColumn + a);
    same(firstPairTotal + k, firstColumn + b);
    for (let r = 0; r < nRows; r++) {
      const cell = firstPairCell + r * nPairs + k;
      same(cell, firstCell + r * nColumns + a);
      same(cell, firstCell + r * nColumns + b);
      same(cell, firstPairTotal + k);
    }
  });
  if (!joined) return;

  // The design's slot of a node of `table`: cells (row-major), then row totals, then column totals, then the base.
  const slotOf = (node: number): number => (node === 0 ? cells + nRows + nColumns : node < firstColumn ? cells + node - 1 : node < firstCell ? cells + nRows + node - firstColumn : node - firstCell);
  for (let node = 1; node < nodes; node++) {
    const lead = find(node);
    if (lead === node) continue;
    const from = sumsOf(lead);
    const weighted = from ? from.weighted : tableOf(lead).sums[cellAt(lead)]!;
    const sumSq = from ? from.sumSqWeights : tableOf(lead).sumsSq[cellAt(lead)]!;
    const to = sumsOf(node);
    if (to) {
      to.weighted = weighted;
      to.sumSqWeights = sumSq;
    } else {
      tableOf(node).sums[cellAt(node)] = weighted;
      tableOf(node).sumsSq[cellAt(node)] = sumSq;
    }
    // A group's lead is its smallest node, so a node of `table` is led by one of `table`. The
    // pairs' sums carry no design: their variances are the simple design's alone.
    if (node < firstPairTotal) copyDesignSums(table.design, slotOf(lead), slotOf(node), nRows, nColumns);
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
