import type { Bounds } from '../weighting/index.js';
import { describeValue, invalidOption as invalid, requireObject } from './options.js';

export type WeightMethod = 'rake' | 'poststratify' | 'linear' | 'logit';
export const WEIGHT_METHODS: readonly WeightMethod[] = ['rake', 'poststratify', 'linear', 'logit'];

/** Options of weightDataset(). */
export interface WeightOptions {
  /** Path of a targets JSON file, or the targets object itself (docs/weighting.md). */
  targets: string | Record<string, unknown>;
  method: WeightMethod;
  /** Name of the new weight (not one the dataset has). */
  name: string;
  /**
   * Where a whole new dataset file goes, the input with the new weight added (may be the input
   * path: it is replaced whole, atomically). Left out: the new weight goes to the dataset's
   * weights file (its path plus `.weights`), which openDataset() opens with it; the dataset
   * file is not rewritten.
   */
  out?: string;
  /** Bounds on new weight / base weight, for linear and logit calibration (logit needs them): [lower, upper]. */
  bounds?: [number, number];
  /** Trim the new weights to [lower, upper] (absolute weights), as R's trimWeights(). */
  trim?: [number, number];
  /**
   * The weight to start from; default the dataset's first weight. `null`: unit weights (every
   * respondent 1), as R's svydesign() without weights and most panel and RIM weighting start.
   */
  baseWeight?: string | null;
  /** Most iterations: default 10 for rake, 50 for calibration (R's defaults). */
  maxIterations?: number;
  /** Convergence threshold, as R's: rake default 1 (below 1, a fraction of the total weight); calibration default 1e-7. */
  epsilon?: number;
}

const KEYS = ['targets', 'method', 'name', 'out', 'bounds', 'trim', 'baseWeight', 'maxIterations', 'epsilon'] as const satisfies ReadonlyArray<keyof WeightOptions>;

function pair(value: unknown, option: string): [number, number] {
  if (!Array.isArray(value) || value.length !== 2 || !value.every((x) => typeof x === 'number' && !Number.isNaN(x)) || !(value[0] < value[1])) {
    throw invalid(option, `must be two numbers [lower, upper] with lower < upper; got ${describeValue(value)}`, `Write ${option} as LO,HI, e.g. 0.5,3.`);
  }
  return [value[0], value[1]];
}

/** The options checked, with defaults filled in. */
export function checkWeightOptions(options: WeightOptions) {
  const given = requireObject(options, 'options', KEYS) as unknown as WeightOptions;
  if (typeof given.targets !== 'string' && (typeof given.targets !== 'object' || given.targets === null || Array.isArray(given.targets))) {
    throw invalid('targets', 'must be the path of a targets JSON file or a targets object', 'See docs/weighting.md for the targets format.');
  }
  if (!WEIGHT_METHODS.includes(given.method)) throw invalid('method', `must be one of ${WEIGHT_METHODS.join(', ')}; got ${describeValue(given.method)}`, 'rake for several margins, poststratify for one (or interlocked cells), linear or logit for calibration.');
  if (typeof given.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.]*$/.test(given.name)) {
    throw invalid('name', `must be a weight name of letters, digits, '_' and '.' (starting with a letter or '_'); got ${describeValue(given.name)}`, 'For example wt_rake.');
  }
  if (given.out !== undefined && (typeof given.out !== 'string' || given.out === '')) throw invalid('out', 'must be the path of the dataset file to write', 'For example weighted.arrow, or leave it out to write the weight to the dataset\'s weights file.');
  const method = given.method;
  const calibration = method === 'linear' || method === 'logit';
  let bounds: Bounds = { lower: -Infinity, upper: Infinity };
  if (given.bounds !== undefined) {
    if (!calibration) throw invalid('bounds', `applies to linear and logit calibration, not ${method}`, 'Leave bounds out, or use trim to limit the weights after raking.');
    const [lower, upper] = pair(given.bounds, 'bounds');
    if (!(lower < 1 && upper > 1)) throw invalid('bounds', `must have lower < 1 < upper (they bound new weight / base weight); got ${lower},${upper}`, 'For example 0.5,3.');
    bounds = { lower, upper };
  }
  if (method === 'logit' && !(Number.isFinite(bounds.lower) && Number.isFinite(bounds.upper))) {
    throw invalid('bounds', 'must be given, finite, for logit calibration', 'For example --bounds 0.5,3 (new weight between half and three times the base weight).');
  }
  const trim = given.trim === undefined ? undefined : pair(given.trim, 'trim');
  if (given.baseWeight !== undefined && given.baseWeight !== null && typeof given.baseWeight !== 'string') {
    throw invalid('baseWeight', `must be the name of a weight of the dataset, or null for unit weights; got ${describeValue(given.baseWeight)}`, 'Leave it out to start from the first weight.');
  }
  const maxIterations = given.maxIterations ?? (method === 'rake' ? 10 : 50);
  if (!Number.isInteger(maxIterations) || maxIterations < 1) throw invalid('maxIterations', `must be a whole number >= 1; got ${describeValue(given.maxIterations)}`, 'Leave it out for R\'s default.');
  const epsilon = given.epsilon ?? (method === 'rake' ? 1 : 1e-7);
  if (typeof epsilon !== 'number' || !(epsilon > 0) || !Number.isFinite(epsilon)) throw invalid('epsilon', `must be a number > 0; got ${describeValue(given.epsilon)}`, 'Leave it out for R\'s default.');
  return { targets: given.targets, method, name: given.name, out: given.out, bounds, trim, baseWeight: given.baseWeight, maxIterations, epsilon };
}

export type WeightSettings = ReturnType<typeof checkWeightOptions>;
