import { stabilityOf } from '../facade/dataset-info.js';
import type { AxisEntry, Cell, TableResult } from '../facade/types.js';
import type { Domain, VarianceKind } from './design-figures.js';
import type { LonelyPsu } from '../stats/design-variance.js';
import type { ComparisonMethod, Correction, StandardErrorMethod } from '../stats/index.js';
import { percentBases } from './percent-bases.js';
import { FIGURES } from './statistics.js';
import type { TableJson, TableJsonAxisEntry } from './table-json.js';
import type { TableStatistics } from './table-statistics.js';

/** A number of a JSON answer: null (an undefined figure) as NaN. */
const numberOf = (value: number | null | undefined): number => (value === null || value === undefined ? Number.NaN : value);

/**
 * The table and statistics a JSON table document (`tableToJSON`, POST /tables' `Table`)
 * describes, to write it again in another layout or format (a chart, a deck, a banner table)
 * without computing anything: every sum and figure is the document's own (null as NaN). The
 * Total column's share of each row (`rowShare`) is derived from the margins as
 * tableStatistics() derives it. The result has no design sums: nothing that needs them
 * (a new statistic) can be computed from it.
 */
export function tableFromJson(json: TableJson): { result: TableResult; statistics: TableStatistics | undefined } {
  const width = json.columns.length;
  const size = json.rows.length * width;
  const weighted = new Float64Array(size);
  const respondents = new Float64Array(size);
  const sumSqWeights = new Float64Array(size);
  json.cells.forEach((row, r) =>
    row.forEach((cell, c) => {
      weighted[r * width + c] = cell.weighted;
      respondents[r * width + c] = cell.respondents;
      sumSqWeights[r * width + c] = cell.sumSqWeights;
    }),
  );
  const entry = ({ group: _group, letter: _letter, ...fields }: TableJsonAxisEntry): AxisEntry => fields as AxisEntry;
  const margin = (cell: Cell): Cell => ({ weighted: cell.weighted, respondents: cell.respondents, sumSqWeights: cell.sumSqWeights, stability: cell.stability });
  const result: TableResult = {
    base: json.base,
    rows: json.rows.map(entry),
    columns: json.columns.map(entry),
    weighted,
    respondents,
    sumSqWeights,
    rowTotals: json.rowTotals.map(margin),
    columnTotals: json.columnTotals.map(margin),
    total: margin(json.total),
    weight: json.weight,
    units: json.units,
    stability: { ...json.stabilityThresholds },
    missing: json.missing,
    percentBase: json.percentBase,
    plan: 'groupBy',
    execution: 'inline',
    cell(row: number, column: number): Cell {
      const at = row * width + column;
      return { weighted: weighted[at]!, respondents: respondents[at]!, sumSqWeights: sumSqWeights[at]!, stability: stabilityOf(respondents[at]!, json.stabilityThresholds) };
    },
  };
  const settings = json.statistics;
  if (settings === undefined) return { result, statistics: undefined };
  const bases = percentBases(result, settings.percentBase);
  const rowShare = Float64Array.from(result.rowTotals, (row, r) => {
    const of = bases.rowShare(r);
    return of === null || of.weighted === 0 ? Number.NaN : row.weighted / of.weighted;
  });
  const groups = (json.columnGroups ?? []).map((group) => ({ variable: group.variable, columns: [...group.columns], letters: [...group.letters] }));
  const columnLetters: Array<string | null> = json.columns.map(() => null);
  for (const group of groups) group.columns.forEach((column, position) => (columnLetters[column] = group.letters[position]!));
  const statistics: TableStatistics = {
    stats: [...settings.stats],
    se: settings.se as StandardErrorMethod,
    test: settings.test as ComparisonMethod,
    correction: settings.correction as Correction,
    alpha: settings.alpha,
    deff: settings.deff as TableStatistics['deff'],
    domain: settings.domain as Domain,
    lonelyPsu: settings.lonelyPsu as LonelyPsu,
    percentBase: settings.percentBase,
    variance: settings.variance as VarianceKind,
    designRespondents: numberOf(settings.designRespondents),
    rowShare,
    groups,
    columnLetters,
  };
  const wanted = new Set(settings.stats);
  for (const figure of FIGURES) {
    if (!wanted.has(figure.stat)) continue;
    const values = new Float64Array(size);
    json.cells.forEach((row, r) => row.forEach((cell, c) => (values[r * width + c] = numberOf(cell[figure.field]))));
    statistics[figure.field] = values;
  }
  if (wanted.has('sig')) statistics.letters = json.cells.flatMap((row) => row.map((cell) => cell.letters ?? ''));
  if (json.comparisons) {
    statistics.comparisons = json.comparisons.map((pair) => ({
      row: pair.row,
      group: pair.group,
      columnA: pair.columnA,
      columnB: pair.columnB,
      difference: numberOf(pair.difference),
      standardError: numberOf(pair.standardError),
      z: numberOf(pair.z),
      pValue: numberOf(pair.pValue),
      adjustedPValue: numberOf(pair.adjustedPValue),
      significant: pair.significant,
      ...(pair.respondentsInBoth === undefined ? {} : { respondentsInBoth: pair.respondentsInBoth }),
    }));
  }
  if (json.raoScott) {
    statistics.raoScott = json.raoScott.map((test) => ({
      rowVariable: test.rowVariable,
      columnVariable: test.columnVariable,
      rows: [...test.rows],
      columns: [...test.columns],
      pearson: numberOf(test.pearson),
      statistic: numberOf(test.statistic),
      ndf: numberOf(test.ndf),
      ddf: numberOf(test.ddf),
      pValue: numberOf(test.pValue),
    }));
  }
  if (json.raoScottNotDefined) statistics.raoScottNotDefined = json.raoScottNotDefined.map((entry) => ({ ...entry }));
  if (json.designEffectNotDefined) statistics.designEffectNotDefined = { ...json.designEffectNotDefined };
  return { result, statistics };
}
