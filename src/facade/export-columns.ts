import type { FileHandle } from 'node:fs/promises';
import { extname } from 'node:path';
import { CrosstabError, ErrorCode, fieldError } from '../errors.js';
import type { StoredMeta } from '../dataset/format.js';
import { writeAtomically } from '../dataset/file/atomic-write.js';
import { loadDataset } from '../dataset/file/reader.js';
import { rankColumn, weightColumn } from '../dataset/file/respondent-columns.js';
import { mainThreadKernel } from '../kernel/kernel.js';
import { invalidOption, requireObject } from '../options.js';
import { suggest } from '../text/suggest.js';

/** Options of exportColumns(). */
export interface ExportOptions {
  /**
   * Columns to write, in order: the id column (`crosstab build --id`), weights (those of the
   * input and those `crosstab weight` added), single-coded variables, and `_row` (the 1-based
   * input row number; the key of a dataset built without an id column).
   */
  columns: string[];
  /** The file to write: CSV (`.csv`) or Parquet (`.parquet`), by its extension. */
  out: string;
}

/** What exportColumns() wrote. */
export interface ExportReport {
  out: string;
  format: 'csv' | 'parquet';
  rows: number;
  columns: Array<{ name: string; source: 'id' | 'row' | 'weight' | 'variable' }>;
  bytes: number;
}

/** The pseudo column of input row numbers (1-based), unless the dataset has a column of that name. */
export const ROW_COLUMN = '_row';

/** One exported column, per input row: text (blank: undefined), or floats. */
type Exported =
  | { name: string; source: 'id' | 'variable'; texts: Array<string | undefined>; numeric: boolean }
  | { name: string; source: 'weight' | 'row'; numbers: Float64Array };

/**
 * Writes columns of a dataset to a CSV or Parquet file in the input's row order (the order
 * of the file the dataset was built from), so that weights from `crosstab weight` can be
 * merged back into the source data by the id column, or by row number without one. Values
 * are as the input had them: the id as given, each variable value as the dataset lists it
 * (`crosstab info`), weights as 64-bit floats (CSV: the shortest text that reads back as the
 * same float). Blanks are empty cells (CSV) or nulls (Parquet). Written to a temporary file
 * and renamed over `out`: nothing is left half-written.
 */
export async function exportColumns(path: string, options: ExportOptions): Promise<ExportReport> {
  const given = requireObject(options, 'options', ['columns', 'out']) as unknown as ExportOptions;
  if (!Array.isArray(given.columns) || given.columns.length === 0 || !given.columns.every((name) => typeof name === 'string' && name !== '')) {
    throw invalidOption('columns', 'must be a non-empty list of column names', 'For example ["SEQN", "wt_rake"].');
  }
  const twice = given.columns.find((name, i) => given.columns.indexOf(name) !== i);
  if (twice !== undefined) throw invalidOption('columns', `names "${twice}" twice`, 'List each column once.');
  if (typeof given.out !== 'string' || given.out === '') throw invalidOption('out', 'must be the path of the file to write', 'For example weights.csv or weights.parquet.');
  const extension = extname(given.out).toLowerCase();
  const format = extension === '.csv' ? 'csv' : extension === '.parquet' ? 'parquet' : undefined;
  if (format === undefined) throw invalidOption('out', `"${given.out}" ends in neither .csv nor .parquet`, 'Name the file .csv for CSV or .parquet for Parquet.');

  const kernel = mainThreadKernel();
  const dataset = await loadDataset(path, kernel);
  try {
    const { meta } = dataset;
    if (meta.inputRows === undefined) {
      throw new CrosstabError(ErrorCode.unsupportedVersion, `${path} was built by an earlier version, which did not keep the input's row order`, {
        file: path,
        hint: 'Build the dataset again from its input with this version (with --id COLUMN for a respondent id), then weight it again.',
      });
    }
    const rows = meta.respondents;
    const rowOf = new Uint32Array(kernel.memory.bytes(dataset.buffer(meta.inputRows).ptr, rows * 4).slice().buffer);
    const exported = given.columns.map((name) => exportedColumn(name, meta, path, rows, rowOf, dataset, kernel));
    const cannotWrite = (error: NodeJS.ErrnoException) => invalidOption('out', `"${given.out}" cannot be written (${error.code ?? error.message})`, 'Check that its folder exists and is writable.');
    const bytes = await writeAtomically(given.out, (file) => (format === 'csv' ? writeCsv(file, exported, rows) : writeParquet(file, exported, rows)), { openError: cannotWrite });
    return { out: given.out, format, rows, columns: exported.map(({ name, source }) => ({ name, source })), bytes };
  } finally {
    dataset.close();
    for (const region of dataset.regions) kernel.memory.release(region.ptr, region.bytes);
  }
}

type Loaded = Awaited<ReturnType<typeof loadDataset>>;

function exportedColumn(name: string, meta: StoredMeta, path: string, rows: number, rowOf: Uint32Array, dataset: Loaded, kernel: ReturnType<typeof mainThreadKernel>): Exported {
  if (meta.id?.column === name) {
    const texts = idTexts(dataset.buffer(meta.id.buffer), kernel, rows, path);
    return { name, source: 'id', texts, numeric: false };
  }
  if (meta.weights.some((weight) => weight.name === name)) {
    const stored = weightColumn(dataset, kernel, name);
    const numbers = new Float64Array(rows);
    for (let r = 0; r < rows; r++) numbers[rowOf[r]!] = stored[r]!;
    return { name, source: 'weight', numbers };
  }
  const variable = meta.variables.find((candidate) => candidate.name === name);
  if (variable !== undefined) {
    if (variable.kind === 'multi') {
      throw invalidOption('columns', `"${name}" is multi-response: a respondent may hold several of its values`, 'Export single-coded variables, weights and the id column.');
    }
    const ranks = rankColumn(dataset, kernel, variable);
    const texts = new Array<string | undefined>(rows);
    for (let r = 0; r < rows; r++) texts[rowOf[r]!] = ranks[r] === 0 ? undefined : variable.values[ranks[r]! - 1];
    return { name, source: 'variable', texts, numeric: variable.kind === 'numeric' };
  }
  if (name === ROW_COLUMN) return { name, source: 'row', numbers: Float64Array.from({ length: rows }, (_, row) => row + 1) };
  const known = [...(meta.id ? [meta.id.column] : []), ...meta.weights.map((weight) => weight.name), ...meta.variables.filter((v) => v.kind !== 'multi').map((v) => v.name), ROW_COLUMN];
  const suggestions = suggest(name, known);
  throw fieldError(ErrorCode.unknownVariable, 'columns', `names "${name}", which is not a column of ${path}${suggestions.length > 0 ? `; did you mean "${suggestions[0]}"?` : ''}`, {
    suggestions,
    hint: `Name the id column${meta.id ? ` (${meta.id.column})` : ' (none: the dataset was built without --id; _row is the input row number)'}, weights (${meta.weights.map((weight) => weight.name).join(', ')}) or variables (crosstab info).`,
  });
}

/** The id column's texts per input row, from its buffer (offsets, then UTF-8), checked. */
function idTexts(buffer: { ptr: number; count: number }, kernel: ReturnType<typeof mainThreadKernel>, rows: number, path: string): string[] {
  const bytes = kernel.memory.bytes(buffer.ptr, buffer.count).slice();
  const head = (rows + 1) * 4;
  const offsets = head <= bytes.byteLength ? new Uint32Array(bytes.buffer, 0, rows + 1) : undefined;
  if (offsets === undefined || offsets[0] !== 0 || offsets[rows] !== bytes.byteLength - head) {
    throw new CrosstabError(ErrorCode.corruptDataset, `${path}: the id column's buffer does not hold ${rows} ids`, { file: path, hint: 'Rebuild the dataset with `crosstab build`.' });
  }
  const decoder = new TextDecoder();
  return Array.from({ length: rows }, (_, row) => decoder.decode(bytes.subarray(head + offsets[row]!, head + offsets[row + 1]!)));
}

/** A CSV field, quoted when it holds a comma, quote, line break or edge space (RFC 4180). */
function csvField(text: string): string {
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

async function writeCsv(file: FileHandle, columns: Exported[], rows: number): Promise<number> {
  let bytes = 0;
  let chunk = `${columns.map(({ name }) => csvField(name)).join(',')}\n`;
  const flush = async () => {
    const data = Buffer.from(chunk, 'utf8');
    await file.write(data);
    bytes += data.byteLength;
    chunk = '';
  };
  for (let row = 0; row < rows; row++) {
    chunk += `${columns.map((column) => ('numbers' in column ? String(column.numbers[row]) : column.texts[row] === undefined ? '' : csvField(column.texts[row]!))).join(',')}\n`;
    if (chunk.length >= 1 << 20) await flush();
  }
  await flush();
  return bytes;
}

const INT64 = /^(?:0|-?[1-9]\d{0,18})$/;

async function writeParquet(file: FileHandle, columns: Exported[], rows: number): Promise<number> {
  const { parquetWriteBuffer } = await import('hyparquet-writer');
  const columnData = columns.map((column) => {
    if ('numbers' in column) return column.source === 'row' ? { name: column.name, data: Array.from(column.numbers, BigInt), type: 'INT64' as const } : { name: column.name, data: column.numbers, type: 'DOUBLE' as const, nullable: false };
    const present = column.texts.filter((text): text is string => text !== undefined);
    // Whole numbers written plainly (an id, a code) stay whole numbers; other numbers are floats, the rest text.
    if (present.every((text) => INT64.test(text) && BigInt(text) >= -(2n ** 63n) && BigInt(text) < 2n ** 63n)) {
      return { name: column.name, data: column.texts.map((text) => (text === undefined ? null : BigInt(text))), type: 'INT64' as const };
    }
    if (column.numeric) return { name: column.name, data: column.texts.map((text) => (text === undefined ? null : Number(text))), type: 'DOUBLE' as const };
    return { name: column.name, data: column.texts.map((text) => text ?? null), type: 'STRING' as const };
  });
  const buffer = new Uint8Array(parquetWriteBuffer({ columnData, createdBy: 'crosstab-engine' }));
  await file.write(buffer);
  return buffer.byteLength;
}
