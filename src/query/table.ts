import { CrosstabError, ErrorCode } from '../errors.js';
import type { CellSums, Kernel, WeightVector } from '../kernel/kernel.js';
import type { DenseView, Evaluator } from './evaluate.js';
import type { Bound } from './resolve.js';

/** Materialised column bitsets of one block stay under this many bytes. */
const COLUMN_BLOCK_BYTES = 256 * 1024 * 1024;
/** Inline work yields to the event loop this often, so AbortSignals and progress get through. */
const YIELD_MS = 20;

export interface TableCells {
  sums: Float64Array;
  sumsSq: Float64Array;
  counts: Float64Array;
  plan: 'scatter' | 'bitsets';
}

export interface TableRun {
  signal?: AbortSignal | undefined;
  onProgress?: ((doneCells: number, totalCells: number) => void) | undefined;
}

type SingleValue = { variable: number; rank: number };

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
  const scatterAxes = singleVariableAxis(rows) && singleVariableAxis(columns);
  if (scatterAxes) return scatter(kernel, evaluator, base, rows as never, columns as never, weights, run);
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

function scatter(
  kernel: Kernel,
  evaluator: Evaluator,
  base: DenseView,
  rows: Array<Extract<Bound, { op: 'ranks' }>>,
  columns: Array<Extract<Bound, { op: 'ranks' }>>,
  weights: WeightVector,
  run: TableRun,
): TableCells {
  checkAborted(run.signal);
  const memory = kernel.memory;
  const cells = rows.length * columns.length;
  const a = evaluator.indexColumn(rows[0]!.variable);
  const b = evaluator.indexColumn(columns[0]!.variable);
  const map = (axis: typeof rows): { ptr: number; bytes: number } => {
    const bytes = (evaluator.rankCount(axis[0]!.variable) + 1) * 4;
    const ptr = memory.alloc(bytes);
    const view = new Int32Array(memory.memory.buffer, ptr, bytes / 4).fill(-1);
    axis.forEach((node, position) => (view[node.ranks[0]!] = position));
    return { ptr, bytes };
  };
  const mapA = map(rows);
  const mapB = map(columns);
  const blocks = [0, 1, 2].map(() => memory.alloc(cells * 8));
  try {
    kernel.exports.scatter(base.ptr, evaluator.words, a.ptr, a.width, mapA.ptr, b.ptr, b.width, mapB.ptr, columns.length, weights.ptr, blocks[0]!, blocks[1]!, blocks[2]!);
    const [sums, sumsSq, counts] = blocks.map((ptr) => memory.f64(ptr, cells).slice()) as [Float64Array, Float64Array, Float64Array];
    run.onProgress?.(cells, cells);
    return { sums, sumsSq, counts, plan: 'scatter' };
  } finally {
    for (const ptr of blocks) memory.release(ptr, cells * 8);
    memory.release(mapA.ptr, mapA.bytes);
    memory.release(mapB.ptr, mapB.bytes);
  }
}

async function bitsetRows(
  kernel: Kernel,
  evaluator: Evaluator,
  base: DenseView,
  rows: Bound[],
  columns: Bound[],
  weights: WeightVector,
  run: TableRun,
): Promise<TableCells> {
  const memory = kernel.memory;
  const nColumns = columns.length;
  const total = rows.length * nColumns;
  const sums = new Float64Array(total);
  const sumsSq = new Float64Array(total);
  const counts = new Float64Array(total);
  const perColumn = evaluator.words * 8;
  const blockSize = Math.max(1, Math.floor(COLUMN_BLOCK_BYTES / perColumn));
  let done = 0;
  let lastYield = performance.now();

  for (let start = 0; start < nColumns; start += blockSize) {
    const block = columns.slice(start, start + blockSize);
    const operands = block.map((node) => evaluator.operand(node));
    const entries = memory.alloc(block.length * 12);
    const outputs = memory.alloc(block.length * 24);
    try {
      const triples = new Uint32Array(memory.memory.buffer, entries, block.length * 3);
      operands.forEach((operand, i) => triples.set([operand.ptr, operand.sparse ? 1 : 0, operand.count], i * 3));
      for (let r = 0; r < rows.length; r++) {
        checkAborted(run.signal);
        const row = evaluator.intersect(base, rows[r]!);
        try {
          kernel.exports.cellsRow(row.ptr, entries, block.length, weights.ptr, weights.shared, evaluator.words, outputs, outputs + block.length * 8, outputs + block.length * 16, kernel.out);
        } finally {
          evaluator.release(row);
        }
        const results = memory.f64(outputs, block.length * 3);
        const at = r * nColumns + start;
        sums.set(results.subarray(0, block.length), at);
        sumsSq.set(results.subarray(block.length, block.length * 2), at);
        counts.set(results.subarray(block.length * 2), at);
        done += block.length;
        if (performance.now() - lastYield > YIELD_MS) {
          run.onProgress?.(done, total);
          await new Promise((resolve) => setImmediate(resolve));
          lastYield = performance.now();
        }
      }
    } finally {
      for (const operand of operands) if (operand.view) evaluator.release(operand.view);
      memory.release(entries, block.length * 12);
      memory.release(outputs, block.length * 24);
    }
  }
  run.onProgress?.(total, total);
  return { sums, sumsSq, counts, plan: 'bitsets' };
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new CrosstabError(ErrorCode.cancelled, 'the query was cancelled', { hint: 'Run it again without aborting its signal.' });
  }
}

export type { CellSums };
