import { CrosstabError, ErrorCode } from '../errors.js';
import type { RankColumn } from '../dataset/file/respondent-columns.js';
import type { StoredVariable } from '../dataset/format.js';
import type { Kernel } from '../kernel/kernel.js';
import { spreadOf, trimWeights, type WeightSpread } from '../weighting/index.js';

/**
 * Respondents grouped by their values of every variable the targets use (the group
 * variable first): a "fine cell" per distinct combination, holding its respondents and the
 * sum of their base weights (f64, summed in respondent order). A respondent's new weight is
 * its base weight times its fine cell's factor, so everything between reading the data and
 * writing the weight works on cells, not respondents.
 */
export interface FineCells {
  variables: StoredVariable[];
  /** Per variable, the value rank of each cell. */
  ranks: number[][];
  base: number[];
  respondents: number[];
}

/** Per target variable, per value rank (0 = blank): respondents, and the weights' sum, min and max (summed in respondent order). */
export interface ValueSums {
  respondents: Float64Array;
  sum: Float64Array;
  min: Float64Array;
  max: Float64Array;
}

/** What the report needs of a set of weights: per target variable and value, and over everyone. */
export interface WeightSums {
  variables: ValueSums[];
  spread: WeightSpread;
}

/** Respondents per block of a walk: their cells (256 KiB) and weights (512 KiB) stay in cache across the kernel calls on the block. */
export const CELL_BLOCK = 1 << 16;

/** Largest table of combinations indexed directly (in kernel memory, 4 bytes a key); beyond it a Map is used. */
const DIRECT_LIMIT = 1 << 22;

/**
 * The walks of a weighting over its respondents, in the kernel (assembly/weighting.ts): the
 * target variables' index columns and the weights (`weights`: a view of kernel memory, the
 * base weights, made the new weights in place by newWeights()) are read where they are. A
 * respondent's fine cell is recomputed from its values on each walk, a block at a time: no
 * array per respondent is made (a fresh array of millions of entries costs a page fault per
 * 4 KiB). Give the walk's kernel memory back with release().
 */
export class RespondentWalk {
  private readonly regions: Array<{ ptr: number; bytes: number }> = [];
  private readonly radix: number[];
  private readonly vars: number;
  private readonly block: number;
  /** Per key, its cell + 1 (0: no respondent yet), when the keys are indexed directly. */
  private readonly table: number;
  private readonly mapped: Map<number, number> | undefined;
  private cells = 0;

  constructor(
    private readonly kernel: Kernel,
    private readonly variables: StoredVariable[],
    private readonly columns: RankColumn[],
    private readonly weights: Float64Array,
  ) {
    this.radix = variables.map((variable) => variable.values.length + 1);
    const combinations = this.radix.reduce((product, r) => product * r, 1);
    if (combinations > Number.MAX_SAFE_INTEGER) {
      throw new CrosstabError(ErrorCode.invalidInput, `the target variables ${variables.map((v) => v.name).join(', ')} have too many combinations of values to weight`, {
        hint: 'Weight on fewer variables, or on variables with fewer values (band a numeric variable first).',
      });
    }
    const { layout } = kernel;
    this.vars = this.alloc(Math.max(1, columns.length) * layout.weightVariableBytes);
    const entries = new Uint32Array(kernel.memory.memory.buffer, this.vars, columns.length * (layout.weightVariableBytes / 4));
    // Index column, bytes per rank, radix; the value sums' place is set by each walk (startSums).
    columns.forEach((column, v) => entries.set([column.byteOffset, column.BYTES_PER_ELEMENT, this.radix[v]!], v * (layout.weightVariableBytes / 4)));
    this.block = this.alloc(CELL_BLOCK * 4);
    this.table = combinations <= DIRECT_LIMIT ? this.alloc(combinations * 4) : 0;
    this.mapped = combinations <= DIRECT_LIMIT ? undefined : new Map();
  }

  private alloc(bytes: number): number {
    const ptr = this.kernel.memory.alloc(bytes);
    this.regions.push({ ptr, bytes });
    return ptr;
  }

  /** Gives back the kernel memory of the walk. */
  release(): void {
    for (const { ptr, bytes } of this.regions.splice(0)) this.kernel.memory.release(ptr, bytes);
  }

  /**
   * Puts the cells of respondents `start` to `start + count - 1` in the block, numbering the
   * combinations in order of first appearance; returns the cells numbered so far.
   */
  private cellsOf(start: number, count: number): number {
    if (this.mapped === undefined) {
      this.cells = this.kernel.exports.weightCellsOf(this.vars, this.columns.length, start, count, this.table, this.block, this.cells);
      return this.cells;
    }
    // Keys past 2^31 (and a table too large to index): one key at a time, through a Map.
    const { mapped, columns, radix } = this;
    const into = new Int32Array(this.kernel.memory.memory.buffer, this.block, count);
    for (let i = 0; i < count; i++) {
      let key = 0;
      for (let v = 0; v < columns.length; v++) key = key * radix[v]! + columns[v]![start + i]!;
      let cell = mapped.get(key);
      if (cell === undefined) mapped.set(key, (cell = mapped.size));
      into[i] = cell;
    }
    return (this.cells = mapped.size);
  }

  /** Per target variable, RANK_SUMS records for every rank (min at +Infinity, max at -Infinity), named in its entry of `vars`; and a spread record. */
  private startSums(): { ranks: number[]; spread: number } {
    const { layout, memory } = this.kernel;
    const start = (ptr: number, records: number, stride: number, minAt: number) => {
      const view = memory.f64(ptr, (records * stride) / 8);
      for (let r = 0; r < records; r++) {
        view[(r * stride + minAt) / 8] = Infinity;
        view[(r * stride + minAt) / 8 + 1] = -Infinity;
      }
      return ptr;
    };
    const ranks = this.radix.map((size) => start(this.alloc(size * layout.rankSumsBytes), size, layout.rankSumsBytes, 16));
    const entries = new Uint32Array(memory.memory.buffer, this.vars, ranks.length * (layout.weightVariableBytes / 4));
    ranks.forEach((ptr, v) => (entries[v * (layout.weightVariableBytes / 4) + 3] = ptr));
    return { ranks, spread: start(this.alloc(layout.spreadBytes), 1, layout.spreadBytes, 24) };
  }

  private readSums(sums: { ranks: number[]; spread: number }): WeightSums {
    const { memory, layout } = this.kernel;
    const fields = (ptr: number, records: number, field: number) => {
      const view = memory.f64(ptr, (records * layout.rankSumsBytes) / 8);
      return Float64Array.from({ length: records }, (_, r) => view[(r * layout.rankSumsBytes) / 8 + field]!);
    };
    const variables = this.radix.map((size, v) => ({
      respondents: fields(sums.ranks[v]!, size, 0),
      sum: fields(sums.ranks[v]!, size, 1),
      min: fields(sums.ranks[v]!, size, 2),
      max: fields(sums.ranks[v]!, size, 3),
    }));
    const [n, sum, squares, min, max] = memory.f64(sums.spread, 5);
    return { variables, spread: spreadOf(n!, sum!, squares!, min!, max!) };
  }

  /**
   * Per cell, CELL_SUMS records of the weights; `walk` puts the cells of each block in the
   * block (and may change its weights) before they are added.
   */
  private cellSums(walk: (start: number, count: number) => void, sums: { ranks: number[]; spread: number }): Float64Array {
    const { kernel, weights } = this;
    const stride = kernel.layout.cellSumsBytes;
    let capacity = Math.max(64, this.cells);
    let records = kernel.memory.alloc(capacity * stride);
    try {
      for (let start = 0; start < weights.length; start += CELL_BLOCK) {
        const count = Math.min(CELL_BLOCK, weights.length - start);
        walk(start, count);
        if (this.cells > capacity) {
          const grown = Math.max(this.cells, 2 * capacity);
          const moved = kernel.memory.alloc(grown * stride);
          kernel.memory.bytes(moved, capacity * stride).set(kernel.memory.bytes(records, capacity * stride));
          kernel.memory.release(records, capacity * stride);
          records = moved;
          capacity = grown;
        }
        kernel.exports.weightBlockSums(this.vars, this.columns.length, this.block, count, start, weights.byteOffset, records, sums.spread);
      }
      return Float64Array.from(kernel.memory.f64(records, (this.cells * stride) / 8));
    } finally {
      kernel.memory.release(records, capacity * stride);
    }
  }

  /** The fine cells of the respondents (numbered as the walk meets them), and what the report needs of the base weights. */
  fineCells(): { fine: FineCells; base: WeightSums } {
    const sums = this.startSums();
    const records = this.cellSums((start, count) => this.cellsOf(start, count), sums);
    const cells = this.cells;
    const perCell = this.kernel.layout.cellSumsBytes / 8;
    const field = (f: number) => {
      const values = new Array<number>(cells);
      for (let cell = 0; cell < cells; cell++) values[cell] = records[cell * perCell + f]!;
      return values;
    };
    const first = field(2);
    return {
      fine: { variables: this.variables, ranks: this.columns.map((column) => first.map((r) => column[r]!)), base: field(0), respondents: field(1) },
      base: this.readSums(sums),
    };
  }

  /**
   * Each respondent's weight times its fine cell's factor, in place (then trimmed to `trim`,
   * as R's trimWeights(), when given); returns per fine cell the new weights' total, how many
   * were trimmed, and what the report needs of the new weights. Call after fineCells().
   */
  newWeights(factorOfFine: Float64Array, trim: [number, number] | undefined): { fineTotals: Float64Array; trimmed: number; sums: WeightSums } {
    const { kernel, weights } = this;
    const factors = this.alloc(factorOfFine.length * 8);
    kernel.memory.f64(factors, factorOfFine.length).set(factorOfFine);
    const scale = (start: number, count: number) => {
      this.cellsOf(start, count);
      kernel.exports.weightScale(this.block, count, start, weights.byteOffset, factors);
    };
    let trimmed = 0;
    if (trim !== undefined) {
      for (let start = 0; start < weights.length; start += CELL_BLOCK) scale(start, Math.min(CELL_BLOCK, weights.length - start));
      trimmed = trimWeights(weights, trim[0], trim[1]);
    }
    const sums = this.startSums();
    const records = this.cellSums(trim === undefined ? scale : (start, count) => this.cellsOf(start, count), sums);
    const fineTotals = new Float64Array(this.cells);
    const perCell = kernel.layout.cellSumsBytes / 8;
    for (let cell = 0; cell < this.cells; cell++) fineTotals[cell] = records[cell * perCell]!;
    return { fineTotals, trimmed, sums: this.readSums(sums) };
  }
}
