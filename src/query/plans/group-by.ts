/**
 * Group-by plan for one variable per axis (kernel `groupBy`): one pass over the base's
 * respondents adding each into a grid with one extra row and column for values off the
 * axes (so margins are grid sums).
 *
 * The base's words are cut into parts (partCount), each summed into a grid of its own; the
 * kernel adds the parts' grids in order when it splits out the cells. Within a part every
 * cell is summed in respondent order by one task at a time, so the sums are the same to the
 * last bit however the part was cut:
 * - on the pool, tasks over one part run at once, so each takes a range of grid rows and
 *   walks the whole part, adding only its rows' respondents (a row range costs a task most
 *   of a pass over the part: S3 on ACS, about 7 ms for half of the rows, 8-10 ms for all);
 * - inline, the slices of a part run one after the other into its grid, each a range of
 *   the part's words over every row: together exactly the one-task pass.
 * Where every sum of the weights is exact (whole-number weights, WeightVector.exactSums),
 * the order of adding cannot change a bit, so there is one part per pool thread; with
 * fractional weights the parts depend on the base alone, so inline and pool agree.
 */
import type { KernelTask } from '../../kernel/exports.js';
import type { CellSums, Kernel } from '../../kernel/kernel.js';
import { NS_PER_RESPONDENT } from '../costs.js';
import { settleAll, SLICE_MS } from '../executor.js';
import type { Evaluator } from '../evaluate.js';
import { type ScratchMemory, scratchMemory } from './group-by-parts.js';
import type { TableCells, TableInput, ValueNode } from './plan.js';

export async function groupByTable(input: TableInput<ValueNode>): Promise<TableCells> {
  const { kernel, evaluator, base, rows, columns, weights, run } = input;
  const memory = kernel.memory;
  const words = evaluator.words;
  const nRows = rows.length;
  const nColumns = columns.length;
  const cellBytes = kernel.layout.cellBytes;
  const respondents = kernel.exports.popcount(base.ptr, words);
  const estimatedMs = (respondents * NS_PER_RESPONDENT) / 1e6;
  const { executor, execution } = run.choose(estimatedMs);
  const a = evaluator.indexColumn(rows[0]!.variable);
  const b = evaluator.indexColumn(columns[0]!.variable);
  const scratch = scratchMemory(memory);
  try {
    const rowBytes = (nColumns + 1) * cellBytes;
    const offsetsA = gridOffsets(kernel, evaluator, scratch, rows, rowBytes);
    const offsetsB = gridOffsets(kernel, evaluator, scratch, columns, cellBytes);
    const gridBytes = (nRows + 1) * rowBytes;
    const parallelism = execution === 'pool' ? executor.parallelism : 1;
    // The base's words cut into parts, each summed into a grid of its own.
    const parts = wordRanges(words, partCount(weights.exactSums, parallelism, respondents, (nRows + 1) * (nColumns + 1)));
    // Tasks per part: on the pool, the part's grid rows cut among the threads left per part;
    // inline, slices of about SLICE_MS one after the other.
    const perPart = execution === 'pool' ? Math.max(1, Math.floor(parallelism / parts.length)) : Math.max(1, Math.ceil(estimatedMs / SLICE_MS / parts.length));
    // A part's grid is zeroed by its first task, unless tasks over its rows run at once.
    const zeroHere = execution === 'pool' && perPart > 1;
    const grid = scratch.alloc(parts.length * gridBytes, zeroHere);
    const pass: GroupByPass = { base: base.ptr, a, offsetsA, b, offsetsB, rowBytes, weights: weights.ptr, grid, scratch: scratch.alloc(parts.length * perPart * SCRATCH_STRIDE) };
    const perRow = zeroHere ? rowRespondents(evaluator, rows) : [];
    const tasks = parts.flatMap(({ from, to }, part) => {
      const own = { ...pass, grid: grid + part * gridBytes };
      const first = part * perPart;
      if (zeroHere) return rowRanges(perRow, perPart).map((rowRange, i) => groupByTask(own, first + i, from, to, rowRange));
      return wordRanges(to - from, perPart).map((slice, i) => groupByTask({ ...own, clearBytes: i === 0 ? gridBytes : 0 }, first + i, from + slice.from, from + slice.to));
    });
    await settleAll(tasks.map((task) => executor.run(task, run.signal)));
    const cells = nRows * nColumns;
    const out = scratch.alloc((cells * 3 + (nRows + nColumns) * 3) * 8, false);
    kernel.exports.groupByCells(grid, parts.length, nRows, nColumns, out, out + cells * 8, out + cells * 16, out + cells * 24);
    const sums = memory.f64(out, cells).slice();
    const sumsSq = memory.f64(out + cells * 8, cells).slice();
    const counts = memory.f64(out + cells * 16, cells).slice();
    const totals = memory.f64(out + cells * 24, (nRows + nColumns) * 3);
    const margin = (slot: number): CellSums => ({ weighted: totals[slot * 3]!, sumSqWeights: totals[slot * 3 + 1]!, respondents: totals[slot * 3 + 2]! });
    const rowMargins = rows.map((_, r) => margin(r));
    const columnMargins = columns.map((_, c) => margin(nRows + c));
    run.onProgress?.(cells, cells);
    return { sums, sumsSq, counts, plan: 'groupBy', execution, margins: { rows: rowMargins, columns: columnMargins } };
  } finally {
    scratch.releaseAll();
  }
}

/** Fewest base respondents for which a table with fractional weights is cut into two parts. */
const TWO_PARTS_RESPONDENTS = 1 << 17;

/**
 * Into how many word ranges of the base, each with a grid of its own, a group-by is cut.
 * Whole-number weights (exact sums): one per thread, since any order of adding gives the
 * same bits, as far as each part has 4 respondents per grid cell. Fractional weights: the parts must not depend on where the table runs, or
 * inline and pool answers would differ in the last bit, so a big base is cut into two parts
 * on every executor (each cell is then its first half's sum plus its second half's, each in
 * respondent order), a small one (or one with fewer respondents than 4 per grid cell, where
 * a second grid costs more than it saves) not at all.
 */
export function partCount(exactSums: boolean, parallelism: number, respondents: number, gridCells: number): number {
  if (exactSums) return Math.max(1, Math.min(parallelism, Math.floor(respondents / (4 * gridCells))));
  return respondents >= TWO_PARTS_RESPONDENTS && respondents >= 4 * gridCells ? 2 : 1;
}

/**
 * Respondents of each grid row over the whole dataset (the base's own counts are not known
 * before the pass): the row values' counts, then for the extra row those with a value off
 * the axis. Blanks off the axis are left out of the estimate: a blank is mostly "not asked"
 * (ACS: no occupation outside the labour force), so a base that gives the axis meaning has
 * few of them, and counting them would hand one task the rows of most of the base (S3:
 * 75% instead of half).
 */
function rowRespondents(evaluator: Evaluator, rows: ValueNode[]): number[] {
  const perRank = evaluator.rankRespondents(rows[0]!.variable);
  const onAxis = new Set(rows.map((node) => node.ranks[0]!));
  const perRow = rows.map((node) => perRank[node.ranks[0]!] ?? 0);
  perRow.push(perRank.reduce((sum, n, rank) => (rank > 0 && !onAxis.has(rank) ? sum + n : sum), 0));
  return perRow;
}

/**
 * Bytes between two tasks' scratch cells (where a task adds the respondents of other tasks'
 * rows): two cache lines, so that tasks on two threads never write one line.
 */
export const SCRATCH_STRIDE = 128;

/** What one group-by pass reads and writes: kernel pointers, index columns' bytes per rank. */
export interface GroupByPass {
  base: number;
  a: { ptr: number; width: number };
  /** Byte offset in the grid of each rank's row (gridOffsets). */
  offsetsA: number;
  b: { ptr: number; width: number };
  /** Byte offset in a grid row of each rank's column. */
  offsetsB: number;
  /** Bytes of a grid row: (nColumns + 1) cells. */
  rowBytes: number;
  weights: number;
  grid: number;
  /** Scratch cells, SCRATCH_STRIDE bytes apart, one per task. */
  scratch: number;
  /** Bytes of the grid the task zeroes before it adds (a grid of its own), else none. */
  clearBytes?: number;
}

/**
 * Task number `task`: it adds the respondents of base words [wordFrom, wordTo) whose grid row
 * is in `rows` (every row when it is not given), the others into its scratch cell. The
 * kernel counts respondents from the base pointer it is given, so the index columns and
 * weights are given from respondent wordFrom * 64 on.
 */
export function groupByTask(pass: GroupByPass, task: number, wordFrom: number, wordTo: number, rows?: { from: number; to: number }): KernelTask {
  const first = wordFrom * 64;
  const { a, b } = pass;
  const [fromOffset, toOffset] = rows ? [rows.from * pass.rowBytes, rows.to * pass.rowBytes] : [0, EVERY_ROW];
  return {
    fn: 'groupBy',
    args: [pass.base + wordFrom * 8, wordTo - wordFrom, a.ptr + first * a.width, a.width, pass.offsetsA, b.ptr + first * b.width, b.width, pass.offsetsB, fromOffset, toOffset, pass.weights + first * 8, pass.grid, pass.scratch + task * SCRATCH_STRIDE, pass.clearBytes ?? 0],
  };
}

/** toOffset of a task over every grid row (u32 all ones: the kernel tests no row). */
const EVERY_ROW = 0xffffffff;

/**
 * The u32 map the groupBy kernel reads for one axis: for each rank of the axis variable, the
 * byte offset of its grid row or column (position x `stride`), the extra row or column's
 * (axis length x `stride`) for ranks off the axis and blank.
 */
function gridOffsets(kernel: Kernel, evaluator: Evaluator, scratch: ScratchMemory, axis: ValueNode[], stride: number): number {
  const length = evaluator.rankCount(axis[0]!.variable) + 1;
  const ptr = scratch.alloc(length * 4, false);
  const view = new Uint32Array(kernel.memory.memory.buffer, ptr, length).fill(axis.length * stride);
  axis.forEach((node, position) => (view[node.ranks[0]!] = position * stride));
  return ptr;
}

/** Cuts `words` base words into `parts` consecutive ranges of about equal length, in order. */
export function wordRanges(words: number, parts: number): Array<{ from: number; to: number }> {
  const span = Math.ceil(words / parts);
  const ranges: Array<{ from: number; to: number }> = [];
  for (let from = 0; from < words; from += span) ranges.push({ from, to: Math.min(words, from + span) });
  return ranges.length > 0 ? ranges : [{ from: 0, to: words }];
}

/** Cuts the grid rows (respondents per row: `perRow`) into at most `parts` ranges of about equal respondents. */
export function rowRanges(perRow: readonly number[], parts: number): Array<{ from: number; to: number }> {
  const total = perRow.reduce((sum, n) => sum + n, 0);
  const ranges: Array<{ from: number; to: number }> = [];
  let from = 0;
  let seen = 0;
  for (let part = 1; part <= parts && from < perRow.length; part++) {
    let to = from;
    const target = (total * part) / parts;
    while (to < perRow.length && (to === from || seen + perRow[to]! <= target || part === parts)) seen += perRow[to++]!;
    ranges.push({ from, to });
    from = to;
  }
  return ranges;
}
