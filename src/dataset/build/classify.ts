import { AXIS_LIMIT } from '../format.js';
import type { RawColumn } from '../input/raw-table.js';

/**
 * Plain decimal numbers: no leading zeros (so `06` stays text), optional sign, fraction
 * and exponent. Anything else makes the whole column text.
 */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$/;

export function isNumberText(text: string): boolean {
  return NUMBER.test(text);
}

export type ColumnClass =
  | { kind: 'numeric' | 'text' }
  | { kind: 'skip'; reason: string };

/**
 * Decides how a column becomes a variable: numeric (answers ranges), text (values only),
 * or skipped: all blank, or id-like (one distinct value per row, e.g. a respondent id or
 * a household serial number), which no crosstab can use.
 */
export function classifyColumn(column: RawColumn, rows: number): ColumnClass {
  const distinct = column.dictionary.length;
  if (distinct === 0) return { kind: 'skip', reason: 'every value is blank' };
  const numeric = column.dictionary.every(isNumberText);
  if (numeric) {
    const integers = column.dictionary.every((text) => !text.includes('.') && !/[eE]/.test(text));
    if (rows >= 1000 && integers && distinct === rows) {
      return { kind: 'skip', reason: `id-like: ${distinct} distinct integers, one per row` };
    }
    return { kind: 'numeric' };
  }
  if (distinct > Math.max(AXIS_LIMIT, rows / 10)) {
    return { kind: 'skip', reason: `id-like: ${distinct} distinct text values in ${rows} rows` };
  }
  return { kind: 'text' };
}
