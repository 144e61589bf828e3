/**
 * Complex survey designs declared at build time: strata, PSUs (clusters), a
 * finite population correction, and replicate weights, with the meanings of R's
 * `svydesign(ids = ~psu, strata = ~strata, fpc = ~fpc, nest = ...)` and
 * `svrepdesign(type = ..., scale, rscales, rho, mse)`.
 *
 * The design columns stay ordinary variables (queryable, with index columns); the dataset
 * stores only their names (`StoredDesign`). The cluster structure (which PSU each
 * respondent is in, which stratum each PSU is in, PSUs per stratum, the fpc factor) is
 * recomputed from the index columns when needed: at build time to validate, at open time
 * to run queries. Replicate weights are extra weight vectors.
 */
import { CrosstabError, ErrorCode } from '../../errors.js';
import { replicateRank } from '../../stats/replicate-rank.js';
import { REPLICATE_TYPES, type ReplicateType, type StoredDesign, type StoredMeta, type StoredVariable } from '../format.js';

export { REPLICATE_TYPES };
export type { ReplicateType, StoredDesign };


/** Design options of `buildDataset` / `crosstab build`. */
export interface DesignOptions {
  /** Stratum column (`--strata`). */
  strata?: string;
  /** PSU (cluster) column (`--psu`). */
  psu?: string;
  /** PSU values repeat across strata: a PSU is (stratum, PSU) (`--nest`). */
  nest?: boolean;
  /** Finite population correction (`--fpc`): PSUs in the stratum's population, or the sampling fraction (all values <= 1). */
  fpc?: string;
  /** Replicate-weight columns (`--replicate-weights`), full (combined) weights as R's `combined.weights = TRUE`. */
  replicateWeights?: string[];
  replicateType?: ReplicateType;
  /** Fay's rho (type Fay). */
  rho?: number;
  /** Overall multiplier of the replicate variance; default as `svrepdesign` for the type. */
  scale?: number;
  /** Per-replicate multipliers (required for JKn); default 1. */
  rscales?: number[];
  /** Centre replicate deviations on the full-sample estimate instead of the replicates' mean. */
  mse?: boolean;
  /**
   * Design degrees of freedom of the replicate design (Rao–Scott's denominator df) for
   * tables of every respondent; default R's `degf()`, the rank of the replicate weights − 1.
   * A base that leaves respondents out recomputes them from its rows, as R's `subset()`.
   */
  degf?: number;
}

/** Which PSU each respondent is in and how PSUs make up strata. */
export interface ClusterStructure {
  /** Per respondent, its PSU number 0..clusters-1 (PSUs ordered by stratum, then PSU value). */
  clusterOf: Uint32Array;
  clusters: number;
  /** Per PSU, its stratum number. */
  stratumOf: Int32Array;
  /** Per stratum: label, PSUs in the sample, and f = 1 - n/N (1 without fpc). */
  strata: Array<{ label: string; psus: number; fpcFactor: number }>;
}

/** Reads the 1-based ranks of a variable's index column (0 = blank). */
export type RankReader = (variable: StoredVariable) => ArrayLike<number>;

function designError(field: string, message: string, hint: string): CrosstabError {
  return new CrosstabError(ErrorCode.invalidOption, message, { field, hint });
}

/**
 * Validates the design options against the compiled variables and weights and returns the
 * metadata to store; throws `invalid_option` naming the column or option at fault.
 */
export function declareDesign(meta: StoredMeta, options: DesignOptions, ranks: RankReader, weightValues: (name: string) => Float64Array): StoredDesign | undefined {
  const design: StoredDesign = {};
  const taylor = options.strata !== undefined || options.psu !== undefined || options.fpc !== undefined;
  if (options.nest === true && !taylor) throw designError('nest', '--nest needs --psu', 'Give --strata COL --psu COL --nest.');
  if (taylor) {
    if (options.psu === undefined) {
      throw designError('psu', '--strata and --fpc need --psu COLUMN (the PSU / cluster column)', 'Give the PSU column, e.g. --strata SDMVSTRA --psu SDMVPSU --nest.');
    }
    design.psu = options.psu;
    if (options.strata !== undefined) design.strata = options.strata;
    if (options.nest === true) design.nest = true;
    if (options.fpc !== undefined) design.fpc = options.fpc;
    const structure = clusterStructure(meta, design, ranks); // validates
    design.strataCount = structure.strata.length;
    design.psuCount = structure.clusters;
  }
  const replicates = replicateDesign(meta, options, weightValues);
  if (replicates) {
    if (taylor) throw designError('replicateWeights', '--replicate-weights cannot be combined with --strata/--psu/--fpc', 'Declare either a Taylor design or a replicate design.');
    design.replicates = replicates;
  }
  return taylor || replicates ? design : undefined;
}

function replicateDesign(meta: StoredMeta, options: DesignOptions, weightValues: (name: string) => Float64Array): StoredDesign['replicates'] {
  checkReplicateOptions(options);
  const columns = options.replicateWeights;
  if (columns === undefined || columns.length === 0) return undefined;
  const type = options.replicateType!;
  const known = new Set(meta.weights.map((weight) => weight.name));
  for (const column of columns) {
    if (!known.has(column)) throw designError('replicateWeights', `replicate weight "${column}" is not a weight column of the dataset`, 'Check the column name.');
  }
  const { rscales, scale, rho } = replicateSettings(options, type, columns.length);
  const degf = options.degf ?? replicateRank(columns.map(weightValues), meta.respondents) - 1;
  if (!Number.isInteger(degf) || degf < 1) throw designError('degf', `--degf must be a positive whole number, not ${String(options.degf)}`, 'Give the design degrees of freedom, e.g. --degf 79.');
  const out: NonNullable<StoredDesign['replicates']> = { weights: [...columns], type, scale, rscales, mse: options.mse === true, degf, degfGiven: options.degf !== undefined };
  if (rho !== undefined) out.rho = rho;
  return out;
}

/**
 * The checks of a replicate declaration that need no data (the options replicates need,
 * --replicate-type, --rscales, --scale, --rho), as declareDesign makes them: a build makes
 * them before it reads its input, so an incomplete declaration is refused at once, not after
 * the whole file is read.
 */
export function checkReplicateOptions(options: DesignOptions): void {
  const columns = options.replicateWeights;
  const replicateOnly = options.replicateType ?? options.rho ?? options.scale ?? options.rscales ?? options.mse ?? options.degf;
  if (columns === undefined || columns.length === 0) {
    if (replicateOnly !== undefined) throw designError('replicateWeights', '--replicate-type, --rho, --scale, --rscales, --mse and --degf need --replicate-weights COL...', 'Name the replicate-weight columns.');
    return;
  }
  const type = options.replicateType;
  if (type === undefined || !(REPLICATE_TYPES as readonly string[]).includes(type)) {
    throw designError('replicateType', `--replicate-type must be one of ${REPLICATE_TYPES.join(', ')}, not ${String(type)}`, 'Give the type the replicate weights were made with.');
  }
  replicateSettings(options, type, columns.length);
}

/** The multipliers of `count` replicates of `type` from the options, or the option at fault. */
function replicateSettings(options: DesignOptions, type: NonNullable<DesignOptions['replicateType']>, count: number): { rscales: number[]; scale: number; rho: number | undefined } {
  let rscales = options.rscales ?? new Array<number>(count).fill(1);
  if (rscales.length === 1 && count > 1) rscales = new Array<number>(count).fill(rscales[0]!);
  if (rscales.length !== count || !rscales.every((value) => Number.isFinite(value) && value >= 0)) {
    throw designError('rscales', `--rscales needs ${count} non-negative numbers (one per replicate weight), got ${rscales.length}`, 'Give one value per replicate, or one for all.');
  }
  if (type === 'JKn' && options.rscales === undefined) {
    throw designError('rscales', '--replicate-type JKn needs --rscales: (n_h - 1) / n_h of each replicate\'s stratum', 'Give --rscales as R\'s svrepdesign needs them.');
  }
  if (options.scale !== undefined && !(Number.isFinite(options.scale) && options.scale > 0)) {
    throw designError('scale', `--scale must be a positive number, not ${String(options.scale)}`, 'Give e.g. --scale 0.05.');
  }
  let scale: number;
  let rho: number | undefined;
  if (type === 'Fay') {
    rho = options.rho;
    if (rho === undefined || !(rho >= 0 && rho < 1)) throw designError('rho', '--replicate-type Fay needs --rho R with 0 <= R < 1', 'Give the Fay coefficient, e.g. --rho 0.5.');
    scale = 1 / (count * (1 - rho) * (1 - rho));
  } else if (options.rho !== undefined) {
    throw designError('rho', `--rho is only for --replicate-type Fay, not ${type}`, 'Leave --rho out, or use type Fay.');
  } else if (type === 'BRR') {
    scale = 1 / count;
  } else if (type === 'SDR') {
    scale = 4 / count;
    rscales = new Array<number>(count).fill(1);
  } else if (type === 'bootstrap') {
    scale = options.scale ?? 1 / (count - 1);
  } else if (type === 'JK1') {
    scale = options.scale ?? (count - 1) / count;
  } else {
    scale = options.scale ?? 1;
  }
  return { rscales, scale, rho };
}

/**
 * The PSUs of a Taylor design, from the index columns of its strata, PSU and fpc
 * variables. Throws `invalid_option` naming the column when a design column is blank,
 * skipped or missing, when PSUs are not nested in strata without `nest`, or when the fpc
 * is not constant within a stratum or smaller than the stratum's PSU count.
 */
export function clusterStructure(meta: StoredMeta, design: StoredDesign, ranks: RankReader): ClusterStructure {
  const n = meta.respondents;
  const variableOf = (column: string, flag: string): StoredVariable => {
    const variable = meta.variables.find((v) => v.name === column);
    if (!variable) {
      const skipped = meta.skipped.find((entry) => entry.column === column);
      throw designError(flag, skipped
        ? `${flag} column "${column}" was skipped (${skipped.reason}) and cannot be a design column`
        : `${flag} column "${column}" is not a column of the input`, 'Check the column name (and that --exclude does not leave it out).');
    }
    if (variable.kind === 'multi') {
      throw designError(flag, `${flag} column "${column}" is a multi-response variable; a design column holds one value per respondent`, 'Name a single-coded column.');
    }
    if (variable.missing > 0) {
      throw designError(flag, `${flag} column "${column}" is blank for ${variable.missing} respondents; every respondent needs a ${flag.slice(2)}`,
        'Fill in the design column, or leave those respondents out of the input.');
    }
    return variable;
  };
  const psuVar = variableOf(design.psu!, '--psu');
  const strataVar = design.strata === undefined ? undefined : variableOf(design.strata, '--strata');
  const fpcVar = design.fpc === undefined ? undefined : variableOf(design.fpc, '--fpc');
  const psuRanks = ranks(psuVar);
  const strataRanks = strataVar ? ranks(strataVar) : undefined;
  // A PSU is (stratum, PSU value) with nest, the PSU value alone without.
  const psuCount = psuVar.values.length + 1;
  const keyOf = (i: number) => (design.nest === true ? (strataRanks ? strataRanks[i]! : 0) * psuCount + psuRanks[i]! : psuRanks[i]!);
  const stratumOfKey = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const key = keyOf(i);
    const stratum = strataRanks ? strataRanks[i]! : 1;
    const seen = stratumOfKey.get(key);
    if (seen === undefined) stratumOfKey.set(key, stratum);
    else if (seen !== stratum) {
      throw designError('--psu', `PSU "${psuVar.values[psuRanks[i]! - 1]}" of column "${psuVar.name}" appears in more than one stratum of "${strataVar!.name}"; PSU numbers restart within strata`,
        'Add --nest (as R\'s svydesign(nest = TRUE)).');
    }
  }
  const keys = [...stratumOfKey.keys()].sort((a, b) => stratumOfKey.get(a)! - stratumOfKey.get(b)! || a - b);
  const clusterOfKey = new Map(keys.map((key, cluster) => [key, cluster]));
  const stratumRanks = [...new Set(keys.map((key) => stratumOfKey.get(key)!))];
  const stratumIndex = new Map(stratumRanks.map((rank, index) => [rank, index]));
  const stratumOf = Int32Array.from(keys, (key) => stratumIndex.get(stratumOfKey.get(key)!)!);
  const clusterOf = new Uint32Array(n);
  for (let i = 0; i < n; i++) clusterOf[i] = clusterOfKey.get(keyOf(i))!;
  const strata = stratumRanks.map((rank) => ({ label: strataVar ? strataVar.values[rank - 1]! : '1', psus: 0, fpcFactor: 1 }));
  for (const stratum of stratumOf) strata[stratum]!.psus++;
  if (fpcVar) applyFpc(fpcVar, ranks(fpcVar), clusterOf, stratumOf, strata);
  return { clusterOf, clusters: keys.length, stratumOf, strata };
}

/** R's svydesign fpc: all values <= 1 are sampling fractions, otherwise population PSU counts. */
function applyFpc(variable: StoredVariable, ranks: ArrayLike<number>, clusterOf: Uint32Array, stratumOf: Int32Array, strata: ClusterStructure['strata']): void {
  const values = variable.values.map(Number);
  if (variable.kind !== 'numeric' || values.some((value) => !(value > 0))) {
    throw designError('--fpc', `--fpc column "${variable.name}" must hold positive numbers`, 'Give population PSU counts per stratum, or sampling fractions.');
  }
  const fractions = values.every((value) => value <= 1);
  const perStratum = new Array<number | undefined>(strata.length);
  for (let i = 0; i < clusterOf.length; i++) {
    const stratum = stratumOf[clusterOf[i]!]!;
    const value = values[ranks[i]! - 1]!;
    if (perStratum[stratum] === undefined) perStratum[stratum] = value;
    else if (perStratum[stratum] !== value) {
      throw designError('--fpc', `--fpc column "${variable.name}" has more than one value in stratum ${strata[stratum]!.label}`, 'The fpc must be constant within a stratum.');
    }
  }
  strata.forEach((stratum, h) => {
    const value = perStratum[h]!;
    const population = fractions ? stratum.psus / value : value;
    if (population < stratum.psus) {
      throw designError('--fpc', `--fpc column "${variable.name}": stratum ${stratum.label} has ${stratum.psus} PSUs in the sample but ${value} in the population`, 'The fpc is the number of PSUs in the population.');
    }
    stratum.fpcFactor = (population - stratum.psus) / population;
  });
}

/** The design's description for `info`: a line of text. */
export function describeDesign(design: StoredDesign | undefined): string {
  if (!design) return 'simple (independent respondents, weights only)';
  if (design.replicates) {
    const r = design.replicates;
    return `replicate weights: ${r.type}, ${r.weights.length} replicates (${r.weights[0]} … ${r.weights[r.weights.length - 1]}), scale ${r.scale}${r.rho === undefined ? '' : `, rho ${r.rho}`}${r.mse ? ', mse' : ''}, ${r.degf} degrees of freedom`;
  }
  return `Taylor linearization: ${design.strata ? `strata ${design.strata}, ` : ''}PSU ${design.psu}${design.nest ? ' (nested in strata)' : ''}${design.fpc ? `, fpc ${design.fpc}` : ''}`;
}
