import type { StoredVariable } from '../dataset/format.js';
import type { CellSolution, WeightSpread } from '../weighting/index.js';
import type { WeightSums } from './weight-cells.js';
import type { GroupProblem } from './weight-problem.js';
import type { WeightSettings } from './weight-options.js';
import { BLANK_KEY } from './weight-targets.js';

/** What weightDataset() did: the fit per target set, the weights' spread, and per target variable. */
export interface WeightReport {
  name: string;
  method: WeightSettings['method'];
  /** The weight the fit started from; null: unit weights. */
  baseWeight: string | null;
  /** The file written: the dataset's weights file (`written: 'weights-file'`), or the new dataset file `out`. */
  out: string;
  /** `weights-file`: the new weight went to the dataset's weights file; `dataset`: a whole new dataset file was written to `out`. */
  written: 'weights-file' | 'dataset';
  /** Bytes of the file written. */
  bytes: number;
  respondents: number;
  epsilon: number;
  maxIterations: number;
  bounds?: [number, number];
  trim?: [number, number];
  /** Weights moved to a trim bound. */
  trimmed: number;
  /** One per target set (one per group with groupBy). */
  sets: Array<{
    /** The group's value, with groupBy. */
    group?: string;
    respondents: number;
    iterations: number;
    converged: boolean;
    margins: Array<{
      variables: string[];
      /** Largest |weighted total - target| over the margin's categories (after trimming). */
      maxDeviation: number;
      /** The same relative to the target. */
      maxRelativeDeviation: number;
      categories: Array<{ category: string[]; target: number; weighted: number; deviation: number }>;
    }>;
  }>;
  /** The new weights: min, max, ratio, Kish design effect and efficiency. */
  weights: WeightSpread;
  /** The same for the base weights, for comparison. */
  baseWeights: WeightSpread;
  /** Per target variable and value: respondents, base and new weighted totals, the new weights' mean, min and max. */
  variables: Array<{
    variable: string;
    values: Array<{ value: string; label?: string; respondents: number; base: number; weighted: number; mean: number; min: number; max: number }>;
  }>;
}

interface ReportParts {
  settings: WeightSettings;
  baseWeight: string | null;
  problems: GroupProblem[];
  solutions: CellSolution[];
  variables: StoredVariable[];
  /** Per target variable and value, and over everyone: the base weights' sums and the new weights'. */
  base: WeightSums;
  weights: WeightSums;
  /** Per fine cell, the new weights summed in respondent order. */
  fineTotals: Float64Array;
  trimmed: number;
  groupBy: StoredVariable | undefined;
}

const valueText = (variable: StoredVariable, rank: number) => (rank === 0 ? BLANK_KEY : variable.values[rank - 1]!);

export function weightReport(parts: ReportParts): WeightReport {
  const { settings, problems, solutions, variables, weights } = parts;
  // The new weights summed per fine cell, in f64: every target's achieved total comes from them.
  const finalOfFine = parts.fineTotals;
  const sets = problems.map((group, i) => {
    const cellTotals = new Float64Array(group.problem.base.length);
    group.cellOfFine.forEach((cell, f) => {
      if (cell >= 0) cellTotals[cell]! += finalOfFine[f]!;
    });
    const margins = group.problem.margins.map((margin, m) => {
      const achieved = new Float64Array(margin.targets.length);
      for (let cell = 0; cell < cellTotals.length; cell++) achieved[margin.category[cell]!]! += cellTotals[cell]!;
      const stored = group.set.margins[m]!;
      const categories = group.kept[m]!.map((cell, k) => ({
        category: cell.ranks.map((rank, j) => valueText(stored.variables[j]!, rank)),
        target: margin.targets[k]!,
        weighted: achieved[k]!,
        deviation: achieved[k]! - margin.targets[k]!,
      }));
      return {
        variables: stored.variables.map((variable) => variable.name),
        maxDeviation: Math.max(...categories.map((c) => Math.abs(c.deviation))),
        maxRelativeDeviation: Math.max(...categories.map((c) => Math.abs(c.deviation) / c.target)),
        categories,
      };
    });
    return {
      ...(parts.groupBy === undefined ? {} : { group: valueText(parts.groupBy, group.group) }),
      respondents: group.respondents,
      iterations: solutions[i]!.iterations,
      converged: solutions[i]!.converged,
      margins,
    };
  });
  const summaries = variables.map((variable, v) => {
    const size = variable.values.length + 1;
    const { respondents, sum: baseSum } = parts.base.variables[v]!;
    const { sum: weighted, min, max } = weights.variables[v]!;
    const values = [];
    for (let rank = 1; rank <= size; rank++) {
      const at = rank % size; // blanks (rank 0) last
      if (respondents[at] === 0) continue;
      const label = at === 0 ? undefined : variable.valueLabels?.[variable.values[at - 1]!];
      values.push({
        value: valueText(variable, at),
        ...(label === undefined ? {} : { label }),
        respondents: respondents[at]!,
        base: baseSum[at]!,
        weighted: weighted[at]!,
        mean: weighted[at]! / respondents[at]!,
        min: min[at]!,
        max: max[at]!,
      });
    }
    return { variable: variable.name, values };
  });
  return {
    name: settings.name,
    method: settings.method,
    baseWeight: parts.baseWeight,
    out: settings.out ?? '',
    written: settings.out === undefined ? 'weights-file' : 'dataset',
    bytes: 0,
    respondents: weights.spread.respondents,
    epsilon: settings.epsilon,
    maxIterations: settings.maxIterations,
    ...(Number.isFinite(settings.bounds.lower) ? { bounds: [settings.bounds.lower, settings.bounds.upper] as [number, number] } : {}),
    ...(settings.trim === undefined ? {} : { trim: settings.trim }),
    trimmed: parts.trimmed,
    sets,
    weights: weights.spread,
    baseWeights: parts.base.spread,
    variables: summaries,
  };
}
