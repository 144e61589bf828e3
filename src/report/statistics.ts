/**
 * The one registry of derived statistics: their names (`options.stats`, `--stats`), the
 * per-cell figures each fills, and how every output format names, labels and prints those
 * figures. JSON cells, CSV and Arrow columns use `field`; text and HTML use `label` and
 * `shown`; tableStatistics() allocates one array per figure of a requested statistic.
 * Adding a statistic: its name and summary here, its figures in FIGURES, its arithmetic
 * in tableStatistics(), and docs/tables.md.
 */
import type { Cell } from '../facade/types.js';
import { CrosstabError, ErrorCode } from '../errors.js';
import { suggest } from '../text/suggest.js';

/** Every derived statistic, in the order reports list them. */
export const STAT_NAMES = ['vpct', 'hpct', 'tpct', 'index', 'ebase', 'deff', 'se', 'moe', 'sig', 'chisq'] as const;

/**
 * A derived statistic: `vpct` vertical (column) proportion, `hpct` horizontal (row)
 * proportion, `tpct` table proportion, `index`, `ebase` Kish effective base of the
 * column, `deff` design effect, `se` standard error of the column proportion, `moe`
 * its 95% margin of error (with `se`/`moe` also those of the cell's weighted total), `sig`
 * column-comparison letters, `chisq` Rao–Scott tests of independence. See docs/tables.md.
 */
export type StatName = (typeof STAT_NAMES)[number];

/** How a figure is printed in the human formats: as a percentage of a proportion or a plain number, with `digits` decimals, `±` for margins. */
export interface FigureDisplay {
  percent: boolean;
  digits: number;
  plusMinus?: boolean;
}

/** The Total column's vertical % / table %: the row's share (TableStatistics.rowShare). */
const rowShare = (_row: Cell, share: number): number => share;

/**
 * The per-cell numeric figures in output order (`sig` letters are text and `chisq` is per
 * table: both are handled apart). `rowTotal` is the figure the text table prints in a row's
 * Total column, when the figure has one there.
 */
export const FIGURES = [
  /** `vpct`: Σw(cell) / Σw(column). */
  { stat: 'vpct', field: 'columnPct', label: 'vertical %', shown: { percent: true, digits: 1 }, rowTotal: rowShare },
  /** `hpct`: Σw(cell) / Σw(row total). */
  { stat: 'hpct', field: 'rowPct', label: 'horizontal %', shown: { percent: true, digits: 1 }, rowTotal: (row: Cell) => (row.weighted === 0 ? Number.NaN : 1) },
  /** `tpct`: Σw(cell) / Σw(base). */
  { stat: 'tpct', field: 'tablePct', label: 'table %', shown: { percent: true, digits: 1 }, rowTotal: rowShare },
  /** `index`: 100 · columnPct / (Σw(row total) / Σw(base)); 100 = average. */
  { stat: 'index', field: 'index', label: 'index', shown: { percent: false, digits: 0 }, rowTotal: (row: Cell, share: number) => (row.weighted === 0 || Number.isNaN(share) ? Number.NaN : 100) },
  /** `ebase`: Kish effective base of the cell's column, (Σw)² / Σw². */
  { stat: 'ebase', field: 'effectiveBase', label: 'effective base', shown: { percent: false, digits: 1 } },
  /** `deff`: design effect of the column proportion (see the `deff` option). */
  { stat: 'deff', field: 'designEffect', label: 'design effect', shown: { percent: false, digits: 2 } },
  /** `se`: standard error of columnPct by the `se` method. */
  { stat: 'se', field: 'columnPctSE', label: 'SE', shown: { percent: true, digits: 2 } },
  /** `moe`: qnorm(0.975) · SE. */
  { stat: 'moe', field: 'columnPctMoE', label: '95% MoE', shown: { percent: true, digits: 2, plusMinus: true } },
  /** `se`: standard error of the cell's Σw (the projected audience, before units) under the design. */
  { stat: 'se', field: 'weightedSE', label: 'SE weighted', shown: { percent: false, digits: 1 } },
  /** `moe`: qnorm(0.975) · weightedSE. */
  { stat: 'moe', field: 'weightedMoE', label: '95% MoE weighted', shown: { percent: false, digits: 1, plusMinus: true } },
] as const satisfies ReadonlyArray<{ stat: StatName; field: string; label: string; shown: FigureDisplay; rowTotal?: (row: Cell, share: number) => number }>;

/** One per-cell figure of the registry. */
export type Figure = (typeof FIGURES)[number];
/** The name of a per-cell figure in TableStatistics, JSON cells, CSV headers and Arrow columns. */
export type FigureField = Figure['field'];
/** The statistics that have per-cell figures. */
export type FigureStat = Figure['stat'];

/** The Total-column figure of `figure` for a row whose share is `share`, or undefined when the figure has none there. */
export function rowTotalFigure(figure: Figure, row: Cell, share: number): number | undefined {
  return 'rowTotal' in figure ? figure.rowTotal(row, share) : undefined;
}

/**
 * Reads `stats` given as a list or `'all'`; the result is in {@link STAT_NAMES} order
 * without repeats. An unknown name is `invalid_option` naming `field`, with near matches.
 */
export function normalizeStats(stats: readonly StatName[] | 'all' | undefined, field = 'options.stats', hint?: string): StatName[] {
  if (stats === undefined || stats === 'all') return [...STAT_NAMES];
  const details = (suggestions?: string[]) => ({ field, ...(suggestions ? { suggestions } : {}), ...(hint === undefined ? {} : { hint }) });
  if (!Array.isArray(stats)) {
    throw new CrosstabError(ErrorCode.invalidOption, `${field} must be 'all' or an array of ${STAT_NAMES.join(', ')}`, details());
  }
  for (const name of stats) {
    if (!(STAT_NAMES as readonly string[]).includes(name)) {
      const near = suggest(String(name), STAT_NAMES);
      const rest = near.length > 0 ? `did you mean "${near[0]}"?` : `use all or a list of ${STAT_NAMES.join(', ')}`;
      throw new CrosstabError(ErrorCode.invalidOption, `${field}: unknown statistic "${String(name)}"; ${rest}`, details(near));
    }
  }
  return STAT_NAMES.filter((name) => stats.includes(name));
}
