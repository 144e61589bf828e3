/**
 * The one registry of derived statistics: their names (`options.stats`, `--stats`), the
 * per-cell figures each fills, and how every output format names, labels and prints those
 * figures. JSON cells, CSV and Arrow columns use `field` (the REST API's OpenAPI document
 * describes it by `description`); text and HTML use `label` and `shown`; tableStatistics() allocates one array per figure of a requested statistic.
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
  { stat: 'vpct', field: 'columnPct', description: 'vpct: the column proportion, Σw(cell) / Σw(column) (0-1).', label: 'vertical %', shown: { percent: true, digits: 1 }, rowTotal: rowShare },
  { stat: 'hpct', field: 'rowPct', description: 'hpct: the row proportion, Σw(cell) / Σw(row total) (0-1).', label: 'horizontal %', shown: { percent: true, digits: 1 }, rowTotal: (row: Cell) => (row.weighted === 0 ? Number.NaN : 1) },
  { stat: 'tpct', field: 'tablePct', description: 'tpct: the table proportion, Σw(cell) / Σw(base) (0-1).', label: 'table %', shown: { percent: true, digits: 1 }, rowTotal: rowShare },
  { stat: 'index', field: 'index', description: 'index: 100 · columnPct / (Σw(row total) / Σw(base)); 100 = average.', label: 'index', shown: { percent: false, digits: 0 }, rowTotal: (row: Cell, share: number) => (row.weighted === 0 || Number.isNaN(share) ? Number.NaN : 100) },
  { stat: 'ebase', field: 'effectiveBase', description: "ebase: the Kish effective base of the cell's column, (Σw)² / Σw².", label: 'effective base', shown: { percent: false, digits: 1 } },
  { stat: 'deff', field: 'designEffect', description: 'deff: the design effect of the column proportion.', label: 'design effect', shown: { percent: false, digits: 2 } },
  { stat: 'se', field: 'columnPctSE', description: 'se: the standard error of columnPct (0-1).', label: 'SE', shown: { percent: true, digits: 2 } },
  { stat: 'moe', field: 'columnPctMoE', description: 'moe: the 95% margin of error of columnPct, qnorm(0.975) · columnPctSE (0-1).', label: '95% MoE', shown: { percent: true, digits: 2, plusMinus: true } },
  { stat: 'se', field: 'weightedSE', description: "se: the standard error of the cell's weighted (Σw, before units) under the survey design.", label: 'SE weighted', shown: { percent: false, digits: 1 } },
  { stat: 'moe', field: 'weightedMoE', description: 'moe: the 95% margin of error of weighted, qnorm(0.975) · weightedSE.', label: '95% MoE weighted', shown: { percent: false, digits: 1, plusMinus: true } },
] as const satisfies ReadonlyArray<{ stat: StatName; field: string; description: string; label: string; shown: FigureDisplay; rowTotal?: (row: Cell, share: number) => number }>;

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
