import { CrosstabError, ErrorCode } from '../errors.js';
import type { StoredCalibration } from '../dataset/format.js';
import type { LoadedDataset } from '../dataset/file/reader.js';
import { rankColumn, weightColumn } from '../dataset/file/respondent-columns.js';
import type { Kernel } from '../kernel/kernel.js';
import type { TableInput } from '../query/plans/plan.js';
import { computeTableWithPsuSums } from '../query/table-with-psu-sums.js';
import type { PsuSums } from '../stats/table-variance.js';
import { calibratedPsuSums, type CalibrationModel, type PsuCellWeights } from '../weighting/calibration-variance.js';

/** Dense (PSU, cell) sums up to this many entries; beyond, one pair per respondent. */
const DENSE_PAIRS = 1 << 22;

/** A calibrated weight's cells on an open dataset: each respondent's cell (in kernel memory) and the model. */
interface Prepared {
  cellColumn: { ptr: number; bytes: number };
  model: CalibrationModel;
  pairs: PsuCellWeights;
}

/**
 * Per-PSU sums of a table under a weight calibrated by `crosstab weight` (its metadata
 * holds the calibration): the residuals of R's calibrated design (weighting/calibration-variance.ts),
 * from the plain per-PSU sums and one more table pass per cell of the target variables.
 */
export class CalibratedDesign {
  private readonly prepared = new Map<string, Prepared>();

  constructor(
    private readonly data: LoadedDataset,
    private readonly kernel: Kernel,
  ) {}

  /** The calibration of weight `name`, if it has one. */
  calibrationOf(name: string | null): StoredCalibration | undefined {
    return name === null ? undefined : this.data.meta.weights.find((weight) => weight.name === name)?.calibration;
  }

  async residualSums(weight: string, input: TableInput, psuOf: Uint32Array, plain: PsuSums): Promise<PsuSums> {
    const calibration = this.calibrationOf(weight)!;
    const prepared = this.prepare(weight, calibration, psuOf, plain.clusters);
    // Per cell of the targets: Σ base weight (regression) or respondents (raking: those with a
    // base weight above 0, the only ones the raking took part of) of every slot.
    // Unit base weights (null) are all above 0: the respondents are the ones weights' sums.
    const weights = calibration.kind === 'regression' || calibration.baseWeight === null ? input.evaluator.weights(calibration.baseWeight) : input.evaluator.positiveWeights(calibration.baseWeight);
    const cellTable = await computeTableWithPsuSums({ ...input, weights }, { ptr: prepared.cellColumn.ptr, clusters: prepared.model.cells });
    return calibratedPsuSums(plain, cellTable.clusterSums, prepared.pairs, prepared.model);
  }

  dispose(): void {
    for (const { cellColumn } of this.prepared.values()) this.kernel.memory.release(cellColumn.ptr, cellColumn.bytes);
    this.prepared.clear();
  }

  private prepare(name: string, calibration: StoredCalibration, psuOf: Uint32Array, clusters: number): Prepared {
    const cached = this.prepared.get(name);
    if (cached) return cached;
    const { meta } = this.data;
    const n = meta.respondents;
    const variables = calibration.variables.map((variable) => meta.variables.find((candidate) => candidate.name === variable));
    if (variables.some((variable) => variable === undefined) || (calibration.baseWeight !== null && !meta.weights.some((weight) => weight.name === calibration.baseWeight))) {
      throw new CrosstabError(ErrorCode.corruptDataset, `${this.data.path}: the calibration of weight ${name} names variables or a base weight the dataset does not have`, {
        file: this.data.path,
        hint: 'Weight the source dataset again with crosstab weight.',
      });
    }
    const radix = variables.map((variable) => variable!.values.length + 1);
    const keyOf = (ranks: ArrayLike<number>) => {
      let key = 0;
      for (let v = 0; v < radix.length; v++) key = key * radix[v]! + ranks[v]!;
      return key;
    };
    const cellOfKey = new Map(calibration.cells.map((ranks, cell) => [keyOf(ranks), cell]));
    const columns = variables.map((variable) => rankColumn(this.data, this.kernel, variable!));
    const base = calibration.baseWeight === null ? new Float64Array(n).fill(1) : weightColumn(this.data, this.kernel, calibration.baseWeight);
    const final = weightColumn(this.data, this.kernel, name);
    const cells = calibration.cells.length;
    const cellOf = new Uint32Array(n);
    const ranks = new Array<number>(radix.length);
    const respondents = new Float64Array(cells);
    const baseTotals = new Float64Array(cells);
    for (let r = 0; r < n; r++) {
      for (let v = 0; v < radix.length; v++) ranks[v] = columns[v]![r]!;
      const cell = cellOfKey.get(keyOf(ranks));
      if (cell === undefined) {
        throw new CrosstabError(ErrorCode.corruptDataset, `${this.data.path}: respondent ${r + 1} is in no cell of the calibration of weight ${name}`, {
          file: this.data.path,
          hint: 'Weight the source dataset again with crosstab weight.',
        });
      }
      cellOf[r] = cell;
      // A respondent with base weight 0 is not one of the raking's (R gives NaN with one; without it, these figures).
      if (base[r]! > 0) respondents[cell]!++;
      baseTotals[cell]! += base[r]!;
    }
    // Residuals subtract per (PSU, cell): final weights (regression) or base weights (raking).
    const pairWeight = calibration.kind === 'regression' ? final : base;
    let pairs: PsuCellWeights;
    if (clusters * cells <= DENSE_PAIRS) {
      const dense = new Float64Array(clusters * cells);
      for (let r = 0; r < n; r++) dense[psuOf[r]! * cells + cellOf[r]!]! += pairWeight[r]!;
      const at: number[] = [];
      dense.forEach((value, index) => value !== 0 && at.push(index));
      pairs = {
        psu: Int32Array.from(at, (index) => Math.floor(index / cells)),
        cell: Int32Array.from(at, (index) => index % cells),
        weight: Float64Array.from(at, (index) => dense[index]!),
      };
    } else {
      pairs = { psu: Int32Array.from(psuOf), cell: Int32Array.from(cellOf), weight: pairWeight };
    }
    const bytes = this.data.words * 64 * 4;
    const ptr = this.kernel.memory.alloc(bytes);
    const column = new Uint32Array(this.kernel.memory.memory.buffer, ptr, this.data.words * 64);
    column.fill(0);
    column.set(cellOf);
    const model: CalibrationModel = {
      kind: calibration.kind,
      cells,
      margins: calibration.margins,
      ...(calibration.steps ? { steps: calibration.steps } : {}),
      cellTotals: calibration.kind === 'raking' ? respondents : baseTotals,
    };
    const prepared = { cellColumn: { ptr, bytes }, model, pairs };
    this.prepared.set(name, prepared);
    return prepared;
  }
}
