import type { StabilityLevel, TableResult } from '../facade/types.js';
import { columnGroups } from './column-groups.js';
import { rowHeadings } from './distinct-labels.js';
import { banners, displayedStats, formatCount, lettersLegend, markerLegend, missingNote, raoScottLines, stabilityMarker, statisticsNotes, varianceLegend, type DisplayOptions } from './display.js';
import { rowTotalFigure, type FigureStat } from './statistics.js';
import type { TableStatistics } from './table-statistics.js';

/** One figure of a banner line: its value (NaN where undefined), its text with the low-base mark, and on the vertical % line the significance letters. */
export interface BannerFigure {
  value: number;
  text: string;
  /** The respondents of the cell (or margin) the figure is of, and their stability. */
  respondents: number;
  stability: StabilityLevel;
  letters?: string;
  /** The cell's index (vertical % line, when the index was computed). */
  index?: number;
}

/** One line of the banner table: a figure's name, its Total-column figure (absent when the figure has none there) and one per column. */
export interface BannerLine {
  /** `weighted`, `respondents`, or the statistic the figure is of. */
  kind: 'weighted' | 'respondents' | FigureStat;
  /** As the XLSX names the line: `Weighted`, `Respondents`, `Vertical %`. */
  name: string;
  total?: BannerFigure;
  cells: BannerFigure[];
}

/** The table laid out as the tab book lays it out (crosstab table --format xlsx), as text and values for any page. */
export interface BannerLayout {
  /** Over the columns: each compared variable's label spanning its columns, stand-alone columns alone (label ''). */
  banners: Array<{ label: string; columns: number[] }>;
  columns: Array<{ label: string; expr: string; letter: string | null }>;
  /** The base lines: weighted (in report units) and respondents, Total then each column. */
  bases: BannerLine[];
  /** Per row: a heading when a row variable starts, the row's label and one line per figure. */
  rows: Array<{ row: number; heading?: string; label: string; expr: string; lines: BannerLine[] }>;
  /** The footnotes of the XLSX: low-base marks, what percentages are of, letters, variances. */
  notes: string[];
  /** With chisq: one line per Rao–Scott test (or per group without one). */
  raoScott: string[];
}

/**
 * The banner table of `result`: a Total column, the banner variables' labels over their
 * columns, the base lines (weighted, respondents), then per row one line per figure
 * (weighted, respondents, each requested statistic in the registry's order), the
 * significance letters beside the vertical %; the figures as the XLSX holds them (the Total
 * column's where the figure has one there), the texts as the text output prints them.
 */
export function bannerLayout(result: TableResult, statistics: TableStatistics | undefined, display: DisplayOptions = {}): BannerLayout {
  const width = result.columns.length;
  const groups = statistics?.groups ?? columnGroups(result.columns);
  const stats = displayedStats(statistics);
  const letters = statistics?.letters;
  const marked = (text: string, stability: StabilityLevel) => (text === '–' ? text : text + stabilityMarker(stability));
  const count = (value: number, digits: number, cell: { respondents: number; stability: StabilityLevel }): BannerFigure => ({
    value,
    text: marked(formatCount(value, digits), cell.stability),
    respondents: cell.respondents,
    stability: cell.stability,
  });
  const bases: BannerLine[] = [
    { kind: 'weighted', name: 'Weighted', total: count(result.total.weighted / result.units, 1, result.total), cells: result.columnTotals.map((cell) => count(cell.weighted / result.units, 1, cell)) },
    { kind: 'respondents', name: 'Respondents', total: count(result.total.respondents, 0, result.total), cells: result.columnTotals.map((cell) => count(cell.respondents, 0, cell)) },
  ];
  const headings = rowHeadings(result, display.variableLabels);
  const rows = result.rows.map((entry, r) => {
    const cells = result.columns.map((_, c) => result.cell(r, c));
    const rowTotal = result.rowTotals[r]!;
    const lines: BannerLine[] = [
      { kind: 'weighted', name: 'Weighted', total: count(rowTotal.weighted / result.units, 1, rowTotal), cells: cells.map((cell) => count(cell.weighted / result.units, 1, cell)) },
      { kind: 'respondents', name: 'Respondents', total: count(rowTotal.respondents, 0, rowTotal), cells: cells.map((cell) => count(cell.respondents, 0, cell)) },
    ];
    for (const stat of stats) {
      const totalValue = rowTotalFigure(stat.figure, rowTotal, statistics!.rowShare[r]!);
      const figure = (value: number, cell: { respondents: number; stability: StabilityLevel }, c?: number): BannerFigure => {
        const out: BannerFigure = { value, text: marked(stat.format(value), cell.stability), respondents: cell.respondents, stability: cell.stability };
        if (c !== undefined && stat.stat === 'vpct') {
          if (letters?.[r * width + c]) out.letters = letters[r * width + c]!;
          if (statistics!.index) out.index = statistics!.index[r * width + c]!;
        }
        return out;
      };
      lines.push({
        kind: stat.stat,
        name: capitalize(stat.label),
        ...(totalValue === undefined ? {} : { total: figure(totalValue, rowTotal) }),
        cells: cells.map((cell, c) => figure(stat.values[r * width + c]!, cell, c)),
      });
    }
    const heading = headings[r];
    return { row: r, ...(heading === undefined ? {} : { heading }), label: entry.label, expr: entry.expr, lines };
  });
  const notes = [markerLegend(result.stability), capitalize(missingNote(result, statistics)) + '.'];
  if (letters) notes.push(capitalize(lettersLegend(statistics!)) + '.');
  if (statistics && (statistics.columnPctSE || statistics.designEffect || letters)) notes.push(`Variances: ${varianceLegend(statistics)}.`);
  const raoScott = statistics ? raoScottLines(statistics) : [];
  if (statistics) notes.push(...statisticsNotes(statistics).filter((line) => !raoScott.includes(line)).map((line) => `${line}.`));
  return {
    banners: banners(result, groups, display).map((banner) => ({ label: banner.label, columns: banner.columns })),
    columns: result.columns.map((column, c) => ({ label: column.label, expr: column.expr, letter: statistics?.columnLetters[c] ?? null })),
    bases,
    rows,
    notes,
    raoScott,
  };
}

function capitalize(label: string): string {
  return label.charAt(0).toUpperCase() + label.slice(1);
}
