/**
 * The column operands of a bitset table, built on the executor: a column that is an index
 * range (an income band, an age net) is a scan of 2.7 M ranks on ACS, about a third of a
 * millisecond, and a table of many codes has hundreds of them, so building them one after
 * the other on the calling thread kept the pool idle for a quarter of the table. The
 * kernel calls of COLUMNS_PER_TASK columns are recorded by the Evaluator's own code (the
 * same bits as inline) and run in order as one task; tasks run at once on the pool.
 */
import type { KernelTask } from '../../kernel/exports.js';
import { BITSET_FUNCTIONS, type BitsetOps, type BitsetScope, type DenseView, type Evaluator } from '../evaluate.js';
import { type Executor, runLimited } from '../executor.js';
import type { Bound } from '../resolve.js';
import { checkAborted } from './plan.js';

/** Columns per task: a few milliseconds of index scans, so a message is not one per scan. */
const COLUMNS_PER_TASK = 16;

export interface ColumnOperand {
  ptr: number;
  sparse: boolean;
  count: number;
  view?: DenseView;
}

/** The operands of `nodes`, in order; give the views back with evaluator.release(). */
export async function columnOperands(evaluator: Evaluator, nodes: readonly Bound[], executor: Executor, signal: AbortSignal | undefined): Promise<ColumnOperand[]> {
  const operands: ColumnOperand[] = new Array(nodes.length);
  try {
    // Twice the threads, so a worker has the next task while this thread hears of the last.
    await runLimited(Math.ceil(nodes.length / COLUMNS_PER_TASK), executor.parallelism * 2, async (task) => {
      checkAborted(signal);
      const calls: KernelTask[] = [];
      // Bitsets the recording gave back serve its later steps only (they run in order), then the evaluator.
      const spare: number[] = [];
      const ops = Object.fromEntries(BITSET_FUNCTIONS.map((name) => [name, (...args: number[]) => void calls.push({ fn: name, args } as KernelTask)]));
      const scope: BitsetScope = { ops: ops as unknown as BitsetOps, take: () => spare.pop() ?? evaluator.borrow(), give: (ptr) => spare.push(ptr) };
      const first = task * COLUMNS_PER_TASK;
      const built = nodes.slice(first, first + COLUMNS_PER_TASK).map((node) => evaluator.operand(node, scope));
      try {
        if (calls.length > 0) await executor.runCalls(calls, signal);
      } catch (error) {
        for (const operand of built) if (operand.view) evaluator.release(operand.view);
        throw error;
      } finally {
        for (const ptr of spare) evaluator.giveBack(ptr);
      }
      built.forEach((operand, i) => (operands[first + i] = operand));
    });
  } catch (error) {
    for (const operand of operands) if (operand?.view) evaluator.release(operand.view);
    throw error;
  }
  return operands;
}
