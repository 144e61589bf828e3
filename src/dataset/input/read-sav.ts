import { TextDecoder } from 'node:util';
import { ByteCursor } from './byte-cursor.js';
import type { RawTable, ReadOptions } from './raw-table.js';
import { multiSpecOf } from './sav-mrsets.js';
import { readSavCases } from './sav-data.js';
import { readSavDictionary, trimEnd, type SavDictionary, type SavVariable } from './sav-dictionary.js';
import { readTypedFile } from './input-file.js';
import { type CellValue, type SourceColumn, TableEncoder } from './table-encoder.js';

/** Seconds from the SPSS epoch (14 Oct 1582) to the Unix epoch. */
const spssEpochSeconds = 12_219_379_200;
/** Print formats holding a date (DATE, ADATE, JDATE, MOYR, QYR, WKYR, EDATE, SDATE) or a date-time (DATETIME, YMDHMS). */
const dateFormats = new Set([20, 23, 24, 28, 29, 30, 38, 39]);
const dateTimeFormats = new Set([22, 41]);

/**
 * Reads an SPSS system file (`$FL2` .sav, uncompressed or bytecode-compressed, or `$FL3`
 * .zsav) into dictionary-encoded columns and validated weights, streaming the cases.
 *
 * Values are the text a CSV export of the same data would hold: numbers as JavaScript
 * writes them (`2`, `0.25`), strings without their padding (`06` stays `06`), dates and
 * date-times as ISO 8601 (`2024-02-29`, `2024-02-29T13:45:00`). System-missing values,
 * user-missing values (discrete, ranges, string) and empty strings are blank. Variable
 * labels become column labels and value labels become labels of the values' text. Long
 * variable names, very long strings and the file's character encoding are honoured.
 *
 * Rejects with a {@link CrosstabError}: `file_not_found`, `invalid_option` as the CSV
 * reader does, `invalid_input` for a truncated or corrupt file, a missing weight column
 * (with near matches) or a bad weight (with the `row` and `field` in `details`).
 */
export async function readSav(path: string, options: ReadOptions): Promise<RawTable> {
  return readTypedFile(path, options, 'SPSS system file', async (handle, size) => {
    const cursor = new ByteCursor(handle, size, path, 'SPSS file');
    const dictionary = await readSavDictionary(cursor);
    const { variables } = dictionary;
    const encoder = new TableEncoder(path, 'SPSS file', variables.map(sourceColumn), options, dictionary.cases > 0 ? { expectedRows: dictionary.cases } : {});
    const readers = variables.map((variable) => valueReader(variable, dictionary, cursor.littleEndian));
    const wanted = variables.map((_, i) => i).filter((i) => encoder.columns[i] !== undefined || encoder.weightAt[i] !== undefined);
    let row = 0;
    const onProgress = options.onProgress;
    await readSavCases(
      cursor,
      dictionary,
      (bytes, view) => {
        for (const i of wanted) {
          const value = readers[i]!(bytes, view);
          const column = encoder.columns[i];
          if (column) column.set(row, value);
          else encoder.weightAt[i]!.set(row, value);
        }
        row++;
      },
      onProgress && ((done) => onProgress(done, size)),
    );
    onProgress?.(size, size);
    const table = encoder.finish(row, 'An SPSS file needs at least one case.');
    if (dictionary.multiSets.length > 0) table.multiSets = dictionary.multiSets.map((set) => multiSpecOf(set, (name) => name, path));
    return table;
  });
}

function sourceColumn(variable: SavVariable): SourceColumn {
  const column: SourceColumn = { name: variable.name };
  if (variable.label !== undefined) column.label = variable.label;
  if (variable.valueLabels.size > 0) {
    const text = numberText(variable.format);
    column.valueLabels = Object.fromEntries([...variable.valueLabels].map(([value, label]) => [typeof value === 'number' ? String(text(value)) : value, label]));
  }
  return column;
}

/** How a numeric variable's values become cells: dates as ISO text, other numbers as they are. */
function numberText(format: number): (value: number) => CellValue {
  if (dateFormats.has(format)) return (value) => new Date((value - spssEpochSeconds) * 1000).toISOString().slice(0, 10);
  if (dateTimeFormats.has(format)) {
    return (value) => {
      const iso = new Date((value - spssEpochSeconds) * 1000).toISOString();
      return iso.endsWith('.000Z') ? iso.slice(0, 19) : iso.slice(0, 23);
    };
  }
  return (value) => value;
}

type ValueReader = (bytes: Uint8Array, view: DataView) => CellValue;

function valueReader(variable: SavVariable, dictionary: SavDictionary, littleEndian: boolean): ValueReader {
  const { missing } = variable;
  if (variable.width === 0) {
    const offset = variable.slot * 8;
    const { sysmis } = dictionary;
    const discrete = missing.values as number[];
    const [low, high] = missing.range ?? [Infinity, -Infinity];
    const text = numberText(variable.format);
    return (_bytes, view) => {
      const value = view.getFloat64(offset, littleEndian);
      if (value === sysmis || (value >= low && value <= high) || (discrete.length > 0 && discrete.includes(value))) return null;
      return text(value);
    };
  }
  const decoder = dictionary.encoding === 'utf-8' || dictionary.encoding === 'utf8' ? undefined : new TextDecoder(dictionary.encoding);
  const missingTexts = new Set(missing.values as string[]);
  const segments = variable.segments;
  const joined = new Uint8Array(variable.width);
  return (bytes) => {
    let raw: Uint8Array;
    if (segments.length === 1) {
      const start = segments[0]!.slot * 8;
      raw = bytes.subarray(start, start + segments[0]!.bytes);
    } else {
      let filled = 0;
      for (const segment of segments) {
        const take = Math.min(segment.bytes, joined.length - filled);
        joined.set(bytes.subarray(segment.slot * 8, segment.slot * 8 + take), filled);
        filled += take;
      }
      raw = joined;
    }
    const trimmed = trimEnd(raw);
    if (trimmed.length === 0) return null;
    const text = decoder ? decoder.decode(trimmed) : Buffer.from(trimmed.buffer, trimmed.byteOffset, trimmed.length).toString('utf8');
    return missingTexts.size > 0 && missingTexts.has(text) ? null : text;
  };
}
