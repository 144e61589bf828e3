import type { AxisEntry, Cell, MissingMode, PercentBase, StabilityLevel, StabilityThresholds, TableResult } from '../facade/types.js';
import { missingNote } from './display.js';
import { finiteOrNull, presentFigures } from './cell-figures.js';
import type { RaoScottNotDefined, RaoScottTest } from './rao-scott-tests.js';
import type { FigureField, StatName } from './statistics.js';
import type { TableStatistics } from './table-statistics.js';

/** An axis entry as JSON (the table's entry as it is); columns also carry their comparison group and key letter. */
export interface TableJsonAxisEntry extends AxisEntry {
  /** Index into `columnGroups` (columns only, when the column is compared). */
  group?: number;
  /** Key letter within the group (columns only, when the column is compared). */
  letter?: string;
}

/** The requested per-cell figures of {@link FIGURES} (`columnPct` ... `weightedMoE`), null where undefined. */
export type TableJsonFigures = { [Field in FigureField]?: number | null };

/** One cell as JSON: sums, stability and the requested statistics (proportions 0–1; null = undefined). */
export interface TableJsonCell extends TableJsonFigures {
  weighted: number;
  respondents: number;
  sumSqWeights: number;
  stability: StabilityLevel;
  /** Letters of the columns of its group this cell is significantly greater than. */
  letters?: string;
}

export interface TableJsonComparison {
  row: number;
  group: number;
  columnA: number;
  columnB: number;
  difference: number | null;
  standardError: number | null;
  z: number | null;
  pValue: number | null;
  adjustedPValue: number | null;
  significant: boolean;
  /** Columns that may share respondents: those in both columns' denominators (their covariance is in the SE). */
  respondentsInBoth?: number;
}

/** The `crosstab table --format json` document; see docs/tables.md. */
export interface TableJson {
  base: string;
  weight: string | null;
  units: number;
  stabilityThresholds: StabilityThresholds;
  /** `show`: expanded variables have a "No answer" entry when the base has blanks; `hide`: not. */
  missing: MissingMode;
  /** What the percentages are of: `total` or `valid` (those who answered); statistics.percentBase when computed. */
  percentBase: PercentBase;
  /** The same in words, as the text and HTML outputs print it. */
  missingNote: string;
  rows: TableJsonAxisEntry[];
  columns: TableJsonAxisEntry[];
  /** cells[row][column]. */
  cells: TableJsonCell[][];
  rowTotals: Cell[];
  columnTotals: Cell[];
  total: Cell;
  statistics?: {
    stats: StatName[];
    se: string;
    test: string;
    correction: string;
    alpha: number;
    deff: string;
    /** Simple design: N of N/(N−1); null for Taylor and replicate designs. */
    designRespondents: number | null;
    domain: string;
    lonelyPsu: string;
    /** `simple`, `taylor` or `replicate`. */
    variance: string;
    /** `total` or `valid`. */
    percentBase: PercentBase;
  };
  columnGroups?: Array<{ variable: string | null; columns: number[]; letters: string[] }>;
  comparisons?: TableJsonComparison[];
  /** With `chisq`: Rao–Scott tests of independence. */
  raoScott?: TableJsonRaoScott[];
  /** With `chisq`: column groups (indexes into columnGroups) with no Rao–Scott test, and why. */
  raoScottNotDefined?: RaoScottNotDefined[];
  /** Why every design effect is null, when one is (see TableStatistics.designEffectNotDefined). */
  designEffectNotDefined?: { reason: 'zero-weights'; respondents: number };
}

export interface TableJsonRaoScott {
  rowVariable: string;
  columnVariable: string;
  rows: number[];
  columns: number[];
  pearson: number | null;
  statistic: number | null;
  ndf: number | null;
  ddf: number | null;
  pValue: number | null;
}

/** A Rao–Scott test as JSON (NaN as null). */
export function raoScottJson(test: RaoScottTest): TableJsonRaoScott {
  return {
    rowVariable: test.rowVariable,
    columnVariable: test.columnVariable,
    rows: [...test.rows],
    columns: [...test.columns],
    pearson: finiteOrNull(test.pearson),
    statistic: finiteOrNull(test.statistic),
    ndf: finiteOrNull(test.ndf),
    ddf: finiteOrNull(test.ddf),
    pValue: finiteOrNull(test.pValue),
  };
}

/**
 * A table and its statistics as one plain JSON-ready object: `cells[row][column]`,
 * percentages as proportions, `weighted` as the raw sum of weights (divide by
 * `units` for the projected audience), NaN/Infinity as null.
 */
export function tableToJSON(result: TableResult, statistics?: TableStatistics): TableJson {
  const figures = presentFigures(statistics);
  const width = result.columns.length;
  const cells = result.rows.map((_, r) =>
    result.columns.map((__, c) => {
      const at = r * width + c;
      const sums = result.cell(r, c);
      const cell: TableJsonCell = { weighted: sums.weighted, respondents: sums.respondents, sumSqWeights: sums.sumSqWeights, stability: sums.stability };
      for (const figure of figures) cell[figure.field] = finiteOrNull(figure.values[at]!);
      if (statistics?.letters) cell.letters = statistics.letters[at]!;
      return cell;
    }),
  );
  const json: TableJson = {
    base: result.base,
    weight: result.weight,
    units: result.units,
    stabilityThresholds: { ...result.stability },
    missing: result.missing,
    percentBase: statistics?.percentBase ?? result.percentBase,
    missingNote: missingNote(result, statistics),
    rows: result.rows.map((entry) => ({ ...entry })),
    columns: result.columns.map((entry, c) => {
      const letter = statistics?.columnLetters[c];
      if (statistics === undefined || letter === null || letter === undefined) return { ...entry };
      return { ...entry, group: statistics.groups.findIndex((group) => group.columns.includes(c)), letter };
    }),
    cells,
    rowTotals: result.rowTotals.map((cell) => ({ ...cell })),
    columnTotals: result.columnTotals.map((cell) => ({ ...cell })),
    total: { ...result.total },
  };
  if (statistics === undefined) return json;
  const { stats, se, test, correction, alpha, deff, designRespondents, domain, lonelyPsu, variance, percentBase } = statistics;
  json.statistics = { stats, se, test, correction, alpha, deff, designRespondents: finiteOrNull(designRespondents), domain, lonelyPsu, variance, percentBase };
  if (statistics.raoScott) json.raoScott = statistics.raoScott.map(raoScottJson);
  if (statistics.raoScottNotDefined && statistics.raoScottNotDefined.length > 0) json.raoScottNotDefined = statistics.raoScottNotDefined.map((entry) => ({ ...entry }));
  if (statistics.designEffectNotDefined) json.designEffectNotDefined = { ...statistics.designEffectNotDefined };
  json.columnGroups = statistics.groups.map((group) => ({ variable: group.variable, columns: [...group.columns], letters: [...group.letters] }));
  if (statistics.comparisons) {
    json.comparisons = statistics.comparisons.map((pair) => ({
      row: pair.row,
      group: pair.group,
      columnA: pair.columnA,
      columnB: pair.columnB,
      difference: finiteOrNull(pair.difference),
      standardError: finiteOrNull(pair.standardError),
      z: finiteOrNull(pair.z),
      pValue: finiteOrNull(pair.pValue),
      adjustedPValue: finiteOrNull(pair.adjustedPValue),
      significant: pair.significant,
      ...(pair.respondentsInBoth === undefined ? {} : { respondentsInBoth: pair.respondentsInBoth }),
    }));
  }
  return json;
}
