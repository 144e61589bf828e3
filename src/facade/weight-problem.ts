import type { CellProblem } from '../weighting/index.js';
import type { FineCells } from './weight-cells.js';
import { BLANK_KEY, type MarginTargets, type TargetSet, type TargetsReader } from './weight-targets.js';
import { formatNumberUpTo } from '../text/number-text.js';

/** One target set's weighting problem over its own cells, and how its cells map back. */
export interface GroupProblem {
  set: TargetSet;
  /** The group's value rank (0 without groups). */
  group: number;
  problem: CellProblem;
  /** Per fine cell of this group: its cell in `problem`; -1 for fine cells of other groups. */
  cellOfFine: Int32Array;
  /** Per margin: its target cells kept (a zero target without respondents is dropped). */
  kept: Array<MarginTargets['cells']>;
  respondents: number;
  baseTotal: number;
}

function valueName(rank: number, variable: { values: string[] }): string {
  return rank === 0 ? BLANK_KEY : variable.values[rank - 1]!;
}

/**
 * The weighting problem of target set `set` over the fine cells of its group: cells are
 * the distinct combinations of the set's variables among the group's respondents (so a
 * convergence test over "every cell" is over the set's own cross-table, as R's is), and
 * every margin's categories are checked against the data: a category that respondents have
 * but the targets lack, or a target (above 0) that no respondent has, is refused, naming them.
 */
export function groupProblem(reader: TargetsReader, fine: FineCells, group: number, set: TargetSet, grouped: boolean): GroupProblem {
  const varIndex = (name: string) => fine.variables.findIndex((variable) => variable.name === name);
  const setVariables = [...new Set(set.margins.flatMap((margin) => margin.variables.map((v) => v.name)))].map(varIndex);
  const cellOfFine = new Int32Array(fine.base.length).fill(-1);
  const keyToCell = new Map<string, number>();
  const base: number[] = [];
  const cellRespondents: number[] = [];
  const cellRanks: number[][] = [];
  let respondents = 0;
  let baseTotal = 0;
  for (let f = 0; f < fine.base.length; f++) {
    if (grouped && fine.ranks[0]![f] !== group) continue;
    const ranks = setVariables.map((v) => fine.ranks[v]![f]!);
    const key = ranks.join(',');
    let cell = keyToCell.get(key);
    if (cell === undefined) {
      cell = base.length;
      keyToCell.set(key, cell);
      base.push(0);
      cellRespondents.push(0);
      cellRanks.push(ranks);
    }
    cellOfFine[f] = cell;
    base[cell]! += fine.base[f]!;
    cellRespondents[cell]! += fine.respondents[f]!;
    respondents += fine.respondents[f]!;
    baseTotal += fine.base[f]!;
  }
  const kept: GroupProblem['kept'] = [];
  const margins = set.margins.map((margin) => {
    const positions = margin.variables.map((variable) => setVariables.indexOf(varIndex(variable.name)));
    const keyOf = (ranks: number[]) => ranks.join(',');
    const targetIndex = new Map(margin.cells.map((cell, i) => [keyOf(cell.ranks), i]));
    const category = new Int32Array(base.length);
    const reached = new Float64Array(margin.cells.length);
    const reachedWeight = new Float64Array(margin.cells.length);
    const missing = new Map<string, number>();
    for (let cell = 0; cell < base.length; cell++) {
      const ranks = positions.map((p) => cellRanks[cell]![p]!);
      const index = targetIndex.get(keyOf(ranks));
      if (index === undefined) {
        const name = ranks.map((rank, j) => valueName(rank, margin.variables[j]!)).join(' x ');
        missing.set(name, (missing.get(name) ?? 0) + cellRespondents[cell]!);
      } else {
        category[cell] = index;
        reached[index]! += cellRespondents[cell]!;
        reachedWeight[index]! += base[cell]!;
      }
    }
    const where = margin.variables.map((v) => v.name).join(' x ');
    if (missing.size > 0) {
      const listed = [...missing].map(([name, n]) => `${name} (${n} respondents)`).join(', ');
      throw reader.error(`${margin.path}.${margin.kind}`, `has no target for ${listed}, which ${missing.size === 1 ? 'is' : 'are'} in the data of ${where}${grouped ? ` in group ${set.path}` : ''}`, `Add a target for every category of the data (write "${BLANK_KEY}" for blanks), or merge the category into another before weighting.`);
    }
    const empty = margin.cells.filter((cell, i) => reached[i] === 0 && cell.value > 0);
    if (empty.length > 0) {
      throw reader.error(empty[0]!.path, `is a target above 0 that no respondent${grouped ? ' of this group' : ''} has (${empty.map((cell) => cell.path).join(', ')})`, 'A target without respondents cannot be reached: set it to 0 or merge the category into another before weighting.');
    }
    const weightless = margin.cells.filter((cell, i) => reached[i]! > 0 && reachedWeight[i] === 0 && cell.value > 0);
    if (weightless.length > 0) {
      throw reader.error(weightless[0]!.path, 'is a target for respondents whose base weights are all 0', 'Weighting scales base weights, so a category weighing 0 cannot reach a target: merge it into another, or start from a base weight (baseWeight) that gives them weight.');
    }
    const zero = margin.cells.filter((cell, i) => reached[i]! > 0 && cell.value === 0);
    if (zero.length > 0) {
      throw reader.error(zero[0]!.path, 'is a target of 0 for a category with respondents', 'As R\'s postStratify() does, a category in the sample needs a target above 0: give its population, or drop its respondents before weighting.');
    }
    // Zero targets without respondents play no part (R drops them).
    const keep = margin.cells.map((_, i) => reached[i]! > 0);
    const newIndex = new Int32Array(margin.cells.length).fill(-1);
    let next = 0;
    keep.forEach((k, i) => (newIndex[i] = k ? next++ : -1));
    for (let cell = 0; cell < base.length; cell++) category[cell] = newIndex[category[cell]!]!;
    const cells = margin.cells.filter((_, i) => keep[i]);
    kept.push(cells);
    // Categories in the dataset's value order: R's factor levels, whose first is calibration's reference.
    return { category, cells };
  });
  const problem: CellProblem = {
    base: Float64Array.from(base),
    margins: margins.map(({ category, cells }, m) => {
      const scale = set.margins[m]!.kind === 'proportions' ? (set.total ?? baseTotal) : 1;
      return { category, targets: Float64Array.from(cells, (cell) => cell.value * scale) };
    }),
  };
  checkMarginTotals(reader, set, problem);
  return { set, group, problem, cellOfFine, kept, respondents, baseTotal };
}

/** Margins summing to different population totals cannot all be met: a rake would settle missing one of them, a calibration would take the first margin's total. */
function checkMarginTotals(reader: TargetsReader, set: TargetSet, problem: CellProblem): void {
  const sums = problem.margins.map((margin) => margin.targets.reduce((sum, target) => sum + target, 0));
  const first = sums[0]!;
  const at = sums.findIndex((sum) => Math.abs(sum - first) > TOTAL_TOLERANCE * Math.max(Math.abs(first), Math.abs(sum)));
  if (at < 0) return;
  const described = (m: number) => {
    const margin = set.margins[m]!;
    const scaled = margin.kind === 'proportions' ? (set.total !== undefined ? ' (its proportions of "total")' : ' (its proportions of the base weights\' total)') : '';
    return `${margin.path}.${margin.kind} sums to ${formatNumberUpTo(sums[m]!, 6)}${scaled}`;
  };
  throw reader.error(set.margins[at]!.path, `${described(at)}, but ${described(0)}: margins with different totals cannot all be met`, 'Make every margin sum to the same population total: give "totals" that add up to "total", or give "proportions" and one "total".');
}

/** Relative difference allowed between the totals of a target set's margins (as between proportions and 1). */
const TOTAL_TOLERANCE = 1e-6;
