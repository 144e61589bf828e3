/**
 * The column operands of a bitset table, built on the executor: a column that is an index
 * range (an income band, an age net) is a scan of 2.7 M ranks on ACS, about half a
 * millisecond, and a table of many codes has hundreds of them, so building them one after
 * the other on the calling thread kept the pool idle for a quarter of the table. Each
 * column's kernel calls are recorded by the Evaluator's own code (the same bits as
 * inline) and run in order; different columns run at once on the pool.
 */
import type { KernelTask } from '../../kernel/exports.js';
import { BITSET_FUNCTIONS, type BitsetOps, type BitsetScope, type DenseView, type Evaluator } from '../evaluate.js';
import { type Executor, runLimited } from '../executor.js';
import type { Bound } from '../resolve.js';
import { checkAborted } from './plan.js';

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
    // Twice the threads, so a worker has the next column while this thread hears of the last.
    await runLimited(nodes.length, executor.parallelism * 2, async (i) => {
      checkAborted(signal);
      const calls: KernelTask[] = [];
      // Bitsets the recording gave back serve its later steps only (they run in order), then the evaluator.
      const spare: number[] = [];
      const ops = Object.fromEntries(BITSET_FUNCTIONS.map((name) => [name, (...args: number[]) => void calls.push({ fn: name, args } as KernelTask)]));
      const scope: BitsetScope = { ops: ops as unknown as BitsetOps, take: () => spare.pop() ?? evaluator.borrow(), give: (ptr) => spare.push(ptr) };
      const operand = evaluator.operand(nodes[i]!, scope);
      try {
        for (const call of calls) await executor.run(call, signal);
      } catch (error) {
        if (operand.view) evaluator.release(operand.view);
        throw error;
      } finally {
        for (const ptr of spare) evaluator.giveBack(ptr);
      }
      operands[i] = operand;
    });
  } catch (error) {
    for (const operand of operands) if (operand?.view) evaluator.release(operand.view);
    throw error;
  }
  return operands;
}
