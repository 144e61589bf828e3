/**
 * Sparse rows of a bitset table as entries (kernel rowEntries): one step per word that holds
 * any of the row's respondents instead of one per word of the bitset. A table of many codes
 * has mostly rare rows (a value of an occupation, a narrow income band: under 1% of the
 * respondents, a third of the words or fewer), and their cells are where the time goes.
 * A row becomes entries only when its entries cost less than the dense pass (costs.ts); the
 * choice depends on the row and the weights alone, so inline and pool runs give the same sums.
 */
import type { Kernel, WeightVector } from '../../kernel/kernel.js';
import { NS_PER_ROW_ENTRY, NS_PER_WORD_CELL } from '../costs.js';

/** A row's entries and chunk offsets in kernel memory; give them back with releaseRowEntries(). */
export interface RowEntries {
  entries: number;
  chunks: number;
  count: number;
  entryBytes: number;
  chunkBytes: number;
}

/** Most entries a row may have and still be cheaper than a dense pass over `words` words. */
export function entryCapacity(words: number): number {
  return Math.floor((words * NS_PER_WORD_CELL) / NS_PER_ROW_ENTRY);
}

/** The entries of `row` (a dense bitset), or undefined when the dense kernel is the cheaper. */
export function rowEntries(kernel: Kernel, row: number, weights: WeightVector, words: number): RowEntries | undefined {
  const { memory, layout, exports } = kernel;
  // A row has at most one entry per respondent: no bigger buffer than its popcount.
  const capacity = Math.min(entryCapacity(words), exports.popcount(row, words));
  const entryBytes = Math.max(1, capacity) * layout.rowEntryBytes;
  const chunkBytes = (Math.ceil(words / layout.chunkWords) + 1) * 4;
  const entries = memory.alloc(entryBytes, false);
  const chunks = memory.alloc(chunkBytes, false);
  const count = exports.rowEntries(row, weights.ptr, weights.runs, weights.nRuns, words, entries, capacity, chunks);
  const found = { entries, chunks, count, entryBytes, chunkBytes };
  if (count >= 0) return found;
  releaseRowEntries(kernel, found);
  return undefined;
}

export function releaseRowEntries(kernel: Kernel, row: RowEntries): void {
  kernel.memory.release(row.entries, row.entryBytes);
  kernel.memory.release(row.chunks, row.chunkBytes);
}
