/**
 * What the group-by plans share: kernel scratch memory for one table, the split of the
 * base's words across tasks, the rank -> position maps and axis-variable entries the
 * kernel reads, and the sum of the tasks' accumulators.
 */
import type { CellSums, Kernel } from '../../kernel/kernel.js';
import type { KernelMemory } from '../../kernel/memory.js';
import type { Evaluator } from '../evaluate.js';
import { type Executor, SLICE_MS } from '../executor.js';
import type { TableCells, TableRun, ValueNode } from './plan.js';

/** Kernel memory taken for one table computation, given back all at once. */
export type ScratchMemory = ReturnType<typeof scratchMemory>;

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

/** A word range of the base, one per task. */
export interface WordRange {
  from: number;
  to: number;
}

/** Inline, the accumulators of a group-by cut into slices stay under this many bytes in all. */
const INLINE_PARTS_BYTES = 64 * 2 ** 20;

/**
 * Chooses inline or pool execution for `estimatedMs` and cuts the base's `words` into one
 * range per task: one per thread on the pool; inline, one per SLICE_MS of work (the inline
 * executor lets the event loop run between them), as far as their accumulators of
 * `partBytes` each fit INLINE_PARTS_BYTES.
 */
export function splitWords(run: TableRun, estimatedMs: number, words: number, partBytes: number): { executor: Executor; execution: 'inline' | 'pool'; ranges: WordRange[] } {
  const { executor, execution } = run.choose(estimatedMs);
  const slices = Math.min(Math.ceil(estimatedMs / SLICE_MS), Math.floor(INLINE_PARTS_BYTES / Math.max(1, partBytes)), Math.floor(words / 2));
  const parts = execution === 'pool' ? executor.parallelism : Math.max(1, slices);
  const span = Math.ceil(words / parts);
  const ranges = Array.from({ length: parts }, (_, part) => ({ from: Math.min(words, part * span), to: Math.min(words, (part + 1) * span) }));
  return { executor, execution, ranges };
}

/** An i32 map from each rank of `variable` to its position on the axis, -1 elsewhere. */
function positionMap(kernel: Kernel, evaluator: Evaluator, scratch: ScratchMemory, variable: number): { ptr: number; view: Int32Array } {
  const length = evaluator.rankCount(variable) + 1;
  const ptr = scratch.alloc(length * 4);
  return { ptr, view: new Int32Array(kernel.memory.memory.buffer, ptr, length).fill(-1) };
}

/**
 * The axis-variable entries of an axis of values of several variables (groupByMulti,
 * groupByDesign): one per variable, holding its index column, bytes per rank and
 * rank -> position map.
 */
export function axisVariables(kernel: Kernel, evaluator: Evaluator, scratch: ScratchMemory, axis: ValueNode[]): { entries: number; count: number } {
  const maps = new Map<number, { ptr: number; view: Int32Array }>();
  axis.forEach((node, position) => {
    let map = maps.get(node.variable);
    if (!map) {
      map = positionMap(kernel, evaluator, scratch, node.variable);
      maps.set(node.variable, map);
    }
    map.view[node.ranks[0]!] = position;
  });
  const stride = kernel.layout.axisVariableBytes;
  const entries = scratch.alloc(maps.size * stride);
  const table = new Uint32Array(kernel.memory.memory.buffer, entries, (maps.size * stride) / 4);
  [...maps].forEach(([variable, map], i) => {
    const index = evaluator.indexColumn(variable);
    table.set([index.ptr, index.width, map.ptr], (i * stride) / 4);
  });
  return { entries, count: maps.size };
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
