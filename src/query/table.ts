import { CrosstabError, ErrorCode } from '../errors.js';
import type { CellSums, Kernel, WeightVector } from '../kernel/kernel.js';
import type { KernelMemory } from '../kernel/memory.js';
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
  /** base AND row, base AND column. */
  margins: { rows: CellSums[]; columns: CellSums[] };
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
  if (valueAxis(rows) && valueAxis(columns)) {
    return scatterMulti(kernel, evaluator, base, rows as ValueNode[], columns as ValueNode[], weights, run);
  }
  // Margins come out of the same kernels: an extra row of everyone (base AND column) and an
  // extra column of everyone (base AND row), with the operands already prepared.
  const all: Bound = { op: 'all' };
  const cells = rows.length * columns.length;
  const padded = (rows.length + 1) * (columns.length + 1);
  const report = run.onProgress;
  const full = await bitsetRows(kernel, evaluator, base, [...rows, all], [...columns, all], weights, {
    ...run,
    onProgress: report && ((done) => report(Math.min(cells, Math.round((done * cells) / padded)), cells)),
  });
  const width = columns.length + 1;
  const pick = (r: number, c: number): CellSums => {
    const at = r * width + c;
    return { weighted: full.sums[at]!, sumSqWeights: full.sumsSq[at]!, respondents: full.counts[at]! };
  };
  const sums = new Float64Array(cells);
  const sumsSq = new Float64Array(cells);
  const counts = new Float64Array(cells);
  for (let r = 0; r < rows.length; r++) {
    sums.set(full.sums.subarray(r * width, r * width + columns.length), r * columns.length);
    sumsSq.set(full.sumsSq.subarray(r * width, r * width + columns.length), r * columns.length);
    counts.set(full.counts.subarray(r * width, r * width + columns.length), r * columns.length);
  }
  return {
    sums,
    sumsSq,
    counts,
    plan: 'bitsets',
    execution: full.execution,
    margins: { rows: rows.map((_, r) => pick(r, columns.length)), columns: columns.map((_, c) => pick(rows.length, c)) },
  };
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

/** Kernel memory taken for one table computation, given back all at once. */
export function scratchMemory(memory: KernelMemory) {
  const taken: Array<{ ptr: number; bytes: number }> = [];
  return {
    alloc(bytes: number, zeroed = true): number {
      const ptr = memory.alloc(bytes, zeroed);
      taken.push({ ptr, bytes });
      return ptr;
    },
    releaseAll(): void {
      for (const { ptr, bytes } of taken) memory.release(ptr, bytes);
      taken.length = 0;
    },
  };
}

/**
 * The cells and margins of a group-by accumulator: (Σw, Σw², n) triples for nRows x
 * nColumns cells, then the row margins, then the column margins.
 */
export function cellsFromTriples(totals: Float64Array, nRows: number, nColumns: number): Pick<TableCells, 'sums' | 'sumsSq' | 'counts' | 'margins'> {
  const cells = nRows * nColumns;
  const sums = new Float64Array(cells);
  const sumsSq = new Float64Array(cells);
  const counts = new Float64Array(cells);
  for (let i = 0; i < cells; i++) {
    sums[i] = totals[i * 3]!;
    sumsSq[i] = totals[i * 3 + 1]!;
    counts[i] = totals[i * 3 + 2]!;
  }
  const margin = (slot: number): CellSums => ({ weighted: totals[slot * 3]!, sumSqWeights: totals[slot * 3 + 1]!, respondents: totals[slot * 3 + 2]! });
  const rows = Array.from({ length: nRows }, (_, r) => margin(cells + r));
  const columns = Array.from({ length: nColumns }, (_, c) => margin(cells + nRows + c));
  return { sums, sumsSq, counts, margins: { rows, columns } };
}

/** Adds the accumulators of a group-by split across tasks into one array of `length` f64. */
export function sumParts(memory: KernelMemory, parts: number[], length: number): Float64Array {
  const total = memory.f64(parts[0]!, length).slice();
  for (const ptr of parts.slice(1)) {
    const part = memory.f64(ptr, length);
    for (let i = 0; i < length; i++) total[i]! += part[i]!;
  }
  return total;
}

/** True when every entry is one value of some variable, each (variable, value) once. */
export function valueAxis(axis: Bound[]): boolean {
  const seen = new Set<string>();
  return axis.every((node) => {
    if (node.op !== 'ranks' || node.ranks.length !== 1 || node.ranks[0] === 0) return false;
    const key = `${node.variable}:${node.ranks[0]}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Group-by plan for axes made of values of several single-coded variables: each
 * respondent of the base adds to the (row value, column value) cells it has, margins in
 * the same pass; split by word range across the pool when it is worth it.
 */
async function scatterMulti(kernel: Kernel, evaluator: Evaluator, base: DenseView, rows: ValueNode[], columns: ValueNode[], weights: WeightVector, run: TableRun): Promise<TableCells> {
  const memory = kernel.memory;
  const words = evaluator.words;
  const nRows = rows.length;
  const nColumns = columns.length;
  const cells = nRows * nColumns;
  const slots = cells + nRows + nColumns;
  const scratch = scratchMemory(memory);
  const alloc = (bytes: number) => scratch.alloc(bytes);
  /** One 12-byte entry per variable on the axis: index column, bytes per rank, rank -> position map. */
  const variables = (axis: ValueNode[]) => {
    const byVariable = new Map<number, Int32Array>();
    const maps = new Map<number, number>();
    axis.forEach((node, position) => {
      let view = byVariable.get(node.variable);
      if (!view) {
        const bytes = (evaluator.rankCount(node.variable) + 1) * 4;
        const ptr = alloc(bytes);
        view = new Int32Array(memory.memory.buffer, ptr, bytes / 4).fill(-1);
        byVariable.set(node.variable, view);
        maps.set(node.variable, ptr);
      }
      view[node.ranks[0]!] = position;
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
    const estimatedMs = (respondents * NS_PER_RESPONDENT * (rowVars.count * colVars.count + rowVars.count + colVars.count)) / 1e6;
    const { executor, execution } = run.choose(estimatedMs);
    const parts = execution === 'pool' ? executor.parallelism : 1;
    const span = Math.ceil(words / parts);
    const accs = Array.from({ length: parts }, () => alloc(slots * 24));
    await Promise.all(
      accs.map((acc, part) => {
        const hits = alloc((rowVars.count + colVars.count) * 4 + 8);
        const args = [base.ptr, Math.min(words, part * span), Math.min(words, (part + 1) * span), rowVars.entries, rowVars.count, colVars.entries, colVars.count, nRows, nColumns, weights.ptr, acc, hits];
        return executor.run({ fn: 'groupByMulti', args }, run.signal);
      }),
    );
    run.onProgress?.(cells, cells);
    return { ...cellsFromTriples(sumParts(memory, accs, slots * 3), nRows, nColumns), plan: 'scatter', execution };
  } finally {
    scratch.releaseAll();
  }
}

/**
 * Group-by plan: the respondents of the base, partitioned by row value and added into a
 * grid with one extra row and column for values off the axes (so margins are grid sums);
 * split by word range across the pool when it is worth it.
 */
async function scatter(kernel: Kernel, evaluator: Evaluator, base: DenseView, rows: ValueNode[], columns: ValueNode[], weights: WeightVector, run: TableRun): Promise<TableCells> {
  const memory = kernel.memory;
  const words = evaluator.words;
  const nRows = rows.length;
  const nColumns = columns.length;
  const width = nColumns + 1;
  const slots = (nRows + 1) * width;
  const estimatedMs = (kernel.exports.popcount(base.ptr, words) * NS_PER_RESPONDENT) / 1e6;
  const { executor, execution } = run.choose(estimatedMs);
  const parts = execution === 'pool' ? executor.parallelism : 1;
  const a = evaluator.indexColumn(rows[0]!.variable);
  const b = evaluator.indexColumn(columns[0]!.variable);
  const scratch = scratchMemory(memory);
  const alloc = (bytes: number, zeroed = true) => scratch.alloc(bytes, zeroed);
  const map = (axis: ValueNode[]) => {
    const bytes = (evaluator.rankCount(axis[0]!.variable) + 1) * 4;
    const ptr = alloc(bytes);
    const view = new Int32Array(memory.memory.buffer, ptr, bytes / 4).fill(-1);
    axis.forEach((node, position) => (view[node.ranks[0]!] = position));
    return ptr;
  };
  try {
    const mapA = map(rows);
    const mapB = map(columns);
    const span = Math.ceil(words / parts);
    const tasks = Array.from({ length: parts }, (_, part) => {
      const from = Math.min(words, part * span);
      const to = Math.min(words, (part + 1) * span);
      const respondents = to > from ? kernel.exports.popcount(base.ptr + from * 8, to - from) : 0;
      const grid = alloc(slots * 24);
      // Written in full by the kernel before it reads them: no zero-fill.
      const rowStart = alloc((nRows + 2) * 4, false);
      const bucketColumns = alloc(respondents * 4 + 4, false);
      const bucketWeights = alloc(respondents * 8 + 8, false);
      return { grid, args: [base.ptr, from, to, a.ptr, a.width, mapA, b.ptr, b.width, mapB, nRows, nColumns, weights.ptr, grid, rowStart, bucketColumns, bucketWeights] };
    });
    await Promise.all(tasks.map((task) => executor.run({ fn: 'groupBy', args: task.args }, run.signal)));
    const grid = sumParts(memory, tasks.map((task) => task.grid), slots * 3);
    // Cells are the grid without its extra row and column; margins are its row and column sums.
    const cells = nRows * nColumns;
    const sums = new Float64Array(cells);
    const sumsSq = new Float64Array(cells);
    const counts = new Float64Array(cells);
    const rowTotals = new Float64Array(nRows * 3);
    const columnTotals = new Float64Array(nColumns * 3);
    for (let r = 0; r <= nRows; r++) {
      for (let c = 0; c <= nColumns; c++) {
        const at = (r * width + c) * 3;
        if (r < nRows && c < nColumns) {
          const cell = r * nColumns + c;
          sums[cell] = grid[at]!;
          sumsSq[cell] = grid[at + 1]!;
          counts[cell] = grid[at + 2]!;
        }
        for (let k = 0; k < 3; k++) {
          if (r < nRows) rowTotals[r * 3 + k]! += grid[at + k]!;
          if (c < nColumns) columnTotals[c * 3 + k]! += grid[at + k]!;
        }
      }
    }
    const margin = (totals: Float64Array, i: number): CellSums => ({ weighted: totals[i * 3]!, sumSqWeights: totals[i * 3 + 1]!, respondents: totals[i * 3 + 2]! });
    const rowMargins = rows.map((_, r) => margin(rowTotals, r));
    const columnMargins = columns.map((_, c) => margin(columnTotals, c));
    run.onProgress?.(cells, cells);
    return { sums, sumsSq, counts, plan: 'scatter', execution, margins: { rows: rowMargins, columns: columnMargins } };
  } finally {
    scratch.releaseAll();
  }
}

/**
 * Overlapping codes: rows ANDed with the base, in tiles of TILE_ROWS, against column
 * blocks that fit COLUMN_BLOCK_BYTES. Dense columns go to the cache-blocked cellsTile
 * kernel in tasks of about TASK_MS (on the pool when the table is big enough); rare values
 * stored as sparse lists go through cellsRow on the calling thread meanwhile.
 */
async function bitsetRows(kernel: Kernel, evaluator: Evaluator, base: DenseView, rows: Bound[], columns: Bound[], weights: WeightVector, run: TableRun): Promise<Omit<TableCells, 'margins'>> {
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

export function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new CrosstabError(ErrorCode.cancelled, 'the query was cancelled', { hint: 'Run it again without aborting its signal.' });
  }
}

