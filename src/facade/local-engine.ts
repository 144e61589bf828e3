import { availableParallelism } from 'node:os';
import type { LoadedDataset } from '../dataset/reader.js';
import type { CellSums, Kernel } from '../kernel/kernel.js';
import { sharedPool } from '../pool/pool.js';
import type { Evaluator } from '../query/evaluate.js';
import { type Executor, inlineExecutor, POOL_THRESHOLD_MS, checkpoint } from '../query/executor.js';
import type { Bound } from '../query/resolve.js';
import type { DatasetEngine, EngineRun, EngineTable } from './engine.js';
import { DatasetDesign } from './dataset-design.js';

/** Targets evaluated between two checkpoints of a crosstab() call (one kernel walk of their cells). */
const CELLS_PER_CALL = 16;

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
   * The base's cell and base AND each target, CELLS_PER_CALL targets at a time with a
   * checkpoint before each: a call of thousands of targets, or calls chained without end,
   * let the event loop run every few milliseconds, and a call stops soon after its signal aborts.
   */
  async cells(base: Bound, targets: readonly Bound[], weight: string | null, run: EngineRun): Promise<CellSums[]> {
    await checkpoint(run.signal);
    const weights = this.evaluator.weights(weight);
    const baseView = this.evaluator.materialize(base);
    try {
      const all: Bound[] = [{ op: 'all' }, ...targets];
      const cells: CellSums[] = [];
      for (let from = 0; from < all.length; from += CELLS_PER_CALL) {
        if (from > 0) await checkpoint(run.signal);
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
