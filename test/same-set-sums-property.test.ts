// shareSameSetSums on random small tables against a plain reading of its rule: link every part
// to what it lies in when both count as many respondents (a row or column total to the base, a
// cell to its row total and to its column total), label each node with the smallest node it is
// linked to through any chain (the base, then row totals, then column totals, then cells), and
// every node takes that node's Σw, Σw² and design sums. Counts are drawn from a few small
// numbers, so cells equal to their row, their column or both, empty rows and margins equal to
// the base (chains from a column through a cell to a row and on to the base) come often.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EngineTable } from '../src/facade/engine.js';
import { shareSameSetSums } from '../src/facade/same-sets.js';

interface Case {
  nRows: number;
  nColumns: number;
  total: number;
  rows: number[];
  columns: number[];
  cells: number[];
  design: 'simple' | 'taylor' | 'replicate';
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({ nRows: fc.integer({ min: 1, max: 5 }), nColumns: fc.integer({ min: 1, max: 5 }), total: fc.integer({ min: 0, max: 3 }), design: fc.constantFrom('simple' as const, 'taylor' as const, 'replicate' as const) })
  .chain(({ nRows, nColumns, total, design }) =>
    fc.record({ rows: fc.array(fc.integer({ min: 0, max: total }), { minLength: nRows, maxLength: nRows }), columns: fc.array(fc.integer({ min: 0, max: total }), { minLength: nColumns, maxLength: nColumns }) }).chain(({ rows, columns }) =>
      fc
        .tuple(...rows.flatMap((row) => columns.map((column) => fc.integer({ min: 0, max: Math.min(row, column) }))))
        .map((cells): Case => ({ nRows, nColumns, total, rows, columns, cells, design })),
    ),
  );

const CLUSTERS = 2;
const REPLICATES = 2;

/** A table whose every sum is its own number: node i's Σw is i + 0.25, its Σw² i + 0.5; design sums told apart by cluster or replicate. */
function made(c: Case): EngineTable {
  const nCells = c.nRows * c.nColumns;
  const firstCell = 1 + c.nRows + c.nColumns;
  const sums = (node: number, respondents: number) => ({ respondents, weighted: node + 0.25, sumSqWeights: node + 0.5 });
  const slots = nCells + c.nRows + c.nColumns + 1;
  const design: EngineTable['design'] =
    c.design === 'taylor'
      ? { kind: 'taylor', psus: { clusters: CLUSTERS, stratumOf: Int32Array.of(0, 0), strata: 1 } as never, clusterSums: { clusters: CLUSTERS, slots, sums: Float64Array.from({ length: CLUSTERS * slots }, (_, i) => 1000 + i) } }
      : c.design === 'replicate'
        ? ({
            kind: 'replicate',
            replicates: Array.from({ length: REPLICATES }, (_, k) => ({
              weighted: Float64Array.from({ length: nCells }, (_, i) => 10000 * (k + 1) + i),
              rowTotals: Float64Array.from({ length: c.nRows }, (_, i) => 10000 * (k + 1) + nCells + i),
              columnTotals: Float64Array.from({ length: c.nColumns }, (_, i) => 10000 * (k + 1) + nCells + c.nRows + i),
              total: 10000 * (k + 1) + slots - 1,
            })),
            degreesOfFreedom: 1,
            scale: 1,
            rscales: [1, 1],
            mse: false,
          } as never)
        : { kind: 'simple', fileRespondents: c.total };
  return {
    sums: Float64Array.from(c.cells, (_, i) => firstCell + i + 0.25),
    sumsSq: Float64Array.from(c.cells, (_, i) => firstCell + i + 0.5),
    counts: Float64Array.from(c.cells),
    margins: { rows: c.rows.map((n, r) => sums(1 + r, n)), columns: c.columns.map((n, col) => sums(1 + c.nRows + col, n)) },
    total: sums(0, c.total),
    plan: 'bitsets',
    execution: 'inline',
    design,
  };
}

/** Every node's figures in one list: per node Σw, Σw², n, then its design sums. Nodes: the base, row totals, column totals, cells (row-major). */
function figures(table: EngineTable, nRows: number, nColumns: number): number[][] {
  const nCells = nRows * nColumns;
  const slotOf = (node: number) => (node === 0 ? nCells + nRows + nColumns : node <= nRows ? nCells + node - 1 : node <= nRows + nColumns ? nCells + nRows + node - 1 - nRows : node - 1 - nRows - nColumns);
  const nodes = 1 + nRows + nColumns + nCells;
  const out: number[][] = [];
  for (let node = 0; node < nodes; node++) {
    const margin = node === 0 ? table.total : node <= nRows ? table.margins.rows[node - 1] : node <= nRows + nColumns ? table.margins.columns[node - 1 - nRows] : undefined;
    const cell = node - 1 - nRows - nColumns;
    const own = margin ? [margin.weighted, margin.sumSqWeights, margin.respondents] : [table.sums[cell]!, table.sumsSq[cell]!, table.counts[cell]!];
    const slot = slotOf(node);
    const { design } = table;
    const extra =
      design.kind === 'taylor'
        ? Array.from({ length: CLUSTERS }, (_, k) => design.clusterSums.sums[k * design.clusterSums.slots + slot]!)
        : design.kind === 'replicate'
          ? design.replicates.map((rep) => (slot < nCells ? rep.weighted[slot]! : slot < nCells + nRows ? rep.rowTotals[slot - nCells]! : slot < nCells + nRows + nColumns ? rep.columnTotals[slot - nCells - nRows]! : rep.total))
          : [];
    out.push([...own, ...extra]);
  }
  return out;
}

/** What the rule says: each node takes the figures (but its own count) of the smallest node it is chained to. */
function expected(c: Case): number[][] {
  const before = figures(made(c), c.nRows, c.nColumns);
  const firstColumn = 1 + c.nRows;
  const firstCell = firstColumn + c.nColumns;
  const count = (node: number) => before[node]![2]!;
  const links: [number, number][] = [];
  const link = (part: number, whole: number) => {
    if (count(part) === count(whole)) links.push([part, whole]);
  };
  for (let r = 0; r < c.nRows; r++) link(1 + r, 0);
  for (let col = 0; col < c.nColumns; col++) link(firstColumn + col, 0);
  for (let r = 0; r < c.nRows; r++) {
    for (let col = 0; col < c.nColumns; col++) {
      link(firstCell + r * c.nColumns + col, 1 + r);
      link(firstCell + r * c.nColumns + col, firstColumn + col);
    }
  }
  const label = before.map((_, node) => node);
  for (let changed = true; changed; ) {
    changed = false;
    for (const [a, b] of links) {
      const least = Math.min(label[a]!, label[b]!);
      if (label[a] !== least || label[b] !== least) {
        label[a] = least;
        label[b] = least;
        changed = true;
      }
    }
  }
  return before.map((own, node) => {
    const lead = before[label[node]!]!;
    return [lead[0]!, lead[1]!, own[2]!, ...lead.slice(3)];
  });
}

describe('shareSameSetSums on random tables', () => {
  it('every node takes the sums of the smallest node it is chained to by equal counts, per PSU and per replicate too', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const table = made(c);
        shareSameSetSums(table, c.nRows, c.nColumns);
        expect(figures(table, c.nRows, c.nColumns)).toEqual(expected(c));
      }),
      { numRuns: 2000 },
    );
  });
});
