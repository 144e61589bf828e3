import type { TableResult } from '../facade/types.js';
import { presentFigures } from './cell-figures.js';
import type { TableStatistics } from './table-statistics.js';

/**
 * The table as long CSV (RFC 4180, `\n` line ends): a header, then one line per cell,
 * rows outer, columns inner. Columns: `row`, `rowLabel`, `rowExpr`, `column`,
 * `columnLabel`, `columnExpr`, `columnLetter`, `weighted`, `respondents`,
 * `sumSqWeights`, `stability`, then the figure of each requested statistic, named and
 * ordered as the statistics registry (FIGURES: `columnPct` … `weightedSE`, `weightedMoE`),
 * then `letters`. Indexes are 0-based, percentages proportions (0–1), numbers in
 * shortest round-trip form, undefined figures empty. A label or expression that a
 * spreadsheet would run as a formula (it starts with `=`, `+`, `-`, `@`, a tab or a carriage
 * return, and is not a plain number) is written with a leading `'`, so that it opens as text
 * (LibreOffice and Excel show the `'`); so is one that starts with `'`s before such a
 * character, so that the guard reads back: a field whose `'`s are followed by one of them
 * and is not a plain number is the label with its first `'` taken off.
 */
export function tableToCSV(result: TableResult, statistics?: TableStatistics): string {
  const { header, lines } = tableCSVLines(result, statistics);
  return `${[header, ...lines].join('\n')}\n`;
}

/**
 * The header and the cell lines of tableToCSV(), each one CSV record (a label's line break
 * stays inside its quoted field, so a record is not a line of the text).
 */
export function tableCSVLines(result: TableResult, statistics?: TableStatistics): { header: string; lines: string[] } {
  const figures = presentFigures(statistics);
  const header = [
    'row',
    'rowLabel',
    'rowExpr',
    'column',
    'columnLabel',
    'columnExpr',
    'columnLetter',
    'weighted',
    'respondents',
    'sumSqWeights',
    'stability',
    ...figures.map((figure) => figure.field),
    ...(statistics?.letters ? ['letters'] : []),
  ];
  const lines: string[] = [];
  const width = result.columns.length;
  result.rows.forEach((row, r) => {
    result.columns.forEach((column, c) => {
      const at = r * width + c;
      const cell = result.cell(r, c);
      const fields = [
        String(r),
        quote(row.label),
        quote(row.expr),
        String(c),
        quote(column.label),
        quote(column.expr),
        statistics?.columnLetters[c] ?? '',
        number(cell.weighted),
        String(cell.respondents),
        number(cell.sumSqWeights),
        cell.stability,
        ...figures.map((figure) => number(figure.values[at]!)),
        ...(statistics?.letters ? [statistics.letters[at]!] : []),
      ];
      lines.push(fields.join(','));
    });
  });
  return { header: header.join(','), lines };
}

function number(value: number): string {
  return Number.isFinite(value) ? String(value) : '';
}

/** Quotes a field when it holds a comma, quote, line break or leading/trailing space; a formula is made text. */
function quote(text: string): string {
  const field = inertText(text);
  return /[",\r\n]|^\s|\s$/.test(field) ? `"${field.replace(/"/g, '""')}"` : field;
}

/**
 * A text field as a spreadsheet shows it without running it: a leading `'` before what would
 * start a formula, and before a text whose leading `'`s come before such a start (`'=x` is
 * written `''=x`, so that it is not read back as `=x`).
 */
export function inertText(text: string): string {
  const rest = text.replace(/^'+/, '');
  return /^[=+\-@\t\r]/.test(rest) && !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(rest) ? `'${text}` : text;
}
