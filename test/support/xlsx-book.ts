// Reads tables back out of a workbook written by the XLSX writer (exceljs's reader), as plain
// values, and compares them with a TableResult and its statistics cell by cell.
import { readFileSync } from 'node:fs';
import ExcelJS from 'exceljs';
// exceljs's own zip reader: exceljs's reader skips hyperlinks to places in the workbook.
import JSZip from 'jszip';
import { expect } from 'vitest';
import type { TableResult } from '../../src/facade/types.js';
import type { TableStatistics } from '../../src/report/table-statistics.js';

export type Sheet = ExcelJS.Worksheet;

export async function readWorkbook(path: string): Promise<ExcelJS.Workbook> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(path);
  return workbook;
}

/** The internal hyperlinks of the workbook's first sheet: cell address → location (`'T1 degree'!A1`). */
export async function internalLinks(path: string): Promise<Map<string, string>> {
  const zip = await JSZip.loadAsync(readFileSync(path));
  const xml = await zip.file('xl/worksheets/sheet1.xml')!.async('string');
  const unescape = (text: string) => text.replace(/&apos;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return new Map([...xml.matchAll(/<hyperlink ref="([A-Z]+\d+)" location="([^"]*)"\/>/g)].map((match) => [match[1]!, unescape(match[2]!)]));
}

/** A cell's value, with rich text and hyperlinks as their text. */
export function valueAt(sheet: Sheet, row: number, column: number): unknown {
  const value = sheet.getRow(row).getCell(column).value;
  if (value && typeof value === 'object' && 'text' in value) return value.text;
  return value ?? null;
}

export function formatAt(sheet: Sheet, row: number, column: number): string {
  return sheet.getRow(row).getCell(column).numFmt ?? '';
}

/** The first row at or after `from` whose column A holds `text`. */
export function findRow(sheet: Sheet, text: string, from = 1): number {
  for (let row = from; row <= sheet.rowCount; row++) if (valueAt(sheet, row, 1) === text) return row;
  throw new Error(`no row with "${text}" in column A of ${sheet.name} from row ${from}`);
}

const FIGURE_NAMES: Record<string, keyof TableStatistics> = { 'Vertical %': 'columnPct', Index: 'index', 'Horizontal %': 'rowPct' };

/**
 * Checks the heading rows (banner labels, column labels, letters) at `headerRow` and the
 * body from the "Base" row after `bodyFrom` against `result` and `statistics`: every label,
 * count, figure and letter, and the number formats (percentages as numbers under a % format,
 * stability marks in the format of unstable cells). With `headingOf` (a single table), a
 * heading line (the heading in A, nothing else) where each row variable's entries start;
 * without it (a tab book's table), none.
 */
export function expectTableInSheet(sheet: Sheet, headerRow: number, bodyFrom: number, result: TableResult, statistics: TableStatistics, bannerLabels: string[], headingOf?: (variable: string) => string): void {
  const width = result.columns.length;
  const data = (c: number) => 4 + c; // A label, B figure, C Total, D.. columns
  const banner = [...new Set(Array.from({ length: width }, (_, c) => valueAt(sheet, headerRow, data(c))).filter((v) => v !== '' && v !== null))];
  expect(banner).toEqual(bannerLabels);
  expect(valueAt(sheet, headerRow, 3)).toBe('Total');
  result.columns.forEach((column, c) => {
    expect(valueAt(sheet, headerRow + 1, data(c))).toBe(column.label);
    const letter = statistics.columnLetters[c];
    if (statistics.letters) expect(valueAt(sheet, headerRow + 2, data(c)) ?? '').toBe(letter ? `(${letter})` : '');
  });
  const base = findRow(sheet, 'Base', bodyFrom);
  expect(valueAt(sheet, base, 2)).toBe('Weighted');
  expect(valueAt(sheet, base, 3)).toBe(result.total.weighted / result.units);
  expect(valueAt(sheet, base + 1, 3)).toBe(result.total.respondents);
  result.columnTotals.forEach((cell, c) => {
    expect(valueAt(sheet, base, data(c))).toBe(cell.weighted / result.units);
    expect(valueAt(sheet, base + 1, data(c))).toBe(cell.respondents);
  });
  let row = base + 2;
  result.rows.forEach((entry, r) => {
    if (headingOf && entry.variable !== undefined && entry.variable !== result.rows[r - 1]?.variable) {
      expect(valueAt(sheet, row, 1), `heading of ${entry.variable}`).toBe(headingOf(entry.variable));
      for (let column = 2; column <= 3 + width; column++) expect(valueAt(sheet, row, column), `heading of ${entry.variable}, column ${column}`).toBe(null);
      row++;
    }
    expect(valueAt(sheet, row, 1)).toBe(entry.label);
    expect(valueAt(sheet, row, 2)).toBe('Weighted');
    expect(valueAt(sheet, row, 3)).toBe(result.rowTotals[r]!.weighted / result.units);
    expect(valueAt(sheet, row + 1, 2)).toBe('Respondents');
    expect(valueAt(sheet, row + 1, 3)).toBe(result.rowTotals[r]!.respondents);
    for (let c = 0; c < width; c++) {
      const cell = result.cell(r, c);
      const mark = cell.stability === 'very-unstable' ? '"**"' : cell.stability === 'caution' ? '"*"' : '';
      expect(valueAt(sheet, row, data(c))).toBe(cell.weighted / result.units);
      expect(valueAt(sheet, row + 1, data(c))).toBe(cell.respondents);
      expect(formatAt(sheet, row + 1, data(c)).startsWith(`#,##0${mark}`)).toBe(true);
    }
    row += 2;
    while (row <= sheet.rowCount && valueAt(sheet, row, 1) === null && valueAt(sheet, row, 2) !== 'Weighted') {
      const name = String(valueAt(sheet, row, 2));
      if (name === 'Significance') {
        for (let c = 0; c < width; c++) expect(valueAt(sheet, row, data(c)) ?? '').toBe(statistics.letters![r * width + c]);
      } else {
        const field = FIGURE_NAMES[name];
        if (field === undefined) throw new Error(`unexpected figure line "${name}" in ${sheet.name} row ${row}`);
        const values = statistics[field] as Float64Array;
        for (let c = 0; c < width; c++) {
          const expected = values[r * width + c]!;
          const shown = valueAt(sheet, row, data(c));
          if (Number.isFinite(expected)) {
            expect(shown).toBe(expected);
            if (field !== 'index') expect(formatAt(sheet, row, data(c))).toMatch(/^0\.0%/);
          } else {
            expect(shown).toBe('–');
          }
        }
      }
      row++;
    }
  });
  expect(String(valueAt(sheet, row, 1))).toMatch(/^\* use with caution/);
}
