/**
 * The kernel's exports, described once. Pointers are byte offsets into the shared
 * memory; `words` counts u64 words (always even); `n` counts respondents.
 * See assembly/index.ts for the memory layout each function expects.
 */
/** Must equal kernelAbi() of the compiled kernel (assembly/index.ts). */
export const KERNEL_ABI = 14;

export interface KernelExports {
  kernelAbi(): number;
  bitsClear(dst: number, words: number): void;
  bitsCopy(dst: number, src: number, words: number): void;
  bitsUniverse(dst: number, words: number, n: number): void;
  bitsAnd(dst: number, a: number, b: number, words: number): void;
  bitsOr(dst: number, a: number, b: number, words: number): void;
  bitsAndNot(dst: number, a: number, b: number, words: number): void;
  bitsOrList(dst: number, list: number, count: number): void;
  bitsFromRangeU8(dst: number, column: number, words: number, n: number, lo: number, hi: number): void;
  bitsFromRangeU16(dst: number, column: number, words: number, n: number, lo: number, hi: number): void;
  bitsFromRangeU32(dst: number, column: number, words: number, n: number, lo: number, hi: number): void;
  popcount(a: number, words: number): number;
  andPopcount(a: number, b: number, words: number): number;
  weightRuns(weights: number, words: number, n: number, out: number): number;
  cellDense(a: number, b: number, weights: number, runs: number, nRuns: number, words: number, out: number): number;
  cellSparse(a: number, list: number, count: number, weights: number, out: number): number;
  cellsDense(a: number, bs: number, n: number, weights: number, runs: number, nRuns: number, words: number, acc: number): void;
  cellsRow(
    row: number, columns: number, nColumns: number, weights: number, runs: number, nRuns: number, words: number,
    sums: number, sumsSq: number, counts: number, out: number,
  ): void;
  cellsTile(
    rows: number, nRows: number, columns: number, nColumns: number,
    weights: number, runs: number, nRuns: number, words: number, acc: number,
  ): void;
  rowEntries(row: number, weights: number, runs: number, nRuns: number, words: number, out: number, capacity: number, chunks: number): number;
  cellsTileEntries(rows: number, chunks: number, nRows: number, columns: number, nColumns: number, words: number, acc: number): void;
  groupBy(
    base: number, words: number,
    a: number, aWidth: number, offsetsA: number,
    b: number, bWidth: number, offsetsB: number,
    fromOffset: number, toOffset: number, weights: number, grid: number, scratch: number, clearBytes: number,
  ): number;
  groupByCells(grid: number, nGrids: number, nRows: number, nColumns: number, sums: number, sumsSq: number, counts: number, margins: number): void;
  /** XXH64 (see assembly/xxhash64.ts); `state` is 48 bytes of scratch. */
  xxh64Init(state: number, seed: bigint): void;
  xxh64Update(state: number, ptr: number, len: number): void;
  xxh64Digest(state: number, ptr: number, len: number): bigint;
  xxh64(state: number, ptr: number, len: number): bigint;
  groupByMulti(
    base: number, fromWord: number, toWord: number,
    rowVars: number, nRowVars: number, colVars: number, nColVars: number,
    nRows: number, nColumns: number, weights: number, acc: number, scratch: number,
  ): void;
  groupByDesign(
    base: number, fromWord: number, toWord: number,
    rowVars: number, nRowVars: number, colVars: number, nColVars: number,
    nRows: number, nColumns: number, weights: number, acc: number, scratch: number,
    clusters: number, clusterAcc: number,
  ): void;
  clusterSumsAnd(a: number, b: number, words: number, weights: number, clusters: number, out: number): void;
  /** Weighting (assembly/weighting.ts): respondents `from` to `from + count - 1` of the walk. */
  weightCellsOf(vars: number, nVars: number, from: number, count: number, table: number, cells: number, next: number): number;
  weightScale(cells: number, count: number, from: number, weights: number, factors: number): void;
  weightBlockSums(vars: number, nVars: number, cells: number, count: number, from: number, weights: number, sums: number, spread: number): void;
}

/**
 * Strides and limits of the records the exports read and write. The kernel exports them as
 * globals (assembly/index.ts, "Layout"); readLayout() reads them at instantiation, so no
 * size is written twice.
 */
export interface KernelLayout {
  /** One weight run (u32 first word, u32 end word, f64 weight, u64 mask). */
  weightRunBytes: number;
  /** Most runs one word of a weight vector becomes: a run buffer has room for words * this. */
  maxSegments: number;
  /** One accumulated cell: f64 sum, f64 sum of squares, f64 count. */
  cellBytes: number;
  /** One column entry of cellsRow (u32 pointer, u32 kind, u32 count). */
  columnEntryBytes: number;
  /** One axis variable of groupByMulti / groupByDesign (u32 index column, u32 bytes per rank, u32 map). */
  axisVariableBytes: number;
  /** One row entry of rowEntries / cellsTileEntries (u32 word, u32 padding, f64 weight, u64 bits). */
  rowEntryBytes: number;
  /** Words per chunk of cellsTile / cellsTileEntries: rowEntries writes one entry offset per chunk, plus one. */
  chunkWords: number;
  /** One entry of cellsTile's pointer arrays. */
  pointerBytes: number;
  /** The `out` buffer of the cell functions. */
  cellOutBytes: number;
  /** The xxh64 hash state. */
  xxh64StateBytes: number;
  /** One target variable of weightCellsOf / weightBlockSums (u32 index column, u32 bytes per rank, u32 radix, u32 its value sums). */
  weightVariableBytes: number;
  /** One fine cell of weightBlockSums (f64 sum of weights, f64 respondents, f64 first respondent). */
  cellSumsBytes: number;
  /** One value of weightBlockSums (f64 respondents, f64 sum of weights, f64 min, f64 max). */
  rankSumsBytes: number;
  /** The spread of weightBlockSums (f64 respondents, sum, sum of squares, min, max). */
  spreadBytes: number;
}

const LAYOUT_GLOBALS: Record<keyof KernelLayout, string> = {
  weightRunBytes: 'WEIGHT_RUN_BYTES',
  maxSegments: 'MAX_SEGMENTS',
  cellBytes: 'CELL_BYTES',
  columnEntryBytes: 'COLUMN_ENTRY_BYTES',
  axisVariableBytes: 'AXIS_VARIABLE_BYTES',
  rowEntryBytes: 'ROW_ENTRY_BYTES',
  chunkWords: 'CHUNK_WORDS',
  pointerBytes: 'POINTER_BYTES',
  cellOutBytes: 'CELL_OUT_BYTES',
  xxh64StateBytes: 'XXH64_STATE_BYTES',
  weightVariableBytes: 'WEIGHT_VARIABLE_BYTES',
  cellSumsBytes: 'CELL_SUMS_BYTES',
  rankSumsBytes: 'RANK_SUMS_BYTES',
  spreadBytes: 'SPREAD_BYTES',
};

/** The layout globals of an instantiated kernel; undefined when one is missing. */
export function readLayout(instanceExports: Record<string, unknown>): KernelLayout | undefined {
  const layout: Partial<Record<keyof KernelLayout, number>> = {};
  for (const [key, name] of Object.entries(LAYOUT_GLOBALS) as Array<[keyof KernelLayout, string]>) {
    const global = instanceExports[name] as { value?: unknown } | undefined;
    if (typeof global?.value !== 'number') return undefined;
    layout[key] = global.value;
  }
  return layout as KernelLayout;
}

/**
 * Kernel functions an executor runs as tasks (inline, or on a pool worker), with their
 * arguments typed by the export they call.
 */
export const TASK_FUNCTIONS = [
  'cellsTile', 'cellsTileEntries', 'groupBy', 'groupByMulti', 'groupByDesign',
  // A table's column bitsets (src/query/plans/column-operands.ts).
  'bitsClear', 'bitsCopy', 'bitsAnd', 'bitsOr', 'bitsAndNot', 'bitsOrList', 'bitsFromRangeU8', 'bitsFromRangeU16', 'bitsFromRangeU32',
] as const;
export type TaskFunction = (typeof TASK_FUNCTIONS)[number];
export type KernelTask = { [F in TaskFunction]: { fn: F; args: Parameters<KernelExports[F]> } }[TaskFunction];

/** Number of u64 words of a bitset over `respondents`, rounded up to an even count. */
export function bitsetWords(respondents: number): number {
  return Math.ceil(respondents / 128) * 2;
}
