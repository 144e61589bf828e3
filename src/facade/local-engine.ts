import { availableParallelism } from 'node:os';
import type { LoadedDataset } from '../dataset/file/reader.js';
import type { CellSums, Kernel, WeightVector } from '../kernel/kernel.js';
import { sharedPool } from '../pool/pool.js';
import { estimateCellsMs, poolCells } from '../query/cells-plan.js';
import type { Evaluator } from '../query/evaluate.js';
import { type Executor, inlineExecutor, POOL_THRESHOLD_MS, checkpoint } from '../query/executor.js';
import type { Bound } from '../query/resolve.js';
import type { DatasetEngine, EngineRun, EngineTable } from './engine.js';
import { DatasetDesign } from './dataset-design.js';

/** Targets evaluated between two checkpoints of a crosstab() call (one kernel walk of their cells). */
const CELLS_PER_CALL = 16;

/** crosstab() calls of this process in flight on a local engine (the planner sends small calls to the pool while others run). */
let callsInFlight = 0;

/** Counts on the WebAssembly kernel over a dataset loaded into kernel memory. */
export class LocalEngine implements DatasetEngine {
  readonly design: DatasetDesign['info'];
  private readonly tables: DatasetDesign;

  constructor(
    private readonly data: LoadedDataset,
    private readonly kernel: Kernel,
    private readonly evaluator: Evaluator,
    private readonly execution: 'auto' | 'inline' | 'pool' = 'auto',
  ) {
    this.tables = new DatasetDesign(data, kernel, evaluator);
    this.design = this.tables.info;
  }

  get location(): string {
    return this.data.path;
  }

  /**
   * The base's cell and base AND each target. The planner runs a call on the pool when the
   * dataset was opened with `execution: 'pool'`, or (`auto`) when its estimated kernel work
   * reaches POOL_THRESHOLD_MS or other crosstab() calls are in flight: concurrent calls then
   * spread over the workers and leave the calling thread to the host. Otherwise it runs
   * inline. Both give the same cells to the last bit (the same kernel calls on the same bitsets).
   */
  async cells(base: Bound, targets: readonly Bound[], weight: string | null, run: EngineRun): Promise<CellSums[]> {
    callsInFlight++;
    try {
      await checkpoint(run.signal);
      const weights = this.evaluator.weights(weight);
      const all: Bound[] = [{ op: 'all' }, ...targets];
      if (this.cellsOnPool(base, targets)) {
        return await poolCells(this.kernel, this.evaluator, base, all, weights, sharedPool(this.kernel).programRunner(), run.signal);
      }
      return await this.inlineCells(base, all, weights, run.signal);
    } finally {
      callsInFlight--;
    }
  }

  private cellsOnPool(base: Bound, targets: readonly Bound[]): boolean {
    if (this.execution !== 'auto') return this.execution === 'pool';
    if (availableParallelism() < 2) return false;
    return callsInFlight > 1 || estimateCellsMs(this.evaluator, base, targets, this.data.words, this.data.meta.respondents) >= POOL_THRESHOLD_MS;
  }

  /**
   * On the calling thread, CELLS_PER_CALL cells at a time with a checkpoint before each: a
   * call of thousands of targets, or calls chained without end, let the event loop run every
   * few milliseconds, and a call stops soon after its signal aborts.
   */
  private async inlineCells(base: Bound, all: readonly Bound[], weights: WeightVector, signal: AbortSignal): Promise<CellSums[]> {
    const baseView = this.evaluator.materialize(base);
    try {
      const cells: CellSums[] = [];
      for (let from = 0; from < all.length; from += CELLS_PER_CALL) {
        if (from > 0) await checkpoint(signal);
        cells.push(...this.evaluator.cells(baseView, all.slice(from, from + CELLS_PER_CALL), weights));
      }
      return cells;
    } finally {
      this.evaluator.release(baseView);
    }
  }

  async table(base: Bound, rows: readonly Bound[], columns: readonly Bound[], weight: string | null, run: EngineRun): Promise<EngineTable> {
    const weights = this.evaluator.weights(weight);
    const baseView = this.evaluator.materialize(base);
    try {
      const { cells, design } = await this.tables.table(baseView, [...rows], [...columns], weight, weights, {
        signal: run.signal,
        onProgress: run.onProgress,
        choose: (estimatedMs) => this.chooseExecutor(estimatedMs),
      });
      return { ...cells, total: this.evaluator.cell(baseView, { op: 'all' }, weights), design };
    } finally {
      this.evaluator.release(baseView);
    }
  }

  private chooseExecutor(estimatedMs: number): { executor: Executor; execution: 'inline' | 'pool' } {
    const small = estimatedMs < POOL_THRESHOLD_MS || availableParallelism() < 2;
    if (this.execution === 'inline' || (this.execution === 'auto' && small)) {
      return { executor: inlineExecutor(this.kernel), execution: 'inline' };
    }
    return { executor: sharedPool(this.kernel).executor(), execution: 'pool' };
  }

  verify(): { buffers: number; bytes: number } {
    return this.data.verifyAll();
  }

  close(): void {
    this.tables.dispose();
    this.evaluator.dispose();
    this.data.close();
    const memory = this.kernel.memory;
    for (const region of this.data.regions) memory.release(region.ptr, region.bytes);
  }
}
