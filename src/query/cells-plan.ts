import type { CellSums, Kernel, WeightVector } from '../kernel/kernel.js';
import { CallScratch, CellsProgram } from './cells-program.js';
import { NS_PER_INDEX_ENTRY, NS_PER_WORD_CELL, NS_PER_WORD_OP } from './costs.js';
import type { Evaluator } from './evaluate.js';
import { checkpoint, runLimited } from './executor.js';
import type { Bound } from './resolve.js';

/** Cells (the base's own first) one pool program computes: a few kernel walks, about a millisecond on millions of respondents. */
export const PROGRAM_CELLS = 64;

/** Runs cells programs (src/pool): settles only once no worker touches the program's memory. */
export interface ProgramRunner {
  readonly parallelism: number;
  /** The results the program kept, in order; rejects with `cancelled` when `signal` aborted before it finished. */
  runProgram(program: Uint32Array, signal?: AbortSignal): Promise<number[]>;
}

/**
 * Estimated milliseconds of kernel work of a crosstab() call, from its bound expressions
 * (costs.ts): what the planner weighs against POOL_THRESHOLD_MS.
 */
export function estimateCellsMs(evaluator: Pick<Evaluator, 'rangeBuild'>, base: Bound, targets: readonly Bound[], words: number, respondents: number): number {
  const pass = words * NS_PER_WORD_OP;
  const build = (node: Bound): number => {
    switch (node.op) {
      case 'all':
        return 0;
      case 'none':
        return pass;
      case 'ranks':
        return Math.max(1, node.ranks.length) * pass;
      case 'range':
        // As the evaluator builds it: a few values' stored codes ORed, one pass over two bitsets of the range index, or a scan of the index column.
        switch (evaluator.rangeBuild(node)) {
          case 'codes':
            return (node.hi - node.lo + 1) * pass;
          case 'index':
            return pass;
          case 'scan':
            return respondents * NS_PER_INDEX_ENTRY;
        }
      case 'not':
        return pass + build(node.item);
      case 'and':
      case 'or':
        return node.items.reduce((total, item) => total + pass + build(item), 0);
    }
  };
  const ns = build(base) + targets.reduce((total, target) => total + build(target), 0) + (targets.length + 1) * words * NS_PER_WORD_CELL;
  return ns / 1e6;
}

/**
 * The cells of base AND each of `cells` (the first is usually `*`, the base's own cell),
 * computed on pool workers. The calling thread records programs (cells-program.ts): the
 * first builds the base's bitset and the first PROGRAM_CELLS cells; once it is done, the
 * others run, as many at once as the runner has threads, each recorded after a checkpoint.
 * Resolves (or rejects) only when no program of the call runs any more.
 */
export async function poolCells(
  kernel: Kernel,
  evaluator: Evaluator,
  base: Bound,
  cells: readonly Bound[],
  weights: WeightVector,
  runner: ProgramRunner,
  signal: AbortSignal | undefined,
): Promise<CellSums[]> {
  const scratch = new CallScratch(evaluator);
  const results: CellSums[][] = [];
  try {
    const runChunk = async (chunk: number, baseView?: { ptr: number; owned: boolean }) => {
      await checkpoint(signal);
      const program = new CellsProgram(kernel, evaluator.words);
      const scope = scratch.scope(program);
      try {
        // The base's bitset is built by the first program, in a scope of its own that is never settled: later programs read it.
        const view = baseView ?? evaluator.dense(base, scratch.scope(program));
        program.recordCells(evaluator, scope, view, cells.slice(chunk * PROGRAM_CELLS, (chunk + 1) * PROGRAM_CELLS), weights);
        results[chunk] = program.read(await runner.runProgram(program.encode(), signal));
        return view;
      } finally {
        program.dispose();
        scope.settle();
      }
    };
    const baseView = await runChunk(0);
    const chunks = Math.ceil(cells.length / PROGRAM_CELLS);
    await runLimited(chunks - 1, runner.parallelism, async (index) => void (await runChunk(index + 1, baseView)));
    return results.flat();
  } finally {
    scratch.dispose();
  }
}
