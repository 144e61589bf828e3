import type { Cell, TableResult } from '../facade/types.js';
import { columnGroups } from './column-groups.js';
import { rowHeadings } from './distinct-labels.js';
import {
  banners,
  displayedStats,
  formatCount,
  lettersLegend,
  markerLegend,
  missingNote,
  stabilityMarker,
  type DisplayOptions, statisticsNotes, varianceLegend } from './display.js';
import { rowTotalFigure } from './statistics.js';
import type { TableStatistics } from './table-statistics.js';
import { displayWidth, padEndDisplay, padStartDisplay, truncateDisplay } from './display-width.js';
import { terminalText } from '../text/terminal-text.js';

const SEPARATOR = ' │ ';

/**
 * The table as plain text for a terminal: a banner line per column group, column
 * labels and key letters, then (under a heading line where a row variable's entries start)
 * per row a block of lines (weighted audience =
 * Σw / units, respondents, each requested statistic, significance letters), a
 * "Total" column (base AND row) and a "Base" block (base AND column). Every
 * figure of an unstable cell carries `*` (caution) or `**` (very unstable); the
 * legend follows the table.
 */
export function tableToText(result: TableResult, statistics?: TableStatistics, options: DisplayOptions = {}): string {
  const width = result.columns.length;
  const groups = statistics?.groups ?? columnGroups(result.columns);
  const stats = displayedStats(statistics);
  const letters = statistics?.letters;

  // Each body line: [row label, stat label, Total figure, ...column figures].
  const body: string[][] = [];
  const figureLines = (
    label: string,
    cells: Cell[],
    total: Cell,
    statValue: ((stat: (typeof stats)[number], column: number) => number) | undefined,
    totalValue: (stat: (typeof stats)[number]) => string,
    letterOf?: (column: number) => string,
  ) => {
    const mark = (text: string, cell: Cell) => text + markerPad(stabilityMarker(cell.stability));
    body.push([label, 'weighted', mark(formatCount(total.weighted / result.units), total), ...cells.map((cell) => mark(formatCount(cell.weighted / result.units), cell))]);
    body.push(['', 'respondents', mark(formatCount(total.respondents, 0), total), ...cells.map((cell) => mark(formatCount(cell.respondents, 0), cell))]);
    if (statValue === undefined) return;
    for (const stat of stats) {
      body.push(['', stat.label, totalValue(stat), ...cells.map((cell, c) => mark(stat.format(statValue(stat, c)), cell))]);
    }
    if (letterOf) body.push(['', 'significance', '', ...cells.map((cell, c) => letterOf(c) + markerPad(''))]);
  };

  figureLines('Base', result.columnTotals, result.total, undefined, () => '');
  // A heading line where a row variable's entries start (body line index -> heading), as over the columns.
  const rowHeading = rowHeadings(result, options.variableLabels);
  const headings = new Map<number, string>();
  result.rows.forEach((row, r) => {
    if (rowHeading[r] !== undefined) headings.set(body.length, rowHeading[r]!);
    const cells = result.columns.map((_, c) => result.cell(r, c));
    const rowTotal = result.rowTotals[r]!;
    figureLines(
      terminalText(row.label),
      cells,
      rowTotal,
      (stat, c) => stat.values[r * width + c]!,
      (stat) => {
        const figure = rowTotalFigure(stat.figure, rowTotal, statistics!.rowShare[r]!);
        return figure === undefined ? '' : stat.format(figure) + markerPad(stabilityMarker(rowTotal.stability));
      },
      letters ? (c) => letters[r * width + c]! : undefined,
    );
  });

  const heads = banners(result, groups, options);
  const header: string[][] = [['', '', 'Total', ...result.columns.map((column) => terminalText(column.label))]];
  if (letters) header.push(['', '', '', ...result.columns.map((_, c) => (statistics?.columnLetters[c] ? `(${statistics.columnLetters[c]})` : ''))]);
  const all = [...header, ...body];
  const widths = all[0]!.map((_, i) => Math.max(...all.map((line) => displayWidth(line[i]!))));
  // Text column i >= 3 is table column i - 3; a rule opens the Total column and each banner.
  const opensBlock = new Set([2, ...heads.map((banner) => banner.columns[0]! + 3)]);
  const join = (cells: string[], gap: string, rule: string) => cells.map((cell, i) => (i === 0 ? '' : opensBlock.has(i) ? rule : gap) + cell).join('');
  const render = (line: string[]) => join(line.map((text, i) => (i < 2 ? padEndDisplay(text, widths[i]!) : padStartDisplay(text, widths[i]!))), '  ', SEPARATOR).trimEnd();
  const bannerLine = () => {
    const cells = widths.map((w) => ' '.repeat(w));
    for (const banner of heads) {
      const first = banner.columns[0]! + 3;
      const span = banner.columns.reduce((sum, c) => sum + widths[c + 3]!, 0) + 2 * (banner.columns.length - 1);
      cells[first] = padEndDisplay(truncateDisplay(terminalText(banner.label), span), span);
      for (const c of banner.columns.slice(1)) cells[c + 3] = '';
    }
    return cells.map((cell, i) => (i === 0 ? '' : opensBlock.has(i) ? SEPARATOR : cell === '' ? '' : '  ') + cell).join('').trimEnd();
  };
  const ruleLine = join(widths.map((w) => '─'.repeat(w)), '──', '─┼─');

  const lines: string[] = [];
  if (options.title) lines.push(terminalText(options.title));
  lines.push(`base ${terminalText(result.base)} · weight ${terminalText(result.weight ?? 'none (unweighted)')} · units ${result.units} · ${formatCount(result.total.respondents, 0)} respondents`);
  lines.push(missingNote(result, statistics));
  lines.push('');
  lines.push(bannerLine());
  for (const line of header) lines.push(render(line));
  lines.push(ruleLine);
  let previousLabel = '';
  body.forEach((line, i) => {
    if (line[0] !== '' && previousLabel !== '') lines.push('');
    if (headings.has(i)) lines.push(terminalText(headings.get(i)!));
    if (line[0] !== '') previousLabel = line[0]!;
    lines.push(render(line));
  });
  lines.push('');
  lines.push(markerLegend(result.stability));
  if (statistics && letters) lines.push(lettersLegend(statistics));
  if (stats.some((stat) => stat.stat === 'se' || stat.stat === 'moe')) {
    const method = statistics!.se === 'kish' ? 'Kish effective base' : varianceLegend(statistics!);
    lines.push(`SE, 95% MoE: of the vertical %, in percentage points (${method}); "weighted" lines: of the weighted sum`);
  }
  if (statistics) lines.push(...statisticsNotes(statistics));
  return `${lines.join('\n')}\n`;
}

/** Markers take a fixed 3 characters so figures stay aligned. */
function markerPad(marker: string): string {
  return marker.padStart(3);
}
