import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Writable } from 'node:stream';
import ExcelJS from 'exceljs';
import { CrosstabError, ErrorCode } from '../errors.js';
import type { SheetCell, SheetLine } from './xlsx-lines.js';
import { hasXstringEscape, xmlText, xstringText } from '../text/xml-text.js';

type Worksheet = ExcelJS.Worksheet;
type Fill = ExcelJS.Fill;

const GREY: Fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFEDEDED' } };
const LIGHT: Fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFF7F7F7' } };
const LINK: Partial<ExcelJS.Style> = { font: { color: { argb: 'FF0563C1' }, underline: true } };
const RULE = { top: { style: 'thin', color: { argb: 'FFBFBFBF' } } } as const;
/** Rows written between two turns of the event loop, which lets the zip stream drain what was written. */
const ROWS_PER_TURN = 256;

/**
 * A streaming XLSX workbook (exceljs WorkbookWriter): rows go to the zip stream as they are
 * committed, so memory stays bounded whatever the size of the book.
 */
export class XlsxBook {
  private readonly workbook: ExcelJS.stream.xlsx.WorkbookWriter;
  private rowsSinceTurn = 0;

  constructor(stream: Writable) {
    this.workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream, useStyles: true, useSharedStrings: false });
    this.workbook.creator = 'crosstab-engine';
  }

  /** A new sheet with columns of these widths and the first rows and columns frozen; the previous sheet must be committed. */
  sheet(name: string, widths: readonly number[], frozen: { rows: number; columns: number }): XlsxSheet {
    const views: Array<Partial<ExcelJS.WorksheetView>> = [
      frozen.rows > 0 || frozen.columns > 0 ? { state: 'frozen', xSplit: frozen.columns, ySplit: frozen.rows, showGridLines: false } : { showGridLines: false },
    ];
    // Printed (and converted to PDF) landscape, as wide as one page, the heading rows on every page.
    const pageSetup: Partial<ExcelJS.PageSetup> = { orientation: 'landscape', fitToPage: true, fitToWidth: 1, fitToHeight: 0, ...(frozen.rows > 0 ? { printTitlesRow: `1:${frozen.rows}` } : {}) };
    const worksheet = this.workbook.addWorksheet(name, { views, pageSetup });
    worksheet.columns = widths.map((width) => ({ width }));
    return new XlsxSheet(worksheet, () => this.turn());
  }

  /** Finishes the zip: every sheet committed, the workbook parts written. */
  async close(): Promise<void> {
    await this.workbook.commit();
  }

  private async turn(): Promise<void> {
    if (++this.rowsSinceTurn < ROWS_PER_TURN) return;
    this.rowsSinceTurn = 0;
    await yieldToLoop();
  }
}

export class XlsxSheet {
  /** 1-based number of the next row. */
  next = 1;

  constructor(
    private readonly worksheet: Worksheet,
    private readonly turn: () => Promise<void>,
  ) {}

  /** Writes lines, styled by kind; returns the row number of the first. */
  async write(lines: readonly SheetLine[]): Promise<number> {
    const first = this.next;
    for (const line of lines) {
      const row = this.worksheet.addRow(line.cells.map((cell) => cellValue(cell.value)));
      line.cells.forEach((cell, i) => style(row.getCell(i + 1), cell, line.kind, i));
      for (const [from, to] of line.merges ?? []) this.worksheet.mergeCells(this.next, from + 1, this.next, to + 1);
      if (line.height !== undefined) row.height = line.height;
      row.commit();
      this.next++;
      await this.turn();
    }
    return first;
  }

  /**
   * A row whose cell `linkColumn` links to a place in the workbook (`'Sheet name'!A1`): an
   * internal hyperlink (`location`, no relationship), which Excel and LibreOffice both follow.
   * exceljs's streaming writer makes every hyperlink an external relationship, which
   * LibreOffice resolves against the file's own path: the link is added to the writer's list
   * with a location instead.
   */
  async link(cells: ReadonlyArray<string | number>, linkColumn: number, target: string): Promise<void> {
    const row = this.worksheet.addRow(cells.map(cellValue));
    row.getCell(linkColumn + 1).style = LINK;
    const links = (this.worksheet as unknown as { _sheetRelsWriter?: { _hyperlinks?: Array<{ address: string; target: string }> } })._sheetRelsWriter?._hyperlinks;
    if (!Array.isArray(links)) throw new CrosstabError(ErrorCode.internal, 'the XLSX writer (exceljs) has no hyperlink list to add an index link to', { hint: 'Report this with the exceljs version installed.' });
    links.push({ address: row.getCell(linkColumn + 1).address, target });
    row.commit();
    this.next++;
    await this.turn();
  }

  commit(): void {
    this.worksheet.commit();
  }
}

/**
 * The style of a cell: one shared object per (kind, column class, number format), which
 * exceljs's style table recognises by identity instead of serialising it again per cell.
 */
function style(target: ExcelJS.Cell, cell: SheetCell, kind: SheetLine['kind'], column: number): void {
  const place = column === 0 ? 'label' : column === 1 ? 'name' : typeof cell.value === 'string' ? 'text' : 'number';
  const key = `${kind}|${place}|${cell.format ?? ''}`;
  let shared = STYLES.get(key);
  if (shared === undefined) STYLES.set(key, (shared = styleOf(kind, place, cell.format)));
  target.style = shared;
}

const STYLES = new Map<string, Partial<ExcelJS.Style>>();

function styleOf(kind: SheetLine['kind'], place: 'label' | 'name' | 'text' | 'number', format: string | undefined): Partial<ExcelJS.Style> {
  const style: Partial<ExcelJS.Style> = format === undefined ? {} : { numFmt: format };
  const right = place === 'text' ? { alignment: { horizontal: 'right' } as const } : {};
  switch (kind) {
    case 'title':
      return { ...style, font: { bold: true, size: 13 } };
    case 'note':
    case 'footnote':
      return { ...style, font: { italic: true, size: 9, color: { argb: 'FF404040' } } };
    case 'banner':
      return { ...style, font: { bold: true }, fill: GREY, alignment: { horizontal: 'center', vertical: 'bottom' } };
    case 'columns':
      return { ...style, font: { bold: true }, fill: GREY, alignment: { horizontal: 'center', vertical: 'bottom', wrapText: true } };
    case 'letters':
      return { ...style, fill: GREY, font: { color: { argb: 'FF555555' } }, alignment: { horizontal: 'center' } };
    case 'base':
      return { ...style, fill: LIGHT, font: { italic: true }, ...right };
    case 'heading':
      return { ...style, font: { bold: true, italic: true }, border: RULE };
    case 'label':
      return { ...style, border: RULE, ...(place === 'label' ? { font: { bold: true } } : {}), ...right };
    case 'figure':
      return { ...style, ...(place === 'name' ? { font: { color: { argb: 'FF555555' } } } : {}), ...right };
    case 'blank':
      return style;
  }
}

/**
 * A cell's value as exceljs takes it: text without the characters XML cannot hold; text that
 * starts or ends with white space as an inline string, whose text exceljs marks
 * xml:space="preserve" (written plain, LibreOffice read ' padded ' as 'padded'); text holding
 * OOXML's character escape _xHHHH_ (a label '_x0041_', which Excel shows as 'A') as an inline
 * string with the escape's lead underscore escaped itself, _x005F_. Excel and LibreOffice both
 * read that back as the text written; LibreOffice decodes no escape in a plain string cell, so
 * the escaped text must not go there.
 */
function cellValue(value: string | number | null): ExcelJS.CellValue {
  if (typeof value !== 'string') return value;
  const text = xmlText(value);
  if (hasXstringEscape(text)) return { richText: [{ text: xstringText(text) }] };
  return /^\s|\s$/.test(text) ? { richText: [{ text }] } : text;
}
