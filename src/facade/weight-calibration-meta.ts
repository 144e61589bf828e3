import type { StoredCalibration } from '../dataset/format.js';
import type { CellSolution } from '../weighting/index.js';
import type { FineCells } from './weight-cells.js';
import type { WeightMethod } from './weight-options.js';
import type { GroupProblem } from './weight-problem.js';

/**
 * What a calibrated weight's variance needs, stored with the weight: per cell of the target
 * variables (the fine cells of one target set) its values, its category in every margin,
 * and for raking the factors after each margin in the last pass (R's rake() keeps them in
 * the design and its linearization backfits over the margins with them).
 */
export function calibrationMeta(method: WeightMethod, baseWeight: string | null, fine: FineCells, group: GroupProblem, solution: CellSolution): StoredCalibration {
  const cells = fine.base.length;
  const cellOf = (f: number) => group.cellOfFine[f]!;
  const meta: StoredCalibration = {
    kind: method === 'rake' ? 'raking' : 'regression',
    baseWeight,
    variables: fine.variables.map((variable) => variable.name),
    cells: Array.from({ length: cells }, (_, f) => fine.ranks.map((ranks) => ranks[f]!)),
    margins: group.problem.margins.map((margin) => ({
      categories: margin.targets.length,
      category: Array.from({ length: cells }, (_, f) => margin.category[cellOf(f)]!),
    })),
  };
  if (method === 'rake') meta.steps = solution.steps!.map((step) => Array.from({ length: cells }, (_, f) => step[cellOf(f)]!));
  return meta;
}
