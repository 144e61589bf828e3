import { CalibratedDesign } from './calibrated-design.js';
import { clusterStructure, describeDesign, type ClusterStructure } from '../dataset/build/design.js';
import { BufferKind, type StoredVariable } from '../dataset/format.js';
import type { LoadedDataset } from '../dataset/file/reader.js';
import type { Kernel, WeightVector } from '../kernel/kernel.js';
import { computeTableWithPsuSums } from '../query/table-with-psu-sums.js';
import type { DenseView, Evaluator } from '../query/evaluate.js';
import type { Bound } from '../query/resolve.js';
import { computeTable, type TableCells, type TableRun } from '../query/table.js';
import { replicateRank } from '../stats/replicate-rank.js';
import type { TableDesign } from '../stats/table-variance.js';
import type { DesignInfo } from './types.js';

/**
 * The survey design of an open dataset: for a Taylor design, each respondent's PSU number
 * in kernel memory (computed once, by the first table, from the strata and PSU index
 * columns); for a replicate design, the replicate weight vectors. Produces the per-PSU sums or replicate estimates
 * that `tableStatistics` turns into variances.
 */
export class DatasetDesign {
  readonly info: DesignInfo;
  private structure: ClusterStructure | undefined;
  private psuColumn: { ptr: number; bytes: number } | undefined;
  /** Rank of the whole file's replicate weights (computed by the first domain that needs it). */
  private fileRank: number | undefined;
  private readonly calibrated: CalibratedDesign;

  constructor(
    private readonly data: LoadedDataset,
    private readonly kernel: Kernel,
    private readonly evaluator: Evaluator,
  ) {
    this.calibrated = new CalibratedDesign(data, kernel);
    const design = data.meta.design;
    const kind = design?.replicates ? 'replicate' : design?.psu ? 'taylor' : 'simple';
    this.info = { kind, description: describeDesign(design) };
    if (design?.psu) {
      // Counted at build; the PSU structure itself is made by the first design table.
      Object.assign(this.info, { psu: design.psu, strataCount: design.strataCount, psuCount: design.psuCount });
      if (design.strata) this.info.strata = design.strata;
      if (design.nest) this.info.nest = true;
      if (design.fpc) this.info.fpc = design.fpc;
    }
    if (design?.replicates) {
      const { degfGiven: _given, ...replicates } = design.replicates;
      this.info.replicates = { ...replicates, weights: [...replicates.weights], rscales: [...replicates.rscales] };
    }
  }

  /**
   * The table's cells, and with them what its variances need: per-PSU sums (Taylor, same
   * pass), or the cells under every replicate weight (replicate designs; only with the
   * dataset's default weight, the one the replicates replicate).
   */
  async table(base: DenseView, rows: Bound[], columns: Bound[], weight: string | null, weights: WeightVector, run: TableRun): Promise<{ cells: TableCells; design: TableDesign }> {
    const stored = this.data.meta.design;
    const zero = this.zeroWeightsIn(base, weight);
    const simple: TableDesign = { kind: 'simple', fileRespondents: this.data.meta.respondents, ...zero };
    if (stored?.psu) {
      const structure = this.psus();
      const column = this.psuColumn!;
      const input = { kernel: this.kernel, evaluator: this.evaluator, base, rows, columns, weights, run };
      const cells = await computeTableWithPsuSums(input, { ptr: column.ptr, clusters: structure.clusters });
      const { clusterSums: plain, ...rest } = cells;
      // A weight calibrated by `crosstab weight`: the residuals of the calibrated design (R's calibrate()/rake()).
      const clusterSums = this.calibrated.calibrationOf(weight) ? await this.calibrated.residualSums(weight!, input, structure.clusterOf, plain) : plain;
      return { cells: rest, design: { kind: 'taylor', psus: { clusters: structure.clusters, stratumOf: structure.stratumOf, strata: structure.strata }, clusterSums, ...zero } };
    }
    const cells = await computeTable({ kernel: this.kernel, evaluator: this.evaluator, base, rows, columns, weights, run });
    const replicates = stored?.replicates;
    if (!replicates || weight !== this.data.meta.weights[0]!.name) return { cells, design: simple };
    const estimates = [];
    for (const name of replicates.weights) {
      const vector = this.evaluator.weights(name);
      const replicate = await computeTable({ kernel: this.kernel, evaluator: this.evaluator, base, rows, columns, weights: vector, run });
      estimates.push({
        weighted: replicate.sums,
        rowTotals: Float64Array.from(replicate.margins.rows, (sums) => sums.weighted),
        columnTotals: Float64Array.from(replicate.margins.columns, (sums) => sums.weighted),
        total: this.evaluator.cell(base, { op: 'all' }, vector).weighted,
      });
    }
    const degreesOfFreedom = this.replicateDegreesOfFreedom(base);
    return { cells, design: { kind: 'replicate', scale: replicates.scale, rscales: replicates.rscales, mse: replicates.mse, degreesOfFreedom, replicates: estimates, ...zero } };
  }

  /**
   * The base's respondents whose weight is 0, when the weight has any (one walk of the base
   * with a 0/1 weight; nothing when it has none): design effects must count them out.
   */
  private zeroWeightsIn(base: DenseView, weight: string | null): { zeroWeights?: number } {
    if (weight === null || this.evaluator.zeroWeights(weight) === 0) return {};
    const cell = this.evaluator.cell(base, { op: 'all' }, this.evaluator.positiveWeights(weight));
    const zero = cell.respondents - cell.weighted;
    return zero > 0 ? { zeroWeights: zero } : {};
  }

  /**
   * The degrees of freedom of the base as a domain of the replicate design, as R's
   * `degf(subset(design, base))`: `subset()` drops the design's degf and recomputes it from
   * the domain's rows, the rank of their replicate weights − 1. A base of every respondent
   * is the design itself and keeps its degf (the one given at build, or the file's rank − 1).
   */
  private replicateDegreesOfFreedom(base: DenseView): number {
    const replicates = this.data.meta.design!.replicates!;
    const n = this.data.meta.respondents;
    const members = this.baseRespondents(base);
    if (members.length === n) return replicates.degf;
    // Views over kernel memory: made after every weight vector exists, used before anything allocates.
    const vectors = replicates.weights.map((name) => this.evaluator.weights(name));
    const columns = vectors.map((vector) => this.kernel.memory.f64(vector.ptr, n));
    this.fileRank ??= replicateRank(columns, n);
    return replicateRank(columns, members, this.fileRank) - 1;
  }

  /** The row numbers of the base's respondents, from its bitset. */
  private baseRespondents(base: DenseView): Uint32Array {
    const n = this.data.meta.respondents;
    const bits = new Uint32Array(this.kernel.memory.memory.buffer, base.ptr, Math.ceil(n / 32)).slice();
    if (n % 32 !== 0) bits[bits.length - 1]! &= 2 ** (n % 32) - 1;
    let count = 0;
    for (const word of bits) count += bitCount(word);
    const members = new Uint32Array(count);
    let at = 0;
    bits.forEach((word, w) => {
      let rest = word;
      while (rest !== 0) {
        const low = rest & -rest;
        members[at++] = w * 32 + 31 - Math.clz32(low);
        rest ^= low;
      }
    });
    return members;
  }

  /** Frees the PSU column. */
  dispose(): void {
    this.calibrated.dispose();
    if (this.psuColumn) this.kernel.memory.release(this.psuColumn.ptr, this.psuColumn.bytes);
    this.psuColumn = undefined;
  }

  private psus(): ClusterStructure {
    if (this.structure) return this.structure;
    const memory = this.kernel.memory;
    const n = this.data.meta.respondents;
    const ranks = (variable: StoredVariable): ArrayLike<number> => {
      const buffer = this.data.buffer(variable.index);
      const bytes = memory.memory.buffer;
      if (buffer.kind === BufferKind.indexU8) return new Uint8Array(bytes, buffer.ptr, n);
      if (buffer.kind === BufferKind.indexU16) return new Uint16Array(bytes, buffer.ptr, n);
      return new Uint32Array(bytes, buffer.ptr, n);
    };
    const structure = clusterStructure(this.data.meta, this.data.meta.design!, ranks);
    const bytes = this.data.words * 64 * 4;
    const ptr = memory.alloc(bytes);
    new Uint32Array(memory.memory.buffer, ptr, n).set(structure.clusterOf);
    this.psuColumn = { ptr, bytes };
    this.structure = structure;
    return structure;
  }
}

function bitCount(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
