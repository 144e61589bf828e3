import { CrosstabError, ErrorCode } from '../errors.js';
import type { TableResult } from '../facade/types.js';
import {
  NORMAL_CRITICAL_95,
  columnProportion,
  designEffect,
  index,
  kishEffectiveBase,
  kishStandardError,
  linearizationStandardError,
  testColumns,
  type CellSums,
  type ComparisonMethod,
  type Correction,
  type StandardErrorMethod,
} from '../stats/index.js';
import { columnGroups, type ColumnGroup } from './column-groups.js';

/** Every derived statistic, in the order reports list them. */
export const STAT_NAMES = ['vpct', 'hpct', 'tpct', 'index', 'ebase', 'deff', 'se', 'moe', 'sig'] as const;

/**
 * A derived statistic: `vpct` vertical (column) proportion, `hpct` horizontal (row)
 * proportion, `tpct` table proportion, `index`, `ebase` Kish effective base of the
 * column, `deff` design effect, `se` standard error of the column proportion, `moe`
 * its 95% margin of error, `sig` column-comparison letters. See docs/tables.md.
 */
export type StatName = (typeof STAT_NAMES)[number];

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
}

/**
 * Derived figures of a table. Per-cell arrays are row-major like `TableResult.weighted`
 * (index `row * columns.length + column`) and present only when requested.
 * Percentages are proportions (0–1); undefined figures (a zero denominator) are NaN.
 */
export interface TableStatistics {
  /** The statistics computed, in {@link STAT_NAMES} order. */
  stats: StatName[];
  se: StandardErrorMethod;
  test: ComparisonMethod;
  correction: Correction;
  alpha: number;
  deff: 'replace' | 'population';
  /** n of the design (the base's respondents) in the linearization n/(n−1) factor. */
  designRespondents: number;
  /** `vpct`: Σw(cell) / Σw(column). */
  columnPct?: Float64Array;
  /** `hpct`: Σw(cell) / Σw(row total). */
  rowPct?: Float64Array;
  /** `tpct`: Σw(cell) / Σw(base). */
  tablePct?: Float64Array;
  /** `index`: 100 · columnPct / (Σw(row total) / Σw(base)); 100 = average. */
  index?: Float64Array;
  /** `ebase`: Kish effective base of the cell's column, (Σw)² / Σw². */
  effectiveBase?: Float64Array;
  /** `deff`: design effect of the column proportion (see `deff` option). */
  designEffect?: Float64Array;
  /** `se`: standard error of columnPct by the `se` method. */
  columnPctSE?: Float64Array;
  /** `moe`: qnorm(0.975) · SE. */
  columnPctMoE?: Float64Array;
  /** Column groups that are compared (always filled, for labelling). */
  groups: ColumnGroup[];
  /** Per column, its key letter within its group; `null` when the column is in no group. */
  columnLetters: Array<string | null>;
  /** `sig`: per cell, the letters of the columns of its group it is significantly greater than ('' when none). */
  letters?: string[];
  /** `sig`: every pair tested, row by row. */
  comparisons?: ColumnComparison[];
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
  const rowCount = result.rows.length;
  const columnCount = result.columns.length;
  const size = rowCount * columnCount;
  const designRespondents = result.total.respondents;
  const wants = new Set(settings.stats);
  const groups = columnGroups(result.columns, options.columnGroups);
  const columnLetters: Array<string | null> = result.columns.map(() => null);
  for (const group of groups) group.columns.forEach((column, position) => (columnLetters[column] = group.letters[position]!));

  const out: TableStatistics = { ...settings, designRespondents, groups, columnLetters };
  const array = (name: StatName) => (wants.has(name) ? new Float64Array(size) : undefined);
  out.columnPct = array('vpct');
  out.rowPct = array('hpct');
  out.tablePct = array('tpct');
  out.index = array('index');
  out.effectiveBase = array('ebase');
  out.designEffect = array('deff');
  out.columnPctSE = array('se');
  out.columnPctMoE = array('moe');
  // Linearization needs n ≥ 2 (n/(n−1)); a smaller base has no variance estimate.
  const hasDesign = designRespondents >= 2;
  const total = result.total;

  for (let r = 0; r < rowCount; r++) {
    const row = result.rowTotals[r]!;
    for (let c = 0; c < columnCount; c++) {
      const at = r * columnCount + c;
      const cell = sumsAt(result, at);
      const column = result.columnTotals[c]!;
      const p = columnProportion(cell, column);
      if (out.columnPct) out.columnPct[at] = p;
      if (out.rowPct) out.rowPct[at] = ratio(cell.weighted, row.weighted);
      if (out.tablePct) out.tablePct[at] = ratio(cell.weighted, total.weighted);
      if (out.index) out.index[at] = index(cell, row, column, total);
      if (out.effectiveBase) out.effectiveBase[at] = kishEffectiveBase(column);
      if (out.designEffect) {
        out.designEffect[at] = hasDesign
          ? designEffect(cell, column, designRespondents, { populationCorrection: settings.deff === 'population' })
          : Number.NaN;
      }
      if (out.columnPctSE || out.columnPctMoE) {
        const se =
          settings.se === 'kish'
            ? kishStandardError(cell, column)
            : hasDesign
              ? linearizationStandardError(cell, column, designRespondents)
              : Number.NaN;
        if (out.columnPctSE) out.columnPctSE[at] = se;
        if (out.columnPctMoE) out.columnPctMoE[at] = NORMAL_CRITICAL_95 * se;
      }
    }
  }
  if (wants.has('sig')) Object.assign(out, significance(result, groups, settings, hasDesign || settings.test !== 'linearization'));
  return out;
}

function significance(
  result: TableResult,
  groups: ColumnGroup[],
  settings: ReturnType<typeof readOptions>,
  testable: boolean,
): Pick<TableStatistics, 'letters' | 'comparisons'> {
  const columnCount = result.columns.length;
  const letters = new Array<string>(result.rows.length * columnCount).fill('');
  const comparisons: ColumnComparison[] = [];
  if (!testable) return { letters, comparisons };
  for (let r = 0; r < result.rows.length; r++) {
    groups.forEach((group, g) => {
      if (group.columns.length < 2) return;
      const tested = testColumns(
        group.columns.map((c) => ({ cell: sumsAt(result, r * columnCount + c), column: result.columnTotals[c]! })),
        { method: settings.test, designRespondents: result.total.respondents, alpha: settings.alpha, correction: settings.correction },
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
        });
      }
    });
  }
  return { letters, comparisons };
}

function sumsAt(result: TableResult, at: number): CellSums {
  return { weighted: result.weighted[at]!, respondents: result.respondents[at]!, sumSqWeights: result.sumSqWeights[at]! };
}

function ratio(part: number, whole: number): number {
  return whole === 0 ? Number.NaN : part / whole;
}

/** Reads `stats` given as a list or `'all'`; the result is in {@link STAT_NAMES} order without repeats. */
export function normalizeStats(stats: readonly StatName[] | 'all' | undefined, field = 'options.stats'): StatName[] {
  if (stats === undefined || stats === 'all') return [...STAT_NAMES];
  if (!Array.isArray(stats)) {
    throw invalidOption(field, `${field} must be 'all' or an array of ${STAT_NAMES.join(', ')}`);
  }
  for (const name of stats) {
    if (!(STAT_NAMES as readonly string[]).includes(name)) {
      throw invalidOption(field, `${field}: unknown statistic "${String(name)}"; use ${STAT_NAMES.join(', ')} or all`);
    }
  }
  return STAT_NAMES.filter((name) => stats.includes(name));
}

function readOptions(options: TableStatisticsOptions) {
  if (typeof options !== 'object' || options === null) throw invalidOption('options', 'options must be an object');
  const stats = normalizeStats(options.stats);
  const se = options.se ?? 'linearization';
  if (se !== 'linearization' && se !== 'kish') throw invalidOption('options.se', `options.se must be 'linearization' or 'kish', not ${String(se)}`);
  const test = options.test ?? (se === 'kish' ? 'pooled-effective' : 'linearization');
  if (test !== 'linearization' && test !== 'pooled-effective') {
    throw invalidOption('options.test', `options.test must be 'linearization' or 'pooled-effective', not ${String(test)}`);
  }
  const correction = options.correction ?? 'none';
  if (correction !== 'none' && correction !== 'bonferroni' && correction !== 'holm') {
    throw invalidOption('options.correction', `options.correction must be 'none', 'bonferroni' or 'holm', not ${String(correction)}`);
  }
  const alpha = options.alpha ?? 0.05;
  if (typeof alpha !== 'number' || !(alpha > 0 && alpha < 1)) {
    throw invalidOption('options.alpha', `options.alpha must be a number between 0 and 1 (exclusive), not ${String(alpha)}`);
  }
  const deff = options.deff ?? 'replace';
  if (deff !== 'replace' && deff !== 'population') throw invalidOption('options.deff', `options.deff must be 'replace' or 'population', not ${String(deff)}`);
  return { stats, se, test, correction, alpha, deff } as const;
}

function invalidOption(field: string, message: string): CrosstabError {
  return new CrosstabError(ErrorCode.invalidOption, message, { field });
}
