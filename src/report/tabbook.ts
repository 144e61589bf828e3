import { CrosstabError, ErrorCode, fieldError, throwIfCancelled } from '../errors.js';
import type { Tabbook, TabbookTable } from './tabbook-model.js';
import { normalizeStats, type StatName } from './statistics.js';
import { tableStatistics, type TableStatisticsOptions } from './table-statistics.js';
import { quoteText, shorten } from '../text/expression-text.js';
import { suggest } from '../text/suggest.js';
import { expandAxis } from '../facade/axes.js';
import type { Dataset } from '../facade/dataset.js';
import { invalidOption, requireGroups, requireObject, requireSignal, requireString } from '../facade/options.js';
import type { AxisItem, DatasetInfo, TableQuery } from '../facade/types.js';
import { formatNumber } from '../text/number-text.js';

export interface TabbookOptions {
  /**
   * The banner across every table, left to right: variables (one column per value, labelled
   * from the codebook, compared with one another for the significance letters), codebook
   * codes or expressions (`'AGEP=18..34'`, or `{ expr, label }`: one column each, compared
   * only within `columnGroups`). A Total column comes first in every table.
   */
  banner: ReadonlyArray<string | { expr: string; label?: string }>;
  /**
   * Groups of banner columns to compare with one another instead of the default groups (each
   * variable's values): 0-based column indexes as `table()` numbers them. The columns may
   * share respondents; the tests then add their covariance, as `table()`'s do.
   */
  columnGroups?: readonly (readonly number[])[];
  /** The stub variables, one table each in this order, or `'all'`: every variable with a value list. */
  stubs: readonly string[] | 'all';
  /** Population base of every table; default `*`. */
  base?: string;
  /** Weight column; default the dataset's first; `null` = unweighted. */
  weight?: string | null;
  /** Statistics per cell; default `['vpct', 'sig']`. */
  stats?: readonly StatName[] | 'all';
  /** How the statistics are computed (SE method, correction, alpha...): as tableStatistics() takes them. */
  statistics?: Omit<TableStatisticsOptions, 'stats' | 'columnGroups'>;
  /** `show` (default) adds the "No answer" row and column of each table; `hide` leaves them out. */
  missing?: 'show' | 'hide';
  /** Most stub tables computed at once; default 4. */
  concurrency?: number;
  /**
   * Most cells of the whole book, checked before any table is computed, as tabbookSize()
   * counts them: every stub's rows in all (its values, a multi-response net, and a "No answer"
   * row with `missing: 'show'`) x the banner's columns (the Total column, each variable's
   * values, net and "No answer" column, one per code or expression). Default 250,000 (DEFAULT_TABBOOK_MAX_CELLS); past it, `invalid_option` naming `maxCells`.
   */
  maxCells?: number;
  allowedGroups?: readonly string[];
  signal?: AbortSignal;
}

const TABBOOK_OPTIONS = ['banner', 'columnGroups', 'stubs', 'base', 'weight', 'stats', 'statistics', 'missing', 'concurrency', 'maxCells', 'allowedGroups', 'signal'] as const satisfies ReadonlyArray<keyof TabbookOptions>;
const DEFAULT_CONCURRENCY = 4;
/** TabbookOptions.maxCells by default: the cells a tab book of POST /tabbooks may have by default. */
export const DEFAULT_TABBOOK_MAX_CELLS = 250_000;

/**
 * A tab book: one table per stub variable, every one with the same banner across and the
 * same base, with its statistics. The tables run through `dataset.table()` (on the worker
 * pool when the dataset was opened with `execution: 'pool'`), up to `concurrency` at a time.
 * Write it with writeTabbook() (XLSX, HTML, CSV or JSON). Rejects with CrosstabError naming
 * the option at fault (`banner[1]`, `stubs[3]`...).
 */
export async function tabbook(dataset: Pick<Dataset, 'info' | 'table'>, options: TabbookOptions): Promise<Tabbook> {
  const settings = readOptions(dataset.info, options);
  const { info } = dataset;
  const variableLabels = Object.fromEntries(info.variables.flatMap((variable) => (variable.label ? [[variable.name, variable.label]] : [])));
  const abort = new AbortController();
  const stop = () => abort.abort();
  settings.signal?.addEventListener('abort', stop, { once: true });
  const tables: TabbookTable[] = new Array(settings.stubs.length);
  let next = 0;
  const lane = async () => {
    while (next < settings.stubs.length && !abort.signal.aborted) {
      const at = next++;
      const stub = settings.stubs[at]!;
      const query: TableQuery = { base: settings.base, rows: [{ variable: stub }], columns: settings.columns, signal: abort.signal, ...settings.query };
      query.missing = settings.missing;
      const result = await bannerErrors(() => dataset.table(query), settings.bannerOfColumn);
      tables[at] = { number: at + 1, stub, title: variableLabels[stub] ?? stub, result, statistics: tableStatistics(result, { ...settings.statistics, stats: settings.stats }) };
    }
  };
  try {
    throwIfCancelled(settings.signal, 'the tab book');
    const lanes = Array.from({ length: Math.min(settings.concurrency, settings.stubs.length) }, () =>
      lane().catch((error: unknown) => {
        stop();
        throw error;
      }),
    );
    const settled = await Promise.allSettled(lanes);
    // The first failure, not the cancellations it caused in the other lanes.
    const failures = settled.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
    const failure = failures.find((error) => !(error instanceof CrosstabError && error.code === ErrorCode.cancelled)) ?? failures[0];
    if (failure !== undefined) throw failure;
    throwIfCancelled(settings.signal, 'the tab book');
  } finally {
    settings.signal?.removeEventListener('abort', stop);
  }
  const title = info.name === info.survey ? info.name : `${info.name} (${info.survey})`;
  // Every table has the same base and banner, so the same columns (with a "No answer" column where the base has blanks).
  const banner = tables[0]?.result.columns ?? expandAxis(settings.columns, 'columns', info);
  return { title, base: settings.base, weight: tables[0]?.result.weight ?? null, banner, variableLabels, tables, skipped: settings.skipped };
}

function readOptions(info: DatasetInfo, options: TabbookOptions) {
  const given = requireObject(options, 'options', TABBOOK_OPTIONS) as Partial<TabbookOptions>;
  const columns = readBanner(info, given.banner);
  const { stubs, skipped } = readStubs(info, given.stubs);
  const base = given.base === undefined ? '*' : requireString(given.base, 'base');
  const stats = normalizeStats(given.stats ?? ['vpct', 'sig'], 'stats');
  const statistics = given.statistics === undefined ? {} : requireObject(given.statistics, 'statistics');
  const concurrency = given.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw invalidOption('concurrency', 'must be a whole number of tables, at least 1', `Leave it out for ${DEFAULT_CONCURRENCY}.`);
  const missing = readMissing(given.missing);
  const maxCells = given.maxCells ?? DEFAULT_TABBOOK_MAX_CELLS;
  if (typeof maxCells !== 'number' || !Number.isInteger(maxCells) || maxCells < 1) throw invalidOption('maxCells', `must be a whole number of cells, at least 1; got ${String(maxCells)}`, `Leave it out for ${formatNumber(DEFAULT_TABBOOK_MAX_CELLS, 0)}.`);
  checkBookCells(info, columns, stubs, missing, maxCells);
  const signal = requireSignal(given.signal, 'signal');
  const allowedGroups = requireGroups(given.allowedGroups, 'allowedGroups');
  const query: Partial<TableQuery> = {
    ...(given.columnGroups !== undefined ? { columnGroups: given.columnGroups } : {}),
    ...(given.weight !== undefined ? { weight: given.weight } : {}),
    ...(allowedGroups !== undefined ? { allowedGroups } : {}),
  };
  // table() names a column `columns[i]`, i counting the columns as expanded (without "No answer" columns): the banner entry of each.
  const bannerOfColumn = columns.flatMap((item, i) => expandAxis([item], 'columns', info).map(() => i));
  return { columns, bannerOfColumn, stubs, skipped, base, stats, statistics: statistics as TabbookOptions['statistics'], missing, concurrency, signal, query };
}

/** The size of a tab book: what its tables will hold. */
export interface TabbookSize {
  /** One per stub. */
  tables: number;
  /** Every stub's rows in all. */
  rows: number;
  /** Of every table: the Total column and the banner's columns. */
  columns: number;
  /** rows x columns. */
  cells: number;
  /** The columns of each banner entry, in order (without the Total). */
  bannerColumns: number[];
}

/**
 * The cells a tab book of these banner, stubs and `missing` will have, counted as its tables
 * are made (what `maxCells` and POST /tabbooks' cells limit bound): every stub's rows (its
 * values, a multi-response variable's net row, and with `show` a "No answer" row where the
 * variable has blanks in the file) x the Total column and the banner's columns (each variable's
 * values the same way, one per code or expression). A "No answer" row or column is counted
 * even where the base leaves it empty and the table drops it. Rejects the banner and stubs as
 * tabbook() does.
 */
export function tabbookSize(info: DatasetInfo, options: Pick<TabbookOptions, 'banner' | 'stubs' | 'missing'>): TabbookSize {
  return sizeOf(info, readBanner(info, options.banner), readStubs(info, options.stubs).stubs, readMissing(options.missing));
}

function readMissing(missing: unknown): 'show' | 'hide' {
  if (missing === undefined) return 'show';
  if (missing === 'show' || missing === 'hide') return missing;
  throw invalidOption('missing', `must be "show" or "hide"; got ${JSON.stringify(missing)}`, 'Leave it out to show the "No answer" rows and columns.');
}

function sizeOf(info: DatasetInfo, columns: readonly AxisItem[], stubs: readonly string[], missing: 'show' | 'hide'): TabbookSize {
  const entries = (items: readonly AxisItem[], option: 'rows' | 'columns') => expandAxis(items, option, info, missing === 'show').length;
  const bannerColumns = columns.map((item) => entries([item], 'columns'));
  const width = 1 + bannerColumns.reduce((sum, count) => sum + count, 0);
  const rows = stubs.reduce((sum, stub) => sum + entries([{ variable: stub }], 'rows'), 0);
  return { tables: stubs.length, rows, columns: width, cells: rows * width, bannerColumns };
}

/** Refuses, before any table, a book of more than `maxCells` cells (tabbookSize()). */
function checkBookCells(info: DatasetInfo, columns: readonly AxisItem[], stubs: readonly string[], missing: 'show' | 'hide', maxCells: number): void {
  const { tables, rows, columns: width, cells } = sizeOf(info, columns, stubs, missing);
  if (cells <= maxCells) return;
  throw fieldError(
    ErrorCode.invalidOption,
    'maxCells',
    `the tab book has ${formatNumber(tables, 0)} tables of ${formatNumber(rows, 0)} rows in all x ${formatNumber(width, 0)} columns = ${formatNumber(cells, 0)} cells; at most ${formatNumber(maxCells, 0)} are allowed`,
    { limit: maxCells, needed: cells, hint: `Ask for fewer stubs or banner columns, in several tab books, or raise maxCells to ${cells} if the machine has the memory for it.` },
    ': ',
  );
}

/** The banner as table columns: a variable expands to its values, a code or an expression is one column. */
function readBanner(info: DatasetInfo, banner: unknown): AxisItem[] {
  if (!Array.isArray(banner) || banner.length === 0) {
    throw invalidOption('banner', 'must be a non-empty list of variables, codes or expressions', 'Pass e.g. banner: ["sex", "race", "age=18..34"].');
  }
  return banner.map((name: unknown, i): AxisItem => {
    const field = `banner[${i}]`;
    if (typeof name === 'object' && name !== null && !Array.isArray(name)) {
      const entry = requireObject(name, field, ['expr', 'label']) as { expr?: unknown; label?: unknown };
      const expr = requireString(entry.expr, `${field}.expr`);
      return entry.label === undefined ? { expr } : { expr, label: requireString(entry.label, `${field}.label`) };
    }
    if (typeof name !== 'string' || name.trim() === '') throw invalidOption(field, 'must be a variable, a code or an expression', 'Pass e.g. "sex", "BA+" or "age=18..34".');
    const variable = info.variables.find((candidate) => candidate.name === name);
    if (variable && !variable.values) throw invalidOption(field, `is ${name}, which has ${formatNumber(variable.distinct, 0)} distinct values: too many for one column each`, 'Put a variable with fewer values, or a codebook code, in the banner.');
    if (variable) return { variable: name };
    if (info.codes.some((code) => code.name === name)) return name;
    // An expression (`age=18..34`, `sex=2 AND race=1`): one column, checked by table() like any column.
    if (/[=()]|\b(AND|OR|NOT)\b/.test(name)) return name;
    throw unknownName(name, field, [...info.variables.map((variable) => variable.name), ...info.codes.map((code) => code.name)], 'variable or code');
  });
}

function readStubs(info: DatasetInfo, stubs: unknown): { stubs: string[]; skipped: Tabbook['skipped'] } {
  if (stubs === 'all') {
    const skipped = info.variables.filter((variable) => !variable.values).map((variable) => ({ variable: variable.name, reason: `${formatNumber(variable.distinct, 0)} distinct values, too many for one row each` }));
    const names = info.variables.filter((variable) => variable.values).map((variable) => variable.name);
    if (names.length === 0) throw invalidOption('stubs', 'is "all", but no variable of the dataset has a value list', 'Name stub variables instead.');
    return { stubs: names, skipped };
  }
  if (!Array.isArray(stubs) || stubs.length === 0) throw invalidOption('stubs', 'must be "all" or a non-empty list of variables', 'Pass e.g. stubs: ["degree", "relig"] or "all".');
  const names = stubs.map((name: unknown, i) => {
    const field = `stubs[${i}]`;
    if (typeof name !== 'string' || name.trim() === '') throw invalidOption(field, 'must be a variable name', 'Pass e.g. "degree".');
    const variable = info.variables.find((candidate) => candidate.name === name);
    if (!variable) throw unknownName(name, field, info.variables.map((candidate) => candidate.name), 'variable');
    if (!variable.values) throw invalidOption(field, `is ${name}, which has ${formatNumber(variable.distinct, 0)} distinct values: too many for one row each`, 'Tabulate it in bands with `crosstab table --row` ranges instead.');
    return name;
  });
  return { stubs: names, skipped: [] };
}

/** An error of table() about column `columns[i]` as one about the banner entry it came from, `banner[j]`. */
async function bannerErrors<T>(run: () => Promise<T>, bannerOfColumn: readonly number[]): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const field = error instanceof CrosstabError ? error.details.field : undefined;
    const match = typeof field === 'string' ? /^columns\[(\d+)\](.*)$/.exec(field) : null;
    const entry = match ? bannerOfColumn[Number(match[1])] : undefined;
    if (!(error instanceof CrosstabError) || entry === undefined) throw error;
    const problem = error.details.problem ?? error.message;
    throw fieldError(error.code, `banner[${entry}]${match![2]!}`, problem, { ...error.details }, ': ');
  }
}

function unknownName(name: string, field: string, known: string[], what: 'variable' | 'variable or code'): CrosstabError {
  const suggestions = suggest(name, known);
  const problem = `unknown ${what} ${quoteText(shorten(name))}${suggestions.length ? `; did you mean ${suggestions.map(quoteText).join(', ')}?` : ''}`;
  return fieldError(ErrorCode.unknownVariable, field, problem, { suggestions, hint: 'Use a variable (or codebook code) of the dataset; names are case-sensitive.', listed: 'variables' }, ': ');
}
