import type { StabilityLevel, StabilityThresholds, TableResult } from '../facade/types.js';
import type { ColumnGroup } from './column-groups.js';
import { formatNumber } from '../text/number-text.js';
import { presentFigures } from './cell-figures.js';
import { variableHeadings } from './distinct-labels.js';
import type { Figure, FigureDisplay, FigureStat } from './statistics.js';
import type { TableStatistics } from './table-statistics.js';

/** Options shared by the human-readable formats (text, HTML). */
export interface DisplayOptions {
  /** A heading, e.g. the dataset's name and survey. */
  title?: string;
  /** Variable labels by name, for the banner over each column group. */
  variableLabels?: Readonly<Record<string, string>>;
}

/** `*` for caution (31–60 respondents by default), `**` for very unstable (30 or fewer), '' otherwise. */
export function stabilityMarker(stability: StabilityLevel): string {
  return stability === 'very-unstable' ? '**' : stability === 'caution' ? '*' : '';
}

/** The marker legend, with the dataset's thresholds. */
export function markerLegend(thresholds: StabilityThresholds): string {
  const { cautionMax, veryUnstableMax } = thresholds;
  return `* use with caution: ${veryUnstableMax + 1}–${cautionMax} respondents; ** very unstable: ${veryUnstableMax} or fewer`;
}

/** The letters legend for a significance setting. */
export function lettersLegend(statistics: TableStatistics): string {
  const correction = statistics.correction === 'none' ? 'no correction' : `${statistics.correction} correction within each row and group`;
  const test = statistics.test === 'linearization' ? 'linearization z-test' : 'pooled z-test on effective bases';
  return `letters: the cell's vertical % is significantly higher than that of the columns with those letters in its group (${test}, alpha ${statistics.alpha}, ${correction})`;
}

/** A figure with `digits` decimals, thousands grouped by commas in every locale (formatNumber); `–` for none. */
export function formatCount(value: number, digits = 1): string {
  return Number.isFinite(value) ? formatNumber(value, digits) : '–';
}

/** A proportion as a percentage: 0.07522 → `7.5%`. */
export function formatPercent(proportion: number, digits = 1): string {
  return Number.isFinite(proportion) ? `${formatCount(100 * proportion, digits)}%` : '–';
}

/** How the variances were computed, for legends. */
export function varianceLegend(statistics: TableStatistics): string {
  if (statistics.variance === 'taylor') return `Taylor linearization with strata and PSUs, base as a domain of the whole file, lonely PSU ${statistics.lonelyPsu}`;
  if (statistics.variance === 'replicate') return 'replicate weights, base as a domain of the whole file';
  return `linearization, design n = ${formatCount(statistics.designRespondents, 0)} (${statistics.domain === 'file' ? 'whole file: the base is a domain' : 'the base'})`;
}

/**
 * What the percentages are of and how respondents with a blank are shown, one sentence
 * for every format with a header or legend (text, HTML; JSON and Arrow carry the same as
 * `percentBase`, `missing` and `missingNote`).
 */
export function missingNote(result: TableResult, statistics: TableStatistics | undefined): string {
  const label = result.rows.find((entry) => entry.missing)?.label ?? result.columns.find((entry) => entry.missing)?.label;
  const shown =
    result.missing === 'hide'
      ? 'respondents with a blank on a row or column variable are not shown as an entry (they stay in the totals)'
      : label === undefined
        ? 'no base respondent has a blank on an expanded variable'
        : [...result.rows, ...result.columns].some((entry) => entry.multi)
          ? `"${label}": base respondents with a blank on that variable (no answer at all, for a multi-response variable, whose values overlap: a respondent may be in several)`
          : `"${label}": base respondents with a blank on that variable, so each variable's entries add up to the base`;
  if (statistics === undefined || !statistics.stats.some((stat) => stat === 'vpct' || stat === 'hpct' || stat === 'tpct' || stat === 'index' || stat === 'se' || stat === 'moe' || stat === 'sig')) {
    return shown;
  }
  const base =
    statistics.percentBase === 'valid'
      ? `valid percentages: of the base respondents who answered the other axis's variable (vertical %: the row variable; horizontal %: the column variable; table %: both), as are their SE, tests and index${label === undefined ? '' : `; "${label}" entries are outside those bases (–)`}`
      : 'percentages of every base respondent in the column (vertical %), row (horizontal %) or base (table %)';
  return `${base}; ${shown}; significance and Rao-Scott tests cover answered categories only`;
}

/** The notes under a table's statistics: its Rao–Scott lines, and why its design effects are not given, when they are not. */
export function statisticsNotes(statistics: TableStatistics): string[] {
  const deff = statistics.designEffectNotDefined;
  const zeroWeights = deff === undefined ? [] : [`Design effects: not given, ${formatCount(deff.respondents, 0)} base respondents have weight 0 (the SRS variance counts only respondents with a weight above 0, which these cells do not tell apart)`];
  return [...raoScottLines(statistics), ...zeroWeights];
}

/** One line per Rao–Scott test, and one per column group whose columns share respondents (no test). */
export function raoScottLines(statistics: TableStatistics): string[] {
  const tests = (statistics.raoScott ?? []).map(
    (test) =>
      `Rao-Scott chi-square ${test.rowVariable} x ${test.columnVariable}: F = ${formatCount(test.statistic, 3)} on ${formatCount(test.ndf, 2)} and ${formatCount(test.ddf, 2)} df, p = ${Number.isFinite(test.pValue) ? test.pValue.toPrecision(3) : '–'}`,
  );
  const undefinedTests = (statistics.raoScottNotDefined ?? []).map((entry) => {
    const { variable, letters } = statistics.groups[entry.group]!;
    const columns = `${variable === null ? 'columns' : `${variable} columns`} ${letters[0]}-${letters[letters.length - 1]}`;
    if (entry.reason === 'overlapping-rows') {
      return `Rao-Scott chi-square ${entry.rowVariable} x ${variable ?? 'columns'}: not defined, the rows of the multi-response variable ${entry.rowVariable} share respondents (the test is of mutually exclusive categories)`;
    }
    return `Rao-Scott chi-square: not defined for ${columns}, which share respondents (the test is of mutually exclusive categories)`;
  });
  return [...tests, ...undefinedTests];
}

/** How a statistic is labelled and printed in the human formats. */
export interface DisplayedStat {
  figure: Figure;
  stat: FigureStat;
  label: string;
  format: (value: number) => string;
  values: Float64Array;
}

/** A figure's printed form (see {@link FigureDisplay}): `7.5%`, `±1.25%`, `1,234.5`, `–` when undefined. */
export function figureFormat(shown: FigureDisplay): (value: number) => string {
  const plain = shown.percent ? (v: number) => formatPercent(v, shown.digits) : (v: number) => formatCount(v, shown.digits);
  return shown.plusMinus ? (v) => (Number.isFinite(v) ? `±${plain(v)}` : '–') : plain;
}

/** The requested numeric statistics with labels and formatting (percentages as %), in {@link FIGURES} order. */
export function displayedStats(statistics: TableStatistics | undefined): DisplayedStat[] {
  return presentFigures(statistics).map(({ values, ...figure }) => ({ figure, stat: figure.stat, label: figure.label, format: figureFormat(figure.shown), values }));
}

/** A run of adjacent columns under one banner: a compared group, or one stand-alone column. */
export interface Banner {
  label: string;
  columns: number[];
}

/** Banners over the columns, in column order: each group under its variable's label, other columns alone. */
export function banners(result: TableResult, groups: readonly ColumnGroup[], options: DisplayOptions): Banner[] {
  const groupOf = new Map<number, ColumnGroup>();
  for (const group of groups) for (const column of group.columns) groupOf.set(column, group);
  const heading = variableHeadings(result, options.variableLabels);
  const out: Banner[] = [];
  let previous: ColumnGroup | undefined;
  result.columns.forEach((column, c) => {
    const group = groupOf.get(c);
    // A "No answer" column goes under its variable's banner, after the values.
    const joins = group === undefined && column.missing && previous !== undefined && previous.variable === column.variable && previous.columns.at(-1) === c - 1;
    if ((group !== undefined && group === previous) || joins) {
      out.at(-1)!.columns.push(c);
      return;
    }
    previous = group;
    const variable = group?.variable ?? column.variable;
    const label = variable !== undefined && variable !== null ? heading(variable) : '';
    out.push({ label, columns: [c] });
  });
  return out;
}
