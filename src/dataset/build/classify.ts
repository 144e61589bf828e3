import { floatCollision, PLAIN_NUMBER } from '../../text/decimal-text.js';
import { idLikeCountLimit, idLikeTextLimit, type SkippedColumn } from '../format.js';
import { dictionaryFloats } from './dictionary-floats.js';
import type { RawColumn } from '../input/raw-table.js';

const NUMBER = PLAIN_NUMBER;

/**
 * A value a numeric variable can hold: a plain decimal number within the 64-bit float range
 * (not `1e400`). It reads as its float, as R and DuckDB read it (`0.33333333333333331` is
 * `0.3333333333333333`); a column is numeric only if, besides, no two of its different
 * numbers read as the same float (numberColumnProblem).
 */
export function isNumberText(text: string): boolean {
  return NUMBER.test(text) && Number.isFinite(Number(text));
}

/**
 * Why a set of plain decimal numbers (a column's distinct values, a multi-response
 * variable's codes) cannot be a numeric variable's values, or undefined when it can: a value
 * beyond the float range (`1e400`), or two different numbers that read as the same float
 * (`9007199254740992` and `9007199254740993`), which a float would answer for together.
 */
export function numberColumnProblem(texts: readonly string[]): string | undefined {
  const { numbers, distinct } = dictionaryFloats(texts);
  for (let i = 0; i < numbers.length; i++) {
    if (Number.isFinite(numbers[i]!)) continue;
    const huge = texts[i]!;
    return `its value ${huge} lies beyond the 64-bit float range (it would read as ${String(Number(huge))})`;
  }
  // Texts of as many distinct floats: no two share one (most columns; a collision needs two texts of one float).
  if (distinct.length === texts.length) return undefined;
  const collision = floatCollision(texts);
  if (collision === undefined) return undefined;
  const [a, b] = collision;
  return `its values ${a} and ${b} are different numbers that read as the same 64-bit float (${String(Number(a))})`;
}

/**
 * Whether a text column with `distinct` values in `rows` rows is id-like (skipped). More rows
 * only add values, so a column id-like with `distinct` values stays so over any rows for which
 * this holds, whatever their values.
 */
export function staysIdLike(distinct: number, rows: number): boolean {
  return distinct > idLikeTextLimit(rows);
}

/**
 * The distinct values of a column skipped as id-like text, read from its skip reason as
 * builds before SkippedColumn.textValues wrote it ("id-like: N distinct text values in R
 * rows": N exactly; "more than N": N + 1, at least that many); undefined for another reason.
 */
export function idLikeTextValues(reason: string): number | undefined {
  const found = /^id-like: (more than )?(\d+) distinct text values in \d+ rows$/.exec(reason);
  return found === null ? undefined : Number(found[2]) + (found[1] === undefined ? 0 : 1);
}

/** The skip reason of an id-like text column in `rows` rows: the bound it exceeds (the same whatever the reader counted). */
export function idLikeTextReason(rows: number): string {
  return `id-like: more than ${idLikeTextLimit(rows)} distinct text values in ${rows} rows`;
}

/** The skip reason of an id-like integer column in `rows` rows (one distinct integer per row). */
export function idLikeIntegersReason(rows: number): string {
  return `id-like: ${rows} distinct integers, one per row`;
}

/** Whether a column skipped with this reason is id-like integers (of any build). */
export function isIdLikeIntegers(reason: string): boolean {
  return /^id-like: \d+ distinct integers, one per row$/.test(reason);
}

/**
 * Whether a numeric column's value is an integer, by its value: `12`, `12.0` and `1.2e1` all
 * are, so whether a column is id-like does not depend on how a CSV spells its numbers, nor on
 * whether a typed file stores them as integers or doubles.
 */
export function isIntegerText(text: string): boolean {
  return Number.isInteger(Number(text));
}

export type ColumnClass =
  | { kind: 'numeric' }
  /** `note`: why a column of numbers is text (two of its numbers read as one float, or one lies beyond the float range). */
  | { kind: 'text'; note?: string }
  | ({ kind: 'skip' } & Omit<SkippedColumn, 'column'>);

/**
 * Decides how a column becomes a variable: numeric (answers ranges), text (values only),
 * or skipped: all blank, or id-like (one distinct value per row, e.g. a respondent id or
 * a household serial number), which no crosstab can use.
 */
export function classifyColumn(column: RawColumn, rows: number): ColumnClass {
  // A dictionary not made yet (deferred) is made only if the column turns out to be kept.
  const distinct = column.deferred?.count ?? column.dictionary.length;
  if (distinct === 0) return { kind: 'skip', reason: 'every value is blank' };
  const numbers = column.deferred !== undefined && !NUMBER.test(column.deferred.first) ? false : column.dictionary.every((text) => NUMBER.test(text));
  const problem = numbers ? numberColumnProblem(column.dictionary) : undefined;
  if (numbers && problem === undefined) {
    const integers = column.dictionary.every(isIntegerText);
    // Distinct by value: two spellings of one number (12 and 12.0) are that number twice.
    if (rows >= 1000 && integers && distinct === rows && dictionaryFloats(column.dictionary).distinct.length === rows) {
      // The smallest and largest: an append keeps the column skipped when the new integers all lie outside them.
      let min = Infinity;
      let max = -Infinity;
      for (const text of column.dictionary) {
        const value = Number(text);
        if (value < min) min = value;
        if (value > max) max = value;
      }
      return { kind: 'skip', reason: idLikeIntegersReason(rows), integerRange: { min, max } };
    }
    return { kind: 'numeric' };
  }
  if (staysIdLike(distinct, rows)) {
    // The count up to idLikeCountLimit + 1, where a reader may stop counting (ReadOptions.skipIdLike), the same whatever the reader.
    const counted = idLikeCountLimit(rows);
    return { kind: 'skip', reason: idLikeTextReason(rows), textValues: distinct > counted ? { count: counted + 1, atLeast: true } : { count: distinct } };
  }
  if (problem !== undefined) {
    return { kind: 'text', note: `column ${column.name} is text, not numeric: ${problem}, so its values are kept exactly as written; value lists answer, ranges are refused` };
  }
  return { kind: 'text' };
}
