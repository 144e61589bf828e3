/**
 * Bitset plan, for axes of arbitrary expressions (overlapping codes, nets, ranges): rows
 * ANDed with the base, in tiles of TILE_ROWS, against blocks of columns (kernel
 * `cellsTile`, cache-blocked); margins come out of the same kernels.
 */
import type { CellSums, Kernel, WeightVector } from '../../kernel/kernel.js';
import { NS_PER_ROW_ENTRY, NS_PER_WORD_CELL } from '../costs.js';
import type { DenseView, Evaluator } from '../evaluate.js';
import { runLimited, settleAll, SLICE_MS, TASK_MS } from '../executor.js';
import type { Bound } from '../resolve.js';
import { columnOperands } from './column-operands.js';
import { checkAborted, type TableCells, type TableInput, type TableRun } from './plan.js';
import { releaseRowEntries, type RowEntries, rowEntries } from './row-entries.js';

/** Materialised column bitsets of one block stay under this many bytes. */
const COLUMN_BLOCK_BYTES = 256 * 1024 * 1024;
/**
 * Rows ANDed with the base at a time. Its rare rows make one group (entries), so every
 * column word fetched serves as many of them as possible; the others go DENSE_ROWS at a time.
 */
const TILE_ROWS = 64;
/** Rows per cellsTile call: 16 row bitset chunks of 16 KiB stay in L2 beside one column chunk. */
const DENSE_ROWS = 16;

export async function bitsetTable(input: TableInput): Promise<TableCells> {
  const { kernel, evaluator, base, rows, columns, weights, run } = input;
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

/**
 * Overlapping codes: rows ANDed with the base, in tiles of TILE_ROWS, against column
 * blocks that fit COLUMN_BLOCK_BYTES. Dense columns go to the cache-blocked kernels in
 * tasks of about TASK_MS (on the pool when the table is big enough): rare rows as entries
 * (row-entries.ts, cellsTileEntries), the others as bitsets (cellsTile). Rare values
 * stored as sparse lists go through cellsRow on the calling thread meanwhile.
 */
async function bitsetRows(kernel: Kernel, evaluator: Evaluator, base: DenseView, rows: Bound[], columns: Bound[], weights: WeightVector, run: TableRun): Promise<Omit<TableCells, 'margins'>> {
  const memory = kernel.memory;
  const { pointerBytes, columnEntryBytes, cellBytes, cellOutBytes } = kernel.layout;
  const words = evaluator.words;
  const nColumns = columns.length;
  const total = rows.length * nColumns;
  const sums = new Float64Array(total);
  const sumsSq = new Float64Array(total);
  const counts = new Float64Array(total);
  const { executor, execution } = run.choose((total * words * NS_PER_WORD_CELL) / 1e6);
  // Inline, tasks are one slice of the calling thread's time: the executor yields between them.
  const taskMs = execution === 'pool' ? TASK_MS : SLICE_MS;
  const blockSize = Math.max(1, Math.floor(COLUMN_BLOCK_BYTES / (words * 8)));
  const store = (at: number, triples: Float64Array, from: number) => {
    sums[at] = triples[from]!;
    sumsSq[at] = triples[from + 1]!;
    counts[at] = triples[from + 2]!;
  };
  let done = 0;
  let lastYield = performance.now();

  for (let start = 0; start < nColumns; start += blockSize) {
    const operands = await columnOperands(evaluator, columns.slice(start, start + blockSize), executor, run.signal);
    const dense = operands.flatMap((operand, i) => (operand.sparse ? [] : [i]));
    const sparse = operands.flatMap((operand, i) => (operand.sparse ? [i] : []));
    // cellsRow's three f64 result arrays, then its `out` buffer.
    const sparseOutBytes = sparse.length * 24 + cellOutBytes;
    const densePtrs = memory.alloc(dense.length * pointerBytes);
    const sparseEntries = memory.alloc(sparse.length * columnEntryBytes);
    try {
      new Uint32Array(memory.memory.buffer, densePtrs, dense.length).set(dense.map((i) => operands[i]!.ptr));
      const entries = new Uint32Array(memory.memory.buffer, sparseEntries, (sparse.length * columnEntryBytes) / 4);
      sparse.forEach((i, j) => entries.set([operands[i]!.ptr, 1, operands[i]!.count], (j * columnEntryBytes) / 4));
      const tiles = Math.ceil(rows.length / TILE_ROWS);
      await runLimited(tiles, executor.parallelism, async (t) => {
        checkAborted(run.signal);
        const first = t * TILE_ROWS;
        const tile = rows.slice(first, first + TILE_ROWS).map((row) => evaluator.intersect(base, row));
        // Rare rows as entries (row-entries.ts), the others as dense bitsets: one group of tasks each.
        const asEntries = tile.map((view) => rowEntries(kernel, view.ptr, weights, words));
        const denseRows = tile.flatMap((_, r) => (asEntries[r] ? [] : [r]));
        const groups = [...Array.from({ length: Math.ceil(denseRows.length / DENSE_ROWS) }, (_, g) => denseRows.slice(g * DENSE_ROWS, (g + 1) * DENSE_ROWS)), tile.flatMap((_, r) => (asEntries[r] ? [r] : []))]
          .filter((members) => members.length > 0)
          .map((members) => {
            const entries = members.map((r) => asEntries[r]).filter((e): e is RowEntries => e !== undefined);
            // Estimated ns per column of the group: a dense pass per row, or a step per entry.
            const perColumn = entries.length > 0 ? entries.reduce((sum, e) => sum + e.count, 0) * NS_PER_ROW_ENTRY + members.length * 64 : members.length * words * NS_PER_WORD_CELL;
            const perTask = Math.max(1, Math.floor((taskMs * 1e6) / perColumn));
            const slices = Math.ceil(dense.length / perTask);
            const pointers = memory.alloc(members.length * pointerBytes * 2);
            const accs = Array.from({ length: slices }, (_, s) => memory.alloc(members.length * Math.min(perTask, dense.length - s * perTask) * cellBytes));
            return { members, entries, perTask, pointers, accs, width: (s: number) => Math.min(perTask, dense.length - s * perTask) };
          });
        const sparseOut = memory.alloc(sparseOutBytes);
        let tasks: Array<Promise<number>> = [];
        try {
          tasks = groups.flatMap((group) => {
            const n = group.members.length;
            const view = new Uint32Array(memory.memory.buffer, group.pointers, n * 2);
            if (group.entries.length > 0) {
              view.set(group.entries.map((e) => e.entries));
              view.set(group.entries.map((e) => e.chunks), n);
            } else view.set(group.members.map((r) => tile[r]!.ptr));
            return group.accs.map((acc, s) => {
              const columnPtrs = densePtrs + s * group.perTask * pointerBytes;
              return executor.run(
                group.entries.length > 0
                  ? { fn: 'cellsTileEntries', args: [group.pointers, group.pointers + n * pointerBytes, n, columnPtrs, group.width(s), words, acc] }
                  : { fn: 'cellsTile', args: [group.pointers, n, columnPtrs, group.width(s), weights.ptr, weights.runs, weights.nRuns, words, acc] },
                run.signal,
              );
            });
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
          await settleAll(tasks);
          for (const group of groups) {
            group.accs.forEach((acc, s) => {
              const width = group.width(s);
              const triples = memory.f64(acc, group.members.length * width * 3);
              group.members.forEach((r, i) => {
                for (let j = 0; j < width; j++) store((first + r) * nColumns + start + dense[s * group.perTask + j]!, triples, (i * width + j) * 3);
              });
            });
          }
        } finally {
          // Workers may still be writing the accumulators: release nothing before every task is done.
          await Promise.allSettled(tasks);
          for (const view of tile) evaluator.release(view);
          for (const entries of asEntries) if (entries) releaseRowEntries(kernel, entries);
          for (const group of groups) {
            memory.release(group.pointers, group.members.length * pointerBytes * 2);
            group.accs.forEach((acc, s) => memory.release(acc, group.members.length * group.width(s) * cellBytes));
          }
          memory.release(sparseOut, sparseOutBytes);
        }
        done += tile.length * operands.length;
        if (performance.now() - lastYield > SLICE_MS) {
          run.onProgress?.(done, total);
          await new Promise((resolve) => setImmediate(resolve));
          lastYield = performance.now();
        }
      });
    } finally {
      for (const operand of operands) if (operand.view) evaluator.release(operand.view);
      memory.release(densePtrs, dense.length * pointerBytes);
      memory.release(sparseEntries, sparse.length * columnEntryBytes);
    }
  }
  run.onProgress?.(total, total);
  return { sums, sumsSq, counts, plan: 'bitsets', execution };
}
