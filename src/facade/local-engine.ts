import { availableParallelism } from 'node:os';
import type { LoadedDataset } from '../dataset/reader.js';
import type { CellSums, Kernel } from '../kernel/kernel.js';
import { sharedPool } from '../pool/pool.js';
import type { Evaluator } from '../query/evaluate.js';
import { type Executor, inlineExecutor, POOL_THRESHOLD_MS } from '../query/executor.js';
import type { Bound } from '../query/resolve.js';
import type { DatasetEngine, EngineRun, EngineTable } from './engine.js';
import { DatasetDesign } from './table-design.js';

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

  async cells(base: Bound, targets: readonly Bound[], weight: string | null): Promise<CellSums[]> {
    const weights = this.evaluator.weights(weight);
    const baseView = this.evaluator.materialize(base);
    try {
      return this.evaluator.cells(baseView, [{ op: 'all' }, ...targets], weights);
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
