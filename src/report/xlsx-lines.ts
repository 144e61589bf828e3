import type { Cell, TableResult } from '../facade/types.js';
import { columnGroups } from './column-groups.js';
import { rowHeadings } from './distinct-labels.js';
import { banners, displayedStats, lettersLegend, markerLegend, missingNote, statisticsNotes, stabilityMarker, varianceLegend, type DisplayOptions } from './display.js';
import { rowTotalFigure, type FigureDisplay } from './statistics.js';
import type { TableStatistics } from './table-statistics.js';

/**
 * A table laid out as spreadsheet lines, format-neutral: the XLSX writer styles them by
 * `kind` and gives each number its `format` (an Excel number format). Numbers stay numbers
 * (percentages as proportions under a % format); a low-base mark is a literal suffix of the
 * number format (`0.0%"*"`), so the value under it is still the figure itself.
 * Columns: A the row label, B the figure's name, C Total, then one per table column.
 */
export interface SheetLine {
  kind: 'title' | 'note' | 'banner' | 'columns' | 'letters' | 'base' | 'heading' | 'label' | 'figure' | 'footnote' | 'blank';
  cells: SheetCell[];
  /** Banner line: runs of columns (0-based sheet columns) to merge. */
  merges?: Array<[number, number]>;
  /** Row height in points, when the row needs more than one line of text (wrapped column labels). */
  height?: number;
}

export interface SheetCell {
  value: string | number | null;
  /** Excel number format of a number. */
  format?: string;
}

/** Columns before the table's first data column: row label, figure name. */
export const LABEL_COLUMNS = 2;
/** What an undefined figure (a zero denominator) shows. */
export const UNDEFINED_TEXT = '–';

/** The banner heading lines over a table's columns: variable labels (merged over their columns), column labels, key letters. */
export function headerLines(result: TableResult, statistics: TableStatistics | undefined, options: DisplayOptions): SheetLine[] {
  const groups = statistics?.groups ?? columnGroups(result.columns);
  const first = LABEL_COLUMNS + 1;
  const bannerCells: SheetCell[] = [text(''), text(''), text('Total'), ...result.columns.map(() => text(''))];
  const merges: Array<[number, number]> = [];
  for (const banner of banners(result, groups, options)) {
    bannerCells[first + banner.columns[0]!] = text(banner.label);
    if (banner.columns.length > 1) merges.push([first + banner.columns[0]!, first + banner.columns.at(-1)!]);
  }
  const lines: SheetLine[] = [
    { kind: 'banner', cells: bannerCells, merges },
    { kind: 'columns', cells: [text(''), text(''), text(''), ...result.columns.map((column) => text(column.label))], ...labelsHeight(result.columns.map((column) => column.label)) },
  ];
  if (statistics?.letters) {
    lines.push({ kind: 'letters', cells: [text(''), text(''), text(''), ...result.columns.map((_, c) => text(statistics.columnLetters[c] ? `(${statistics.columnLetters[c]})` : ''))] });
  }
  return lines;
}

/** Width of a table column in the sheet, in characters of the default font (the writers' widths). */
export const FIGURE_COLUMN_WIDTH = 12;
/** Points per line of the default 11-point font. */
const LINE_HEIGHT = 15;

/**
 * The height of the column-label row: as many lines as the longest label wraps to in a
 * column, so that a label such as "Associate/junior college" is not drawn over the banner
 * line above it (LibreOffice keeps a row's height and draws the wrapped text beyond it).
 */
function labelsHeight(labels: readonly string[]): { height?: number } {
  const lines = Math.max(1, ...labels.map((label) => wrappedLines(label, FIGURE_COLUMN_WIDTH)));
  return lines > 1 ? { height: lines * LINE_HEIGHT } : {};
}

/** Lines a bold label takes when wrapped at spaces in a column `width` characters wide (a word longer than a line is cut). */
export function wrappedLines(label: string, width: number): number {
  // A character short of the width: bold letters are a little wider than the width's unit (a digit of the default font).
  const perLine = Math.max(1, width - 1);
  let lines = 0;
  let used = 0;
  for (const word of label.split(/\s+/).filter((part) => part !== '')) {
    if (lines > 0 && used + 1 + word.length <= perLine) {
      used += 1 + word.length;
      continue;
    }
    lines += Math.ceil(word.length / perLine);
    used = word.length % perLine || perLine;
  }
  return Math.max(1, lines);
}

/**
 * The body of a table: base rows (weighted, respondents), then per row a label line and
 * one line per figure (weighted, respondents, each requested statistic, significance
 * letters), then the footnotes (stability marks, letters, variances, Rao–Scott tests).
 * With `headings` (a single table), a heading line where a row variable's entries start, as
 * the text and HTML tables have: two stubs with the same value labels are told apart. A tab
 * book's table, titled by its one stub, goes without (the line would repeat the title).
 */
export function bodyLines(result: TableResult, statistics: TableStatistics | undefined, headings?: Pick<DisplayOptions, 'variableLabels'>): SheetLine[] {
  const width = result.columns.length;
  const stats = displayedStats(statistics);
  const letters = statistics?.letters;
  const weightedFormat = countFormat(1);
  const lines: SheetLine[] = [];
  const countLine = (kind: SheetLine['kind'], label: string, name: string, total: Cell, cells: readonly Cell[], value: (cell: Cell) => number, format: string): SheetLine => ({
    kind,
    cells: [text(label), text(name), figure(value(total), format, total), ...cells.map((cell) => figure(value(cell), format, cell))],
  });
  lines.push(countLine('base', 'Base', 'Weighted', result.total, result.columnTotals, (cell) => cell.weighted / result.units, weightedFormat));
  lines.push(countLine('base', '', 'Respondents', result.total, result.columnTotals, (cell) => cell.respondents, countFormat(0)));
  const rowHeading = headings && rowHeadings(result, headings.variableLabels);
  result.rows.forEach((row, r) => {
    const heading = rowHeading?.[r];
    if (heading !== undefined) lines.push({ kind: 'heading', cells: [text(heading)] });
    const cells = result.columns.map((_, c) => result.cell(r, c));
    const rowTotal = result.rowTotals[r]!;
    lines.push(countLine('label', row.label, 'Weighted', rowTotal, cells, (cell) => cell.weighted / result.units, weightedFormat));
    lines.push(countLine('figure', '', 'Respondents', rowTotal, cells, (cell) => cell.respondents, countFormat(0)));
    for (const stat of stats) {
      const format = numberFormat(stat.figure.shown);
      const totalFigure = rowTotalFigure(stat.figure, rowTotal, statistics!.rowShare[r]!);
      lines.push({
        kind: 'figure',
        cells: [
          text(''),
          text(capitalize(stat.label)),
          totalFigure === undefined ? text('') : figure(totalFigure, format, rowTotal),
          ...cells.map((cell, c) => figure(stat.values[r * width + c]!, format, cell)),
        ],
      });
    }
    if (letters) lines.push({ kind: 'figure', cells: [text(''), text('Significance'), text(''), ...cells.map((_, c) => (letters[r * width + c] ? { value: letters[r * width + c]!, format: LETTERS_FORMAT } : text('')))] });
  });
  lines.push(...footnotes(result, statistics));
  return lines;
}

function footnotes(result: TableResult, statistics: TableStatistics | undefined): SheetLine[] {
  const notes = [markerLegend(result.stability), capitalize(missingNote(result, statistics)) + '.'];
  if (statistics?.letters) notes.push(lettersLegend(statistics));
  if (statistics && (statistics.columnPctSE || statistics.designEffect || statistics.letters)) notes.push(`Variances: ${varianceLegend(statistics)}`);
  if (statistics) notes.push(...statisticsNotes(statistics));
  return notes.map((note) => ({ kind: 'footnote', cells: [text(note)] }));
}

/** A number under its format, marked `*`/`**` by the cell's stability; undefined figures as `–`. */
function figure(value: number, format: string, cell: Cell): SheetCell {
  if (!Number.isFinite(value)) return text(UNDEFINED_TEXT);
  return { value, format: format + markerSuffix(stabilityMarker(cell.stability)) };
}

/** The marker as literal text, padded (`_*` is the width of a `*`) so that marked and unmarked figures line up. */
function markerSuffix(marker: string): string {
  return (marker ? `"${marker}"` : '') + '_*'.repeat(2 - marker.length);
}

/** Significance letters: text, right-aligned with the figures above them. */
const LETTERS_FORMAT = `@${markerSuffix('')}`;

/** The Excel number format of a registry figure: `0.0%`, `"±"0.00%`, `#,##0.00`. */
export function numberFormat(shown: FigureDisplay): string {
  const base = shown.percent ? `0${decimals(shown.digits)}%` : countFormat(shown.digits);
  return shown.plusMinus ? `"±"${base}` : base;
}

function countFormat(digits: number): string {
  return `#,##0${decimals(digits)}`;
}

function decimals(digits: number): string {
  return digits > 0 ? `.${'0'.repeat(digits)}` : '';
}

/** Text; an empty string is an empty cell. */
function text(value: string): SheetCell {
  return { value: value === '' ? null : value };
}

function capitalize(label: string): string {
  return label.charAt(0).toUpperCase() + label.slice(1);
}
