import type { WriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import type { TableResult } from '../facade/types.js';
import type { DisplayOptions } from './display.js';
import { tabbookTitle, type Tabbook, type TabbookLayout, type TabbookTable } from './tabbook-model.js';
import type { TableStatistics } from './table-statistics.js';
import { bodyLines, FIGURE_COLUMN_WIDTH, headerLines, LABEL_COLUMNS, type SheetLine } from './xlsx-lines.js';
import { XlsxBook, type XlsxSheet } from './xlsx-writer.js';
import { xmlText } from '../text/xml-text.js';
import { nameText } from '../text/expression-text.js';
import { bannerItems, distinctLabels } from './distinct-labels.js';

/** Name of the index sheet, and of the one sheet of the `long` layout. */
export const INDEX_SHEET = 'Index';
export const LONG_SHEET = 'Tables';

/**
 * A tab book as XLSX on `stream`: an index sheet linking every table, then the tables,
 * one sheet each (`sheets`) or one under the other on one sheet under one frozen banner
 * (`long`). Every table has its base rows, weighted and respondent counts, the requested
 * statistics as numbers under number formats, significance letters and its footnotes.
 */
export async function writeTabbookXLSX(book: Tabbook, stream: WriteStream, layout: TabbookLayout): Promise<void> {
  const xlsx = new XlsxBook(stream);
  const display = { variableLabels: book.variableLabels };
  const first = book.tables[0];
  const header = first ? headerLines(first.result, first.statistics, display) : [];
  const targets = layout === 'sheets' ? book.tables.map((table) => `${quoteSheet(sheetName(table))}!A1`) : longTargets(book, header.length);
  await writeIndex(xlsx, book, targets);
  if (layout === 'sheets') {
    for (const table of book.tables) {
      const sheet = xlsx.sheet(sheetName(table), tableWidths(book.banner.length), { rows: 2 + header.length, columns: LABEL_COLUMNS });
      await sheet.write([titleLine(table), noteLine(book, table.result)]);
      await sheet.write(headerLines(table.result, table.statistics, display));
      await sheet.write(bodyLines(table.result, table.statistics));
      sheet.commit();
    }
  } else {
    const sheet = xlsx.sheet(LONG_SHEET, tableWidths(book.banner.length), { rows: 2 + header.length, columns: LABEL_COLUMNS });
    await sheet.write([{ kind: 'title', cells: [{ value: book.title }] }, noteLine(book, first?.result)]);
    await sheet.write(header);
    for (const table of book.tables) {
      await sheet.write([BLANK, titleLine(table)]);
      await sheet.write(bodyLines(table.result, table.statistics));
    }
    sheet.commit();
  }
  await xlsx.close();
}

/** One table as an XLSX workbook of one sheet on `stream` (`crosstab table --format xlsx`, tableToXLSX). */
export async function writeTableXLSX(result: TableResult, statistics: TableStatistics | undefined, display: DisplayOptions, stream: Writable): Promise<void> {
  const xlsx = new XlsxBook(stream);
  const header = headerLines(result, statistics, display);
  const sheet = xlsx.sheet('Table', tableWidths(result.columns.length), { rows: 2 + header.length, columns: LABEL_COLUMNS });
  await sheet.write([
    { kind: 'title', cells: [{ value: display.title ?? `Crosstab of ${result.base}` }] },
    { kind: 'note', cells: [{ value: baseText(result.base, result.weight, result) }] },
  ]);
  await sheet.write(header);
  await sheet.write(bodyLines(result, statistics, display));
  sheet.commit();
  await xlsx.close();
}

/** Row label, figure name, Total, then the table's columns. */
function tableWidths(columns: number): number[] {
  return [34, 14, FIGURE_COLUMN_WIDTH, ...Array.from({ length: columns }, () => FIGURE_COLUMN_WIDTH)];
}

const BLANK: SheetLine = { kind: 'blank', cells: [] };

/** The sheet of a table: `T12 degree`, within Excel's 31 characters and without the characters it refuses. */
export function sheetName(table: TabbookTable): string {
  // Cut at 31 UTF-16 units, then without what XML cannot hold (control characters, half of a pair cut in two).
  return xmlText(`T${table.number} ${table.stub}`.replace(/[[\]:*?/\\'!]/g, '_').slice(0, 31)).trimEnd();
}

function quoteSheet(name: string): string {
  return `'${name.replace(/'/g, "''")}'`;
}

function titleLine(table: TabbookTable): SheetLine {
  return { kind: 'title', cells: [{ value: `Table ${table.number}: ${tabbookTitle(table)}` }] };
}

function noteLine(book: Tabbook, result: TableResult | undefined): SheetLine {
  return { kind: 'note', cells: [{ value: baseText(book.base, book.weight, result) }] };
}

function baseText(base: string, weight: string | null, result: TableResult | undefined): string {
  const units = result && result.units !== 1 ? ` · weighted counts in units of ${result.units}` : '';
  return `Base: ${base === '*' ? 'all respondents' : base} · weight ${weight ?? 'none (unweighted)'}${units}`;
}

/** In the long layout, each table's title cell: after the book's title, note and banner, a blank line and the title per table. */
function longTargets(book: Tabbook, headerRows: number): string[] {
  let row = 2 + headerRows + 1;
  return book.tables.map((table) => {
    row += 1;
    const target = `${quoteSheet(LONG_SHEET)}!A${row}`;
    row += bodyLines(table.result, table.statistics).length + 1;
    return target;
  });
}

async function writeIndex(xlsx: XlsxBook, book: Tabbook, targets: readonly string[]): Promise<void> {
  const sheet: XlsxSheet = xlsx.sheet(INDEX_SHEET, [12, 14, 48, 8], { rows: 0, columns: 0 });
  // One banner item a line, each in a cell of its own: an item with a comma (`degree=3,4`) reads back as one.
  // A variable by its name as an expression reads it (`"NOT"`, `"two words"`), as crosstab info lists it;
  // codes and expressions by their labels, followed by the expression where two read the same.
  const banner = distinctLabels(
    bannerItems(book.banner, book.variableLabels).map((item) => {
      if (item.variable === undefined) return item;
      const text = book.variableLabels[item.variable] ? `${item.label} (${item.name})` : item.name;
      return { label: text, name: text };
    }),
  );
  // Stubs labelled alike, each by its variable's name as well: the index tells every table apart.
  const titles = distinctLabels(book.tables.map((table) => ({ label: table.title, name: nameText(table.stub) })));
  await sheet.write([
    { kind: 'title', cells: [{ value: book.title }] },
    noteLine(book, book.tables[0]?.result),
    ...['Total', ...banner].map((item, i): SheetLine => ({ kind: 'note', cells: [{ value: i === 0 ? 'Banner:' : null }, { value: item }] })),
    BLANK,
    { kind: 'columns', cells: ['Table', 'Variable', 'Title', 'Rows'].map((value) => ({ value })) },
  ]);
  for (const [i, table] of book.tables.entries()) {
    await sheet.link([`Table ${table.number}`, nameText(table.stub), titles[i]!, table.result.rows.length], 0, targets[i]!);
  }
  if (book.skipped.length > 0) {
    await sheet.write([BLANK, ...book.skipped.map((skip): SheetLine => ({ kind: 'footnote', cells: [{ value: `Not tabulated: ${nameText(skip.variable)} (${skip.reason})` }] }))]);
  }
  sheet.commit();
}
