import type { PlanName } from '../query/table.js';
import type { CellSums } from '../kernel/kernel.js';
import type { Bound } from '../query/resolve.js';
import type { TableDesign } from '../stats/table-variance.js';
import type { DesignInfo } from './types.js';

/** The cells of a table as an engine computes them (row-major), with margins and the base. */
export interface EngineTable {
  sums: Float64Array;
  sumsSq: Float64Array;
  counts: Float64Array;
  /** base AND row, base AND column. */
  margins: { rows: CellSums[]; columns: CellSums[] };
  total: CellSums;
  plan: PlanName | 'sql';
  execution: 'inline' | 'pool' | 'clickhouse';
  design: TableDesign;
}

export interface EngineRun {
  /**
   * Aborts when the caller's signal does or the dataset closes: an engine stops its work at
   * its next check and rejects with `cancelled` (the Dataset reports `dataset_closed` itself).
   */
  signal: AbortSignal;
  onProgress?: ((doneCells: number, totalCells: number) => void) | undefined;
}

/**
 * Where a Dataset's cells are counted. The Dataset validates options and binds expressions
 * (the same parser, resolver, groups and errors for every engine); an engine only sums
 * weights over bound expressions: the WebAssembly kernel over the dataset in memory
 * (local-engine.ts), or SQL on ClickHouse (clickhouse-engine.ts).
 */
export interface DatasetEngine {
  /** File path or URL, for messages. */
  readonly location: string;
  readonly design: DesignInfo;
  /** The base, then base AND each target. */
  cells(base: Bound, targets: readonly Bound[], weight: string | null, run: EngineRun): Promise<CellSums[]>;
  table(base: Bound, rows: readonly Bound[], columns: readonly Bound[], weight: string | null, run: EngineRun): Promise<EngineTable>;
  verify(): { buffers: number; bytes: number };
  close(): void;
}
