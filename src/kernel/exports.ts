/**
 * The kernel's exports, described once. Pointers are byte offsets into the shared
 * memory; `words` counts u64 words (always even); `n` counts respondents.
 * See assembly/index.ts for the memory layout each function expects.
 */
/** Must equal kernelAbi() of the compiled kernel (assembly/index.ts). */
export const KERNEL_ABI = 7;

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
  cellsRow(
    row: number, columns: number, nColumns: number, weights: number, runs: number, nRuns: number, words: number,
    sums: number, sumsSq: number, counts: number, out: number,
  ): void;
  cellsTile(
    rows: number, nRows: number, columns: number, nColumns: number,
    weights: number, runs: number, nRuns: number, words: number, acc: number,
  ): void;
  /** Measurement alternatives (bench/kernel-variants.js). */
  cellBitSliced(a: number, b: number, planes: number, nPlanes: number, words: number, out: number): number;
  cellWalk(a: number, b: number, weights: number, words: number, out: number): number;
  groupBy(
    base: number, fromWord: number, toWord: number,
    a: number, aWidth: number, mapA: number,
    b: number, bWidth: number, mapB: number,
    nRows: number, nColumns: number, weights: number, grid: number,
    rowStart: number, bucketColumns: number, bucketWeights: number,
  ): number;
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
}

/** Number of u64 words of a bitset over `respondents`, rounded up to an even count. */
export function bitsetWords(respondents: number): number {
  return Math.ceil(respondents / 128) * 2;
}
