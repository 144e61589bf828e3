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
  const { counts, margins, total } = table;
  const cells = nRows * nColumns;
  const pairs = both?.pairs ?? [];
  const nPairs = pairs.length;
  // Nodes: 0 the base, 1..nRows the row totals, then the column totals, then the cells (row-major),
  // then each pair's total (base AND A AND B), then the pairs' cells (row-major).
  const firstColumn = 1 + nRows;
  const firstCell = firstColumn + nColumns;
  const firstPairTotal = firstCell + cells;
  const firstPairCell = firstPairTotal + nPairs;
  // A union-find over the nodes found equal to another (parent -1: never joined, alone). The pass
  // over a table is two count comparisons per cell; only the nodes joined are visited after it, so
  // a big table (OCCP x INDP, 140,450 cells) costs its comparisons and the few thousand it joins.
  const parent = new Int32Array(firstPairCell + nRows * nPairs).fill(-1);
  const joined: number[] = [];
  const find = (node: number): number => {
    let root = node;
    for (let up = parent[root]!; up >= 0 && up !== root; up = parent[root]!) root = up;
    while (node !== root) {
      const next = parent[node]!;
      parent[node] = root;
      node = next;
    }
    return root;
  };
  // The smaller node (the wider set, or the earlier margin) leads its group.
  const join = (a: number, b: number): void => {
    if (parent[a]! < 0) (parent[a] = a), joined.push(a);
    if (parent[b]! < 0) (parent[b] = b), joined.push(b);
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
  for (let r = 0; r < nRows; r++) {
    const rowCount = margins.rows[r]!.respondents;
    if (rowCount === total.respondents) join(1 + r, 0);
    for (let c = 0, at = r * nColumns; c < nColumns; c++, at++) {
      const count = counts[at]!;
      if (count === rowCount) join(firstCell + at, 1 + r);
      if (count === columnCounts[c]) join(firstCell + at, firstColumn + c);
    }
  }
  if (both !== undefined) {
    const pairTotals = both.table.margins.columns;
    const pairCounts = both.table.counts;
    for (let k = 0; k < nPairs; k++) {
      const [a, b] = pairs[k]!;
      const pairTotal = firstPairTotal + k;
      const count = pairTotals[k]!.respondents;
      if (count === columnCounts[a]) join(pairTotal, firstColumn + a);
      if (count === columnCounts[b]) join(pairTotal, firstColumn + b);
      for (let r = 0; r < nRows; r++) {
        const at = r * nPairs + k;
        const cellCount = pairCounts[at]!;
        if (cellCount === counts[r * nColumns + a]) join(firstPairCell + at, firstCell + r * nColumns + a);
        if (cellCount === counts[r * nColumns + b]) join(firstPairCell + at, firstCell + r * nColumns + b);
        if (cellCount === count) join(firstPairCell + at, pairTotal);
      }
    }
  }
  if (joined.length === 0) return;

  // A margin's sums (the base, a row total, a column total, a pair's total); undefined for a cell, whose sums are in its table's arrays.
  const sumsOf = (node: number): CellSums | undefined =>
    node === 0 ? total : node < firstColumn ? margins.rows[node - 1] : node < firstCell ? margins.columns[node - firstColumn] : node < firstPairTotal ? undefined : node < firstPairCell ? both!.table.margins.columns[node - firstPairTotal] : undefined;
  const tableOf = (node: number): EngineTable => (node < firstPairTotal ? table : both!.table);
  const cellAt = (node: number): number => (node < firstPairTotal ? node - firstCell : node - firstPairCell);
  // The design's slot of a node of `table`: cells (row-major), then row totals, then column totals, then the base.
  const slotOf = (node: number): number => (node === 0 ? cells + nRows + nColumns : node < firstColumn ? cells + node - 1 : node < firstCell ? cells + nRows + node - firstColumn : node - firstCell);
  for (const node of joined) {
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
