import { ErrorCode, type CrosstabError } from '../../errors.js';
import { suggest } from '../../text/suggest.js';
import type { RawColumn, RawTable, RawWeight, ReadOptions } from './raw-table.js';
import { ColumnEncoder, type SourceColumn } from './column-encoder.js';
import { inputError, type Place, placedError } from './input-errors.js';
import { WeightEncoder } from './weight-encoder.js';
import { deferDictionary } from './deferred-texts.js';

/**
 * The one encoder of every input reader (CSV, SPSS, Parquet, Arrow): picks out the weights,
 * dictionary-encodes the other columns (column-encoder.ts), validates weights
 * (weight-encoder.ts), and names problems where they are (input-errors.ts).
 */

export type { CellValue, Validity } from './cell-values.js';
export { ColumnEncoder, type SourceColumn } from './column-encoder.js';
export { inputError, type Place, placedError } from './input-errors.js';
export { WeightEncoder } from './weight-encoder.js';

export interface EncoderOptions {
  /** Rows the file says it holds (Parquet, SPSS): the columns start that long. */
  expectedRows?: number;
  /** Where the column names are (the CSV header line), for header problems. */
  header?: Place;
  /** Where row `row` (0-based) is, for weight problems; default `{ row: row + 1 }`. */
  placeOf?: (row: number) => Place;
}

const initialRowCapacity = 4096;

/**
 * Turns the columns of an input into a {@link RawTable}: picks out the requested weights
 * (in the order requested), leaves out excluded columns, and refuses duplicate column
 * names, a missing weight column (with near matches) and an unknown excluded column.
 */
export class TableEncoder {
  /** Per source column: its encoder, or undefined for weight and excluded columns. */
  readonly columns: Array<ColumnEncoder | undefined>;
  /** Per source column: its weight encoder, if it is a requested weight. */
  readonly weightAt: Array<WeightEncoder | undefined>;
  private readonly weights: WeightEncoder[];

  /** `what` names where the column names are: `header`, `Arrow schema`, `SPSS file`... */
  constructor(
    private readonly file: string,
    what: string,
    source: SourceColumn[],
    options: ReadOptions,
    encoding: EncoderOptions = {},
  ) {
    const capacity = Math.max(1, encoding.expectedRows ?? initialRowCapacity);
    const header = encoding.header;
    const placeOf = encoding.placeOf ?? ((row: number) => ({ row: row + 1 }));
    const positions = new Map<string, number>();
    source.forEach(({ name }, position) => {
      const first = positions.get(name);
      if (first !== undefined) {
        const hint = 'Rename one of them: column names must be unique.';
        throw placedError(file, header, `column name "${name}" appears twice in the ${what}, as columns ${first + 1} and ${position + 1}`, hint, { field: name });
      }
      positions.set(name, position);
    });
    const names = source.map((column) => column.name);
    this.weightAt = source.map(() => undefined);
    this.weights = options.weights.map((name) => {
      const position = positions.get(name);
      if (position === undefined) throw missingColumn(file, header, what, name, names);
      return (this.weightAt[position] = new WeightEncoder(name, file, capacity, placeOf));
    });
    const excluded = new Set(options.exclude);
    for (const name of excluded) if (!positions.has(name)) throw missingColumn(file, header, what, name, names, 'exclude');
    for (const name of options.ignore ?? []) excluded.add(name);
    this.columns = source.map((column, position) =>
      this.weightAt[position] !== undefined || excluded.has(column.name) ? undefined : new ColumnEncoder(column, capacity),
    );
  }

  /** The table of rows `0 .. rows - 1`, one column at a time (each column's chunks are joined and dropped before the next's). */
  finish(rows: number, emptyHint: string): RawTable {
    if (rows === 0) throw inputError(this.file, 'the file holds no rows (respondents)', emptyHint);
    const columns: RawColumn[] = [];
    for (const column of this.columns) {
      if (!column) continue;
      const { name, label, valueLabels } = column.source;
      const raw: RawColumn = { name, dictionary: column.dictionary, counts: column.counts(), ids: column.take(rows) };
      const deferred = column.deferredTexts;
      if (deferred !== undefined) deferDictionary(raw, deferred);
      if (column.partly) raw.partly = true;
      if (label !== undefined && label !== '') raw.label = label;
      if (valueLabels !== undefined && Object.keys(valueLabels).length > 0) raw.valueLabels = valueLabels;
      columns.push(raw);
    }
    const weights: RawWeight[] = this.weights.map((weight) => ({ name: weight.name, values: weight.take(rows) }));
    return { source: this.file, rows, columns, weights };
  }
}

/** A requested weight (invalid input) or excluded column (invalid option) that `what` lacks. */
function missingColumn(file: string, place: Place, what: string, name: string, names: string[], option?: 'exclude'): CrosstabError {
  const suggestions = suggest(name, names);
  const near =
    suggestions.length > 0
      ? `did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?`
      : `the ${what} has ${names.length} columns: ${names.slice(0, 12).join(', ')}${names.length > 12 ? ', ...' : ''}`;
  const hint = `Use a column name exactly as the ${what} spells it (names are case-sensitive).`;
  const problem = option === 'exclude' ? `options.exclude names "${name}", which is not a column` : `weight column "${name}" is not in the ${what}`;
  const code = option === 'exclude' ? ErrorCode.invalidOption : ErrorCode.invalidInput;
  return placedError(file, place, `${problem}; ${near}`, hint, { field: option ?? name, ...(option === undefined ? {} : { value: name }), suggestions }, code);
}
