import { readFile, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CrosstabError, ErrorCode } from '../errors.js';
import { writeWeightsFile, writeWithWeight } from '../dataset/file/add-weight.js';
import type { StoredVariable, StoredWeighting } from '../dataset/format.js';
import { loadDataset } from '../dataset/file/reader.js';
import { rankColumn, weightColumn } from '../dataset/file/respondent-columns.js';
import { mainThreadKernel } from '../kernel/kernel.js';
import { appendTrace } from '../build/append-trace.js';
import { calibrate, type CellSolution, postStratify, rake } from '../weighting/index.js';
import { calibrationMeta } from './weight-calibration-meta.js';
import { RespondentWalk } from './weight-cells.js';
import { invalidOption } from './options.js';
import { type GroupProblem, groupProblem } from './weight-problem.js';
import { checkWeightOptions, type WeightOptions } from './weight-options.js';
import { type WeightReport, weightReport } from './weight-report.js';
import { BLANK_KEY, TargetsReader } from './weight-targets.js';
import { firstWeightOutOfRange, weightRangeProblem } from '../dataset/weight-range.js';

export type { WeightMethod, WeightOptions } from './weight-options.js';
export type { WeightReport } from './weight-report.js';

/**
 * Weights a compiled dataset to population targets (docs/weighting.md). Methods: `rake` (R's
 * survey::rake()), `poststratify` (R's postStratify()), `linear` and `logit` (R's calibrate()
 * with those calibration functions). The new weight goes to the dataset's weights file (its
 * path plus `.weights`, opened with it by openDataset()), or with `out` into a whole new copy
 * of the dataset. Either file is written to a temporary name and renamed: nothing is left
 * half-written. Rejects with CrosstabError for invalid options,
 * targets that do not fit the data, or a fit that did not converge (nothing is written).
 */
export async function weightDataset(path: string, options: WeightOptions): Promise<WeightReport> {
  const settings = checkWeightOptions(options);
  const trace = appendTrace(process.env, 'weightDataset');
  trace?.mark('start');
  const kernel = mainThreadKernel();
  const dataset = await loadDataset(path, kernel);
  trace?.mark('open');
  // Kernel memory of this weighting (unit base weights, the walks' tables and sums), given back at the end.
  let unitWeights: { ptr: number; bytes: number } | undefined;
  let walk: RespondentWalk | undefined;
  try {
    const { meta } = dataset;
    if (meta.weights.some((weight) => weight.name === settings.name)) {
      throw invalidOption('name', `"${settings.name}" is already a weight of ${path}`, `Choose another name; the dataset's weights are ${meta.weights.map((w) => w.name).join(', ')}.`);
    }
    // null: unit weights (every respondent 1).
    const baseWeight = settings.baseWeight === undefined ? meta.weights[0]!.name : settings.baseWeight;
    if (baseWeight !== null && !meta.weights.some((weight) => weight.name === baseWeight)) {
      throw invalidOption('baseWeight', `"${baseWeight}" is not a weight of ${path}`, `Choose one of ${meta.weights.map((w) => w.name).join(', ')}.`);
    }
    const file = typeof settings.targets === 'string' ? settings.targets : 'targets';
    let text: string;
    try {
      text = typeof settings.targets === 'string' ? await readFile(settings.targets, 'utf8') : JSON.stringify(settings.targets);
    } catch (error) {
      throw new CrosstabError(ErrorCode.fileNotFound, `${file}: cannot read the targets (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, { file, field: 'targets', hint: 'Pass the path of a targets JSON file (docs/weighting.md).' });
    }
    const reader = new TargetsReader(file, meta.variables);
    const targets = reader.parse(text);
    trace?.mark('targets');
    const used = new Map<string, StoredVariable>();
    if (targets.groupBy) used.set(targets.groupBy.name, targets.groupBy);
    for (const set of targets.sets.values()) for (const margin of set.margins) for (const variable of margin.variables) used.set(variable.name, variable);
    const variables = [...used.values()];
    // Views of kernel memory, not copies (memory per respondent: the base weight, one byte or
    // more per target variable; the new weights are made where the base weights were), which
    // the kernel's walks read in place. Every buffer is read (and checked) first; the memory
    // is shared, so these views stay valid when the walks allocate kernel memory.
    const stored = baseWeight === null ? undefined : weightColumn(dataset, kernel, baseWeight, false);
    const columns = variables.map((variable) => rankColumn(dataset, kernel, variable, false));
    if (stored === undefined) {
      const bytes = dataset.words * 64 * 8;
      unitWeights = { ptr: kernel.memory.alloc(bytes), bytes };
    }
    const base = kernel.memory.f64(stored?.byteOffset ?? unitWeights!.ptr, dataset.words * 64);
    if (stored === undefined) base.fill(1, 0, meta.respondents);
    // The respondents' base weights, then (scaled in place below) their new weights.
    const weights = base.subarray(0, meta.respondents);
    trace?.mark('read columns', `${variables.length} variables${baseWeight === null ? '' : ' and the base weight'}`);
    walk = new RespondentWalk(kernel, variables, columns, weights);
    // The fine cells and, in the same walk, what the report needs of the base weights.
    const { fine, base: baseSums } = walk.fineCells();
    trace?.mark('fine cells', `${fine.base.length} cells`);

    const groups = targets.groupBy === undefined ? [0] : [...new Set(fine.ranks[0]!)].sort((a, b) => a - b);
    const unmatched = groups.filter((group) => !targets.sets.has(group));
    if (unmatched.length > 0) {
      const names = unmatched.map((rank) => (rank === 0 ? BLANK_KEY : targets.groupBy!.values[rank - 1]!));
      throw reader.error('$.groups', `has no target set for ${names.map((name) => `"${name}"`).join(', ')}, which respondents have in ${targets.groupBy!.name}`, 'Give a target set for every group in the data (write "NA" for blanks).');
    }
    for (const [rank, set] of targets.sets) {
      if (!groups.includes(rank)) throw reader.error(set.path, `is a group no respondent is in`, 'Remove this group, or check the value against `crosstab info`.');
    }
    const problems = groups.map((group) => groupProblem(reader, fine, group, targets.sets.get(group)!, targets.groupBy !== undefined));
    const solutions = problems.map((problem) => solve(problem, settings, reader));
    trace?.mark(settings.method, solutions.map((solution) => `${solution.iterations} iterations`).join(', '));

    const factorOfFine = new Float64Array(fine.base.length);
    problems.forEach((problem, i) => {
      const factor = solutions[i]!.factor;
      problem.cellOfFine.forEach((cell, f) => {
        if (cell >= 0) factorOfFine[f] = factor[cell]!;
      });
    });
    // The new weights in the base weights' place (padded with zeros to whole bitset words, as
    // the file stores them): the base weight's buffer in kernel memory is this weighting's own
    // copy (the writers copy buffers from the files), and a fresh array of millions of weights
    // would cost a page fault per 4 KiB. In the same walk, per fine cell the new weights'
    // total (of the trimmed weights when any was trimmed) and what the report needs of them.
    const { fineTotals, trimmed, sums: newSums } = walk.newWeights(factorOfFine, settings.trim);
    base.fill(0, meta.respondents);
    trace?.mark('new weights');
    const report = weightReport({ settings, baseWeight, problems, solutions, variables, base: baseSums, weights: newSums, fineTotals, trimmed, groupBy: targets.groupBy });
    trace?.mark('report');
    if (!Number.isFinite(report.weights.sum) || report.weights.min < 0) {
      throw new CrosstabError(ErrorCode.invalidInput, `the ${settings.method} weights include ${report.weights.min < 0 ? 'negative' : 'non-finite'} values (min ${report.weights.min})`, {
        field: 'method',
        hint: settings.method === 'linear' ? 'Linear calibration can give negative weights: bound them (bounds: [0.2, 5]) or use logit or rake.' : 'Check the targets for extreme ratios to the sample.',
      });
    }
    const outside = firstWeightOutOfRange(weights);
    if (outside >= 0) {
      throw new CrosstabError(ErrorCode.invalidInput, `the ${settings.method} weights include ${weightRangeProblem(weights[outside]!)}; nothing was written`, {
        field: 'targets',
        hint: 'Check the targets for extreme ratios to the sample (totals in other units than the base weight?), or bound the new weights with `trim`.',
        hintOptions: ['trim'],
      });
    }
    // The calibrated design's variance needs the cells and margins (one target set, untrimmed weights).
    const calibration = targets.groupBy === undefined && settings.trim === undefined ? calibrationMeta(settings.method, baseWeight, fine, problems[0]!, solutions[0]!) : undefined;
    // Every weight made here says how (by groups and trimmed ones too): an append refuses or drops it.
    const weighting: StoredWeighting = { method: settings.method, baseWeight, ...(targets.groupBy === undefined ? {} : { groupBy: targets.groupBy.name }), ...(settings.trim === undefined ? {} : { trim: [settings.trim[0], settings.trim[1]] }) };
    if (settings.out === undefined) {
      const written = await writeWeightsFile(dataset, kernel, settings.name, base, calibration, weighting);
      trace?.mark('write weights file', `${written.bytes} bytes`);
      trace?.done();
      return { ...report, out: written.path, written: 'weights-file', bytes: written.bytes };
    }
    const written = await writeWithWeight(dataset, kernel, settings.name, base, settings.out, {}, calibration, weighting);
    trace?.mark('write dataset', `${written.bytes} bytes`);
    // The dataset replaced by a file holding its weights file's weights: that file is now of another build, and not needed.
    if (dataset.weightsFile !== undefined && resolve(settings.out) === resolve(path)) await rm(dataset.weightsFile.path, { force: true });
    trace?.done();
    return { ...report, out: settings.out, written: 'dataset', bytes: written.bytes };
  } finally {
    walk?.release();
    if (unitWeights !== undefined) kernel.memory.release(unitWeights.ptr, unitWeights.bytes);
    dataset.close();
    for (const region of dataset.regions) kernel.memory.release(region.ptr, region.bytes);
  }
}

function solve(group: GroupProblem, settings: ReturnType<typeof checkWeightOptions>, reader: TargetsReader): CellSolution {
  const { problem, set } = group;
  let solution: CellSolution;
  if (settings.method === 'poststratify') {
    if (problem.margins.length !== 1) {
      throw reader.error(`${set.path}.margins`, `has ${problem.margins.length} margins; post-stratification takes one`, 'Give one margin (use "variables" for interlocked cells), or use --method rake for several margins.');
    }
    solution = postStratify(problem);
  } else if (settings.method === 'rake') {
    solution = rake(problem, { epsilon: settings.epsilon, maxIterations: settings.maxIterations });
  } else {
    solution = calibrate(problem, { calfun: settings.method, bounds: settings.bounds, epsilon: settings.epsilon, maxIterations: settings.maxIterations });
  }
  if (!solution.converged) {
    throw new CrosstabError(ErrorCode.invalidInput, `${settings.method} did not converge for the targets at ${set.path} in ${solution.iterations} iterations (epsilon ${settings.epsilon}); nothing was written`, {
      field: 'maxIterations',
      hint: 'Raise `maxIterations` or `epsilon`, widen the bounds, or check that the margins agree on the population total.',
      hintOptions: ['maxIterations', 'epsilon'],
    });
  }
  return solution;
}
