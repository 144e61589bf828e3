import { CrosstabError, ErrorCode } from '../errors.js';
import type { CellSums, Kernel, WeightVector } from '../kernel/kernel.js';
import type { DenseView, Evaluator } from './evaluate.js';
import { type Executor, NS_PER_RESPONDENT, NS_PER_WORD_CELL, runLimited, TASK_MS } from './executor.js';
import type { Bound } from './resolve.js';

/** Materialised column bitsets of one block stay under this many bytes. */
const COLUMN_BLOCK_BYTES = 256 * 1024 * 1024;
/** Work yields to the event loop this often, so AbortSignals and progress get through. */
const YIELD_MS = 20;
/** Rows per tile: 16 row bitset chunks of 16 KiB stay in L2 beside one column chunk. */
const TILE_ROWS = 16;

export interface TableCells {
  sums: Float64Array;
  sumsSq: Float64Array;
  counts: Float64Array;
  plan: 'scatter' | 'bitsets';
  /** Where the cells were computed. */
  execution: 'inline' | 'pool';
  /** Margins, when the plan computed them on the way (else the caller computes them). */
  margins?: { rows: CellSums[]; columns: CellSums[] };
}

export interface TableRun {
  signal?: AbortSignal | undefined;
  onProgress?: ((doneCells: number, totalCells: number) => void) | undefined;
  /** Picks inline or pool execution for work estimated at `estimatedMs`. */
  choose: (estimatedMs: number) => { executor: Executor; execution: 'inline' | 'pool' };
}

type ValueNode = Extract<Bound, { op: 'ranks' }>;

/** Computes every cell base AND row AND column, choosing the plan by the shape of the axes. */
export async function computeTable(
  kernel: Kernel,
  evaluator: Evaluator,
  base: DenseView,
  rows: Bound[],
  columns: Bound[],
  weights: WeightVector,
  run: TableRun,
): Promise<TableCells> {
  checkAborted(run.signal);
  if (singleVariableAxis(rows) && singleVariableAxis(columns)) {
    return scatter(kernel, evaluator, base, rows as ValueNode[], columns as ValueNode[], weights, run);
  }
  return bitsetRows(kernel, evaluator, base, rows, columns, weights, run);
}

/** True when every entry is one value of one and the same variable, each value once. */
function singleVariableAxis(axis: Bound[]): boolean {
  const first = axis[0];
  if (!first || first.op !== 'ranks') return false;
  const seen = new Set<number>();
  return axis.every((node) => {
    if (node.op !== 'ranks' || node.variable !== first.variable || node.ranks.length !== 1 || node.ranks[0] === 0) return false;
    if (seen.has(node.ranks[0]!)) return false;
    seen.add(node.ranks[0]!);
    return true;
  });
}

/**
 * Group-by plan: one pass over the base's respondents (split by word range across the
 * pool when it is worth it), cells and margins together.
 */
async function scatter(kernel: Kernel, evaluator: Evaluator, base: DenseView, rows: ValueNode[], columns: ValueNode[], weights: WeightVector, run: TableRun): Promise<TableCells> {
  const memory = kernel.memory;
  const words = evaluator.words;
  const cells = rows.length * columns.length;
  const slots = cells + rows.length + columns.length;
  const estimatedMs = (kernel.exports.popcount(base.ptr, words) * NS_PER_RESPONDENT) / 1e6;
  const { executor, execution } = run.choose(estimatedMs);
  const parts = execution === 'pool' ? executor.parallelism : 1;
  const a = evaluator.indexColumn(rows[0]!.variable);
  const b = evaluator.indexColumn(columns[0]!.variable);
  const map = (axis: ValueNode[]) => {
    const bytes = (evaluator.rankCount(axis[0]!.variable) + 1) * 4;
    const ptr = memory.alloc(bytes);
    const view = new Int32Array(memory.memory.buffer, ptr, bytes / 4).fill(-1);
    axis.forEach((node, position) => (view[node.ranks[0]!] = position));
    return { ptr, bytes };
  };
  const mapA = map(rows);
  const mapB = map(columns);
  const accs = Array.from({ length: parts }, () => memory.alloc(slots * 24));
  try {
    const span = Math.ceil(words / parts);
    await Promise.all(
      accs.map((acc, part) =>
        executor.run(
          {
            fn: 'scatter',
            args: [base.ptr, part * span, Math.min(words, (part + 1) * span), a.ptr, a.width, mapA.ptr, b.ptr, b.width, mapB.ptr, rows.length, columns.length, weights.ptr, acc],
          },
          run.signal,
        ),
      ),
    );
    const totals = new Float64Array(slots * 3);
    for (const acc of accs) {
      const part = memory.f64(acc, slots * 3);
      for (let i = 0; i < totals.length; i++) totals[i]! += part[i]!;
    }
    const sums = new Float64Array(cells);
    const sumsSq = new Float64Array(cells);
    const counts = new Float64Array(cells);
    for (let i = 0; i < cells; i++) {
      sums[i] = totals[i * 3]!;
      sumsSq[i] = totals[i * 3 + 1]!;
      counts[i] = totals[i * 3 + 2]!;
    }
    const margin = (slot: number): CellSums => ({ weighted: totals[slot * 3]!, sumSqWeights: totals[slot * 3 + 1]!, respondents: totals[slot * 3 + 2]! });
    run.onProgress?.(cells, cells);
    return {
      sums,
      sumsSq,
      counts,
      plan: 'scatter',
      execution,
      margins: { rows: rows.map((_, r) => margin(cells + r)), columns: columns.map((_, c) => margin(cells + rows.length + c)) },
    };
  } finally {
    for (const acc of accs) memory.release(acc, slots * 24);
    memory.release(mapA.ptr, mapA.bytes);
    memory.release(mapB.ptr, mapB.bytes);
  }
}

/**
 * Overlapping codes: rows ANDed with the base, in tiles of TILE_ROWS, against column
 * blocks that fit COLUMN_BLOCK_BYTES. Dense columns go to the cache-blocked cellsTile
 * kernel in tasks of about TASK_MS (on the pool when the table is big enough); rare values
 * stored as sparse lists go through cellsRow on the calling thread meanwhile.
 */
async function bitsetRows(kernel: Kernel, evaluator: Evaluator, base: DenseView, rows: Bound[], columns: Bound[], weights: WeightVector, run: TableRun): Promise<TableCells> {
  const memory = kernel.memory;
  const words = evaluator.words;
  const nColumns = columns.length;
  const total = rows.length * nColumns;
  const sums = new Float64Array(total);
  const sumsSq = new Float64Array(total);
  const counts = new Float64Array(total);
  const { executor, execution } = run.choose((total * words * NS_PER_WORD_CELL) / 1e6);
  const columnsPerTask = Math.max(1, Math.floor((TASK_MS * 1e6) / (TILE_ROWS * words * NS_PER_WORD_CELL)));
  const blockSize = Math.max(1, Math.floor(COLUMN_BLOCK_BYTES / (words * 8)));
  const store = (at: number, triples: Float64Array, from: number) => {
    sums[at] = triples[from]!;
    sumsSq[at] = triples[from + 1]!;
    counts[at] = triples[from + 2]!;
  };
  let done = 0;
  let lastYield = performance.now();

  for (let start = 0; start < nColumns; start += blockSize) {
    const operands = columns.slice(start, start + blockSize).map((node) => evaluator.operand(node));
    const dense = operands.flatMap((operand, i) => (operand.sparse ? [] : [i]));
    const sparse = operands.flatMap((operand, i) => (operand.sparse ? [i] : []));
    const densePtrs = memory.alloc(dense.length * 4);
    const sparseEntries = memory.alloc(sparse.length * 12);
    try {
      new Uint32Array(memory.memory.buffer, densePtrs, dense.length).set(dense.map((i) => operands[i]!.ptr));
      const entries = new Uint32Array(memory.memory.buffer, sparseEntries, sparse.length * 3);
      sparse.forEach((i, j) => entries.set([operands[i]!.ptr, 1, operands[i]!.count], j * 3));
      const tiles = Math.ceil(rows.length / TILE_ROWS);
      await runLimited(tiles, executor.parallelism, async (t) => {
        checkAborted(run.signal);
        const first = t * TILE_ROWS;
        const tile = rows.slice(first, first + TILE_ROWS).map((row) => evaluator.intersect(base, row));
        const tileRows = memory.alloc(tile.length * 4);
        const slices = Math.ceil(dense.length / columnsPerTask);
        const accs = Array.from({ length: slices }, (_, s) => memory.alloc(tile.length * Math.min(columnsPerTask, dense.length - s * columnsPerTask) * 24));
        const sparseOut = memory.alloc(sparse.length * 24 + 32);
        try {
          new Uint32Array(memory.memory.buffer, tileRows, tile.length).set(tile.map((view) => view.ptr));
          const tasks = accs.map((acc, s) => {
            const width = Math.min(columnsPerTask, dense.length - s * columnsPerTask);
            return executor.run(
              { fn: 'cellsTile', args: [tileRows, tile.length, densePtrs + s * columnsPerTask * 4, width, weights.ptr, weights.runs, weights.nRuns, words, acc] },
              run.signal,
            );
          });
          // Rare values meanwhile, on this thread.
          const n = sparse.length;
          tile.forEach((row, r) => {
            if (n === 0) return;
            kernel.exports.cellsRow(row.ptr, sparseEntries, n, weights.ptr, weights.runs, weights.nRuns, words, sparseOut, sparseOut + n * 8, sparseOut + n * 16, sparseOut + n * 24);
            const out = memory.f64(sparseOut, n * 3);
            sparse.forEach((column, j) => {
              const at = (first + r) * nColumns + start + column;
              sums[at] = out[j]!;
              sumsSq[at] = out[n + j]!;
              counts[at] = out[2 * n + j]!;
            });
          });
          await Promise.all(tasks);
          accs.forEach((acc, s) => {
            const width = Math.min(columnsPerTask, dense.length - s * columnsPerTask);
            const triples = memory.f64(acc, tile.length * width * 3);
            for (let r = 0; r < tile.length; r++) {
              for (let j = 0; j < width; j++) store((first + r) * nColumns + start + dense[s * columnsPerTask + j]!, triples, (r * width + j) * 3);
            }
          });
        } finally {
          for (const view of tile) evaluator.release(view);
          memory.release(tileRows, tile.length * 4);
          accs.forEach((acc, s) => memory.release(acc, tile.length * Math.min(columnsPerTask, dense.length - s * columnsPerTask) * 24));
          memory.release(sparseOut, sparse.length * 24 + 32);
        }
        done += tile.length * operands.length;
        if (performance.now() - lastYield > YIELD_MS) {
          run.onProgress?.(done, total);
          await new Promise((resolve) => setImmediate(resolve));
          lastYield = performance.now();
        }
      });
    } finally {
      for (const operand of operands) if (operand.view) evaluator.release(operand.view);
      memory.release(densePtrs, dense.length * 4);
      memory.release(sparseEntries, sparse.length * 12);
    }
  }
  run.onProgress?.(total, total);
  return { sums, sumsSq, counts, plan: 'bitsets', execution };
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new CrosstabError(ErrorCode.cancelled, 'the query was cancelled', { hint: 'Run it again without aborting its signal.' });
  }
}

