import { CrosstabError, ErrorCode } from '../errors.js';
import type { PercentBase, TableResult } from '../facade/types.js';
import {
  NORMAL_CRITICAL_95,
  columnProportion,
  kishEffectiveBase,
  kishStandardError,
  testColumns,
  type CellSums,
  type ComparisonMethod,
  type Correction,
  type StandardErrorMethod,
} from '../stats/index.js';
import { LONELY_PSU, type LonelyPsu } from '../stats/design-variance.js';
import { CORRECTIONS } from '../stats/significance.js';
import { STANDARD_ERROR_METHODS } from '../stats/standard-error.js';
import { columnGroups, type ColumnGroup } from './column-groups.js';
import { refuseOnMultiAxes } from './multi-axes.js';
import { raoScottTests, type RaoScottNotDefined, type RaoScottTest } from './rao-scott-tests.js';
import { designFigures, DOMAINS, type DesignFigures, type Domain, type VarianceKind } from './design-figures.js';
import { percentBases, type PercentBases } from './percent-bases.js';
import { checkStatisticsLimits, statisticsWork, type StatisticsLimits } from './statistics-limits.js';
import { readPercentBase } from '../facade/axes.js';
import { FIGURES, normalizeStats, type FigureField, type StatName } from './statistics.js';

/** One Float64Array per figure of a requested statistic. */
type FigureArrays = { [Field in FigureField]?: Float64Array };

export { STAT_NAMES, normalizeStats, type StatName } from './statistics.js';

export interface TableStatisticsOptions {
  /** Statistics to compute; default `'all'`. */
  stats?: readonly StatName[] | 'all';
  /** SE of the column proportion: `linearization` (default, R's svymean) or `kish` (effective base). */
  se?: StandardErrorMethod;
  /**
   * Column test: default `linearization` (unpooled, R's svycontrast), or `pooled-effective`
   * when `se` is `kish` (pooled z on Kish effective bases, the SPSS/UNICOM effective-base test).
   */
  test?: ComparisonMethod;
  /** Multiple-comparison correction over the pairs of one row within one column group; default `none`. */
  correction?: Correction;
  /** Significance level of the column test; default 0.05. */
  alpha?: number;
  /**
   * Design effect: `replace` (default, R `deff = "replace"`) or `population`
   * (R `deff = TRUE`, treats Σw as the population size; only for weights summing to a population).
   */
  deff?: 'replace' | 'population';
  /** Explicit groups of mutually exclusive columns to compare (column indexes); default: see {@link columnGroups}. */
  columnGroups?: readonly (readonly number[])[];
  /**
   * Simple design only: `file` (default) treats the base as a domain of the whole file's
   * design (R `subset(design, base)`, N = the file's respondents); `base` as a design of
   * its own (N = the base's respondents). Complex designs are always domains of the file.
   */
  domain?: Domain;
  /** Strata with one PSU (Taylor designs), as R's `survey.lonely.psu`; default `fail`. */
  lonelyPsu?: LonelyPsu;
  /**
   * What percentages (and their SEs, tests, index) are of: `total`, every base respondent
   * of the column / row / table; `valid`, only those who answered the variable of the other
   * axis. Default: the result's `percentBase` (TableQuery.percentBase, itself default `total`).
   */
  percentBase?: PercentBase;
  /**
   * Bounds on the work beyond the cells, checked before any statistic is computed (default
   * none): `comparisons` (sig: tested rows x pairs of columns within each group) and
   * `raoScottCovariance` (chisq: Σ cells² over the tests). Past one, `invalid_option`
   * naming `limits.comparisons` or `limits.raoScottCovariance`.
   */
  limits?: StatisticsLimits;
}

/** One column comparison within a row: columns `columnA` < `columnB` of one group. */
export interface ColumnComparison {
  row: number;
  /** Index into `TableStatistics.groups`. */
  group: number;
  columnA: number;
  columnB: number;
  /** pA − pB (proportions). */
  difference: number;
  standardError: number;
  /** NaN when untestable (SE 0 or undefined). */
  z: number;
  pValue: number;
  /** p-value after the correction over the row's pairs in this group. */
  adjustedPValue: number;
  /** adjustedPValue < alpha. */
  significant: boolean;
  /**
   * Columns that may share respondents (not two values of one expanded variable): how many
   * respondents of the two proportions' denominators are in both columns; their covariance
   * enters `standardError`.
   */
  respondentsInBoth?: number;
}

/**
 * Derived figures of a table. Per-cell arrays are row-major like `TableResult.weighted`
 * (index `row * columns.length + column`) and present only when requested.
 * Percentages are proportions (0–1); undefined figures (a zero denominator) are NaN.
 * The per-cell figures (`columnPct`, `rowPct`, ... `weightedMoE`) are those of {@link FIGURES}.
 */
export interface TableStatistics extends FigureArrays {
  /** The statistics computed, in {@link STAT_NAMES} order. */
  stats: StatName[];
  se: StandardErrorMethod;
  test: ComparisonMethod;
  correction: Correction;
  alpha: number;
  deff: 'replace' | 'population';
  domain: Domain;
  lonelyPsu: LonelyPsu;
  /** What the percentages are of: `total` (every base respondent) or `valid` (those who answered). */
  percentBase: PercentBase;
  /** How variances are computed: the simple design, Taylor linearization with strata and PSUs, or replicate weights. */
  variance: VarianceKind;
  /** Simple design: N in the linearization N/(N−1) factor (the file's or the base's respondents); NaN for other designs. */
  designRespondents: number;
  /**
   * Per row, the share of its Total column: Σw(row total) over what the percentages are of
   * (the base, or with `valid` the base's respondents who answered the row's variable);
   * the average the index compares with.
   */
  rowShare: Float64Array;
  /** Column groups that are compared (always filled, for labelling). */
  groups: ColumnGroup[];
  /** Per column, its key letter within its group; `null` when the column is in no group. */
  columnLetters: Array<string | null>;
  /** `sig`: per cell, the letters of the columns of its group it is significantly greater than ('' when none). */
  letters?: string[];
  /** `sig`: every pair tested, row by row. */
  comparisons?: ColumnComparison[];
  /** `chisq`: Rao–Scott test of each (row variable, column variable) expanded whole on the table. */
  raoScott?: RaoScottTest[];
  /**
   * `chisq`: the column groups (indexes into `groups`) with no Rao–Scott test because their
   * columns share respondents (or may, uncounted; always for a multi-response variable), and
   * the (multi-response row variable, column group) pairs with none because the rows do: the
   * test is of one variable's mutually exclusive categories and is not defined for overlapping ones.
   */
  raoScottNotDefined?: RaoScottNotDefined[];
  /**
   * `deff`: why every design effect is NaN, when one is: `zero-weights`, some of the base's
   * respondents (`respondents`) have weight 0. R's design effects count only respondents
   * with a weight above 0 in the SRS variance, and the cells' counts do not tell them apart.
   */
  designEffectNotDefined?: { reason: 'zero-weights'; respondents: number };
}

/**
 * Percentages, index, effective base, design effect, SE, margin of error and column
 * significance letters for every cell of a table, from its Σw, n and Σw² alone
 * (formulas and R references in docs/tables.md and docs/statistics.md). The
 * linearization figures treat the base as the design: n = base respondents.
 * Throws CrosstabError `invalid_option` for a bad option, naming it.
 */
export function tableStatistics(result: TableResult, options: TableStatisticsOptions = {}): TableStatistics {
  const settings = readOptions(options);
  refuseOnMultiAxes(result, settings.percentBase ?? result.percentBase ?? 'total');
  const rowCount = result.rows.length;
  const columnCount = result.columns.length;
  const size = rowCount * columnCount;
  // Before any figure: the work of sig and chisq is bounded first.
  const groups = columnGroups(result.columns, options.columnGroups ?? result.columnGroups);
  checkStatisticsLimits(statisticsWork(result, settings.stats, groups), options.limits, columnCount);
  const bases = percentBases(result, settings.percentBase ?? result.percentBase ?? 'total');
  const figures = designFigures(result, settings.domain, settings.lonelyPsu, bases);
  const designRespondents = figures.designRespondents;
  const wants = new Set(settings.stats);
  const columnLetters: Array<string | null> = result.columns.map(() => null);
  for (const group of groups) group.columns.forEach((column, position) => (columnLetters[column] = group.letters[position]!));

  const rowShare = Float64Array.from(result.rowTotals, (row, r) => {
    const of = bases.rowShare(r);
    return of === null ? Number.NaN : ratio(row.weighted, of.weighted);
  });
  const out: TableStatistics = { ...settings, percentBase: bases.percentBase, variance: figures.variance, designRespondents, groups, columnLetters, rowShare };
  for (const figure of FIGURES) if (wants.has(figure.stat)) out[figure.field] = new Float64Array(size);

  const zeroWeights = result.design?.zeroWeights ?? 0;
  if (out.designEffect && zeroWeights > 0) out.designEffectNotDefined = { reason: 'zero-weights', respondents: zeroWeights };
  for (let r = 0; r < rowCount; r++) {
    for (let c = 0; c < columnCount; c++) {
      const at = r * columnCount + c;
      const cell = sumsAt(result, at);
      const column = bases.column(r, c)?.sums ?? UNDEFINED_BASE;
      const p = columnProportion(cell, column);
      if (out.columnPct) out.columnPct[at] = p;
      if (out.rowPct) out.rowPct[at] = ratio(cell.weighted, (bases.row(r, c) ?? UNDEFINED_BASE).weighted);
      if (out.tablePct) out.tablePct[at] = ratio(cell.weighted, (bases.table(r, c) ?? UNDEFINED_BASE).weighted);
      if (out.index) out.index[at] = (100 * p) / rowShare[r]!;
      if (out.effectiveBase) out.effectiveBase[at] = kishEffectiveBase(column);
      const variance = out.designEffect || (settings.se !== 'kish' && (out.columnPctSE || out.columnPctMoE)) ? figures.proportionVariance(r, c) : Number.NaN;
      if (out.designEffect) out.designEffect[at] = zeroWeights > 0 ? Number.NaN : designEffect(p, column, variance, settings.deff === 'population');
      if (out.columnPctSE || out.columnPctMoE) {
        const se = settings.se === 'kish' ? kishStandardError(cell, column) : Math.sqrt(variance);
        if (out.columnPctSE) out.columnPctSE[at] = se;
        if (out.columnPctMoE) out.columnPctMoE[at] = NORMAL_CRITICAL_95 * se;
      }
      if (out.weightedSE || out.weightedMoE) {
        const se = figures.totalSE(r, c);
        if (out.weightedSE) out.weightedSE[at] = se;
        if (out.weightedMoE) out.weightedMoE[at] = NORMAL_CRITICAL_95 * se;
      }
    }
  }
  if (wants.has('sig')) Object.assign(out, significance(result, groups, settings, figures, bases));
  if (wants.has('chisq')) {
    // Rao–Scott tests one variable's disjoint categories; a group whose columns share respondents has none,
    // nor has a multi-response row variable (its rows overlap).
    const overlapping = groups.flatMap((group, g) => (sharesRespondents(result, group, figures) ? [g] : []));
    const tested = groups.filter((_, g) => !overlapping.includes(g));
    out.raoScott = raoScottTests(result, figures, tested);
    out.raoScottNotDefined = [
      ...overlapping.map((group) => ({ group, reason: 'overlapping-columns' as const })),
      ...multiRowVariables(result).flatMap((rowVariable) =>
        groups.flatMap((group, g) => (group.variable === null || overlapping.includes(g) ? [] : [{ group: g, reason: 'overlapping-rows' as const, rowVariable }])),
      ),
    ];
  }
  return out;
}

/**
 * Design effect of the column proportion: the design variance over the with-replacement
 * SRS variance p(1−p)/(n_col − 1) (R `deff = "replace"`); `population` also multiplies the
 * SRS variance by (W_col − n_col)/W_col (R `deff = TRUE`; NaN when W_col < n_col, as R's NA).
 */
function designEffect(p: number, column: CellSums, variance: number, populationCorrection: boolean): number {
  let srsVariance = (p * (1 - p)) / (column.respondents - 1);
  if (populationCorrection) {
    if (column.weighted < column.respondents) return Number.NaN;
    srsVariance *= (column.weighted - column.respondents) / column.weighted;
  }
  return variance / srsVariance;
}

function significance(
  result: TableResult,
  groups: ColumnGroup[],
  settings: ReturnType<typeof readOptions>,
  figures: DesignFigures,
  bases: PercentBases,
): Pick<TableStatistics, 'letters' | 'comparisons'> {
  const columnCount = result.columns.length;
  const letters = new Array<string>(result.rows.length * columnCount).fill('');
  const comparisons: ColumnComparison[] = [];
  for (let r = 0; r < result.rows.length; r++) {
    // The "No answer" row is not tested: significance is of the answered categories.
    if (result.rows[r]!.missing) continue;
    groups.forEach((group, g) => {
      if (group.columns.length < 2) return;
      checkOverlaps(result, group, r, settings.test, figures);
      const tested = testColumns(
        group.columns.map((c) => ({ cell: sumsAt(result, r * columnCount + c), column: bases.column(r, c)?.sums ?? UNDEFINED_BASE })),
        {
          method: settings.test,
          alpha: settings.alpha,
          correction: settings.correction,
          ...(settings.test === 'linearization' ? { differenceVariance: (a: number, b: number) => figures.differenceVariance(r, group.columns[a]!, group.columns[b]!) } : {}),
        },
      );
      tested.letters.forEach((text, position) => (letters[r * columnCount + group.columns[position]!] = text));
      for (const pair of tested.pairs) {
        comparisons.push({
          row: r,
          group: g,
          columnA: group.columns[pair.a]!,
          columnB: group.columns[pair.b]!,
          difference: pair.difference,
          standardError: pair.standardError,
          z: pair.z,
          pValue: pair.pValue,
          adjustedPValue: pair.adjustedPValue,
          significant: pair.significant,
          ...inBoth(figures, r, group.columns[pair.a]!, group.columns[pair.b]!),
        });
      }
    });
  }
  return { letters, comparisons };
}

/**
 * Refuses a comparison the table cannot make right: columns that may share respondents
 * whose overlap the table did not count (the simple design's covariance needs it), or that
 * do share respondents under the pooled effective-base test, which assumes independent columns.
 */
function checkOverlaps(result: TableResult, group: ColumnGroup, row: number, test: ComparisonMethod, figures: DesignFigures): void {
  const { overlaps } = figures;
  const name = (c: number) => `column ${c} (${result.columns[c]!.expr})`;
  for (let i = 0; i < group.columns.length; i++) {
    for (let j = i + 1; j < group.columns.length; j++) {
      const a = group.columns[i]!;
      const b = group.columns[j]!;
      if (!overlaps.counted(a, b)) {
        const multi = group.variable !== null && result.columns[a]!.multi === true;
        throw new CrosstabError(ErrorCode.invalidOption, `${name(a)} and ${name(b)} may share respondents, and the table did not count those in both: their column test needs them`, {
          field: 'columnGroups',
          hint: multi
            ? `The multi-response variable ${group.variable}'s ${group.columns.length} values make too many pairs to count in one table: compare fewer of them, giving their column indexes to ds.table({ columnGroups }) (--column-group).`
            : 'Give the groups to ds.table({ columnGroups }), which counts the respondents in both columns of each pair, rather than to tableStatistics().',
        });
      }
      if (test === 'pooled-effective' && (overlaps.both(row, a, b)?.column.respondents ?? 0) > 0) {
        throw new CrosstabError(ErrorCode.invalidOption, `${name(a)} and ${name(b)} share respondents: the pooled effective-base test assumes independent columns`, {
          field: 'test',
          hint: "Use test 'linearization' (the default with se 'linearization'), which accounts for the respondents in both columns.",
        });
      }
    }
  }
}

/**
 * Whether two columns of the group share respondents in the base, or may and were not
 * counted; a multi-response variable's columns always may (no single-coded categories).
 */
function sharesRespondents(result: TableResult, group: ColumnGroup, figures: DesignFigures): boolean {
  if (group.columns.some((c) => result.columns[c]!.multi)) return true;
  const { overlaps } = figures;
  for (let i = 0; i < group.columns.length; i++) {
    for (let j = i + 1; j < group.columns.length; j++) {
      const a = group.columns[i]!;
      const b = group.columns[j]!;
      if (!overlaps.mayOverlap(a, b)) continue;
      if (!overlaps.counted(a, b)) return true;
      if ((overlaps.total(a, b)?.respondents ?? 1) > 0) return true;
    }
  }
  return false;
}

/** The multi-response variables expanded on the rows, in row order: none has a Rao–Scott test. */
function multiRowVariables(result: TableResult): string[] {
  return [...new Set(result.rows.flatMap((row) => (row.multi && row.variable !== undefined ? [row.variable] : [])))];
}

/** `respondentsInBoth` of a comparison between columns that may overlap. */
function inBoth(figures: DesignFigures, row: number, a: number, b: number): { respondentsInBoth?: number } {
  if (!figures.overlaps.mayOverlap(a, b)) return {};
  const both = figures.overlaps.both(row, a, b);
  return both === null ? {} : { respondentsInBoth: both.column.respondents };
}

/** The denominator of a figure outside its percent base (a "No answer" entry under `valid`): every figure NaN. */
const UNDEFINED_BASE: CellSums = { weighted: Number.NaN, respondents: Number.NaN, sumSqWeights: Number.NaN };

function sumsAt(result: TableResult, at: number): CellSums {
  return { weighted: result.weighted[at]!, respondents: result.respondents[at]!, sumSqWeights: result.sumSqWeights[at]! };
}

function ratio(part: number, whole: number): number {
  return whole === 0 ? Number.NaN : part / whole;
}

function readOptions(options: TableStatisticsOptions) {
  if (typeof options !== 'object' || options === null) throw invalidOption('options', 'options must be an object');
  const stats = normalizeStats(options.stats);
  const se = options.se ?? 'linearization';
  if (!(STANDARD_ERROR_METHODS as readonly string[]).includes(se)) throw invalidOption('options.se', `options.se must be 'linearization' or 'kish', not ${String(se)}`);
  const test = options.test ?? (se === 'kish' ? 'pooled-effective' : 'linearization');
  if (test !== 'linearization' && test !== 'pooled-effective') {
    throw invalidOption('options.test', `options.test must be 'linearization' or 'pooled-effective', not ${String(test)}`);
  }
  const correction = options.correction ?? 'none';
  if (!(CORRECTIONS as readonly string[]).includes(correction)) {
    throw invalidOption('options.correction', `options.correction must be 'none', 'bonferroni' or 'holm', not ${String(correction)}`);
  }
  const alpha = options.alpha ?? 0.05;
  if (typeof alpha !== 'number' || !(alpha > 0 && alpha < 1)) {
    throw invalidOption('options.alpha', `options.alpha must be a number between 0 and 1 (exclusive), not ${String(alpha)}`);
  }
  const deff = options.deff ?? 'replace';
  if (deff !== 'replace' && deff !== 'population') throw invalidOption('options.deff', `options.deff must be 'replace' or 'population', not ${String(deff)}`);
  const domain = options.domain ?? 'file';
  if (!(DOMAINS as readonly string[]).includes(domain)) throw invalidOption('options.domain', `options.domain must be 'file' or 'base', not ${String(domain)}`);
  const lonelyPsu = options.lonelyPsu ?? 'fail';
  if (!(LONELY_PSU as readonly string[]).includes(lonelyPsu)) {
    throw invalidOption('options.lonelyPsu', `options.lonelyPsu must be one of ${LONELY_PSU.join(', ')}, not ${String(lonelyPsu)}`);
  }
  const percentBase = options.percentBase === undefined ? undefined : readPercentBase(options.percentBase, 'options.percentBase');
  return { stats, se, test, correction, alpha, deff, domain, lonelyPsu, percentBase } as const;
}

function invalidOption(field: string, message: string): CrosstabError {
  return new CrosstabError(ErrorCode.invalidOption, message, { field });
}
