import { fitsFloat64 } from '../../text/decimal-text.js';
import { AXIS_LIMIT } from '../format.js';
import type { RawColumn } from '../input/raw-table.js';

/**
 * Plain decimal numbers: no leading zeros (so `06` stays text), optional sign, fraction
 * and exponent.
 */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$/;

/**
 * A value a numeric variable can hold: a plain decimal number that a 64-bit float holds
 * exactly enough (fitsFloat64: not `9007199254740993`, which reads as the float of
 * `9007199254740992`). Any other value makes the whole column text.
 */
export function isNumberText(text: string): boolean {
  return NUMBER.test(text) && fitsFloat64(text);
}

export type ColumnClass =
  | { kind: 'numeric' }
  /** `note`: why a column of numbers is text (a value with more digits than a float holds). */
  | { kind: 'text'; note?: string }
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
  if (column.dictionary.every((text) => NUMBER.test(text))) {
    const inexact = column.dictionary.find((text) => !fitsFloat64(text))!;
    return {
      kind: 'text',
      note:
        `column ${column.name} is text, not numeric: its value ${inexact} has more digits than a 64-bit float holds ` +
        `(it would read as ${String(Number(inexact))}), so its values are kept exactly as written; value lists answer, ranges are refused`,
    };
  }
  return { kind: 'text' };
}
