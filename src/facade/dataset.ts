import { shareSameSetSums } from './same-sets.js';
import { CrosstabError, ErrorCode, throwIfCancelled } from '../errors.js';
import { AXIS_LIMIT, type StoredMeta } from '../dataset/format.js';
import { loadDataset, type LoadOptions } from '../dataset/file/reader.js';
import { mainThreadKernel } from '../kernel/kernel.js';
import { Evaluator } from '../query/evaluate.js';
import { checkpoint, passCheckpoint } from '../query/executor.js';
import { type Bound, type Resolved, Resolver } from '../query/resolve.js';
import type { CellSums } from '../kernel/kernel.js';
import { isClickHouseUrl } from '../clickhouse/url.js';
import { describeDataset, stabilityOf } from './dataset-info.js';
import type { LoadedWeightsFile } from '../dataset/file/loaded-dataset.js';
import type { DatasetEngine } from './engine.js';
import { InFlight } from './in-flight.js';
import { LocalEngine } from './local-engine.js';
import { describeValue, invalidOption, requireGroups, requireObject, requireSignal, requireString, requireStringArray, resolveWeight } from './options.js';
import { expandAxis, readMissingMode, readPercentBase } from './axes.js';
import { type ColumnOverlaps, overlappingPairs, readColumnGroups, variableRuns } from './column-overlaps.js';
import type { AxisEntry, Cell, CrosstabQuery, CrosstabResult, DatasetInfo, TableQuery, TableResult } from './types.js';
import { formatNumber } from '../text/number-text.js';

/** Most targets one crosstab() call takes (the REST contract allows 2; tables go further). */
export const MAX_TARGETS = AXIS_LIMIT;

export interface OpenOptions extends LoadOptions {
  /**
   * Where table work runs: `auto` (default) runs work estimated under ~1 ms on the calling
   * thread and splits bigger tables across the worker pool; `inline` never uses the pool;
   * `pool` always does.
   */
  execution?: 'auto' | 'inline' | 'pool';
  /**
   * Most crosstab cells (base, or base AND target, per weight) kept in memory to answer a
   * repeated query without the kernel: the dataset never changes, so a kept cell is exact.
   * Default 10,000 (about 1 MB) for a dataset file, 0 (off) for a ClickHouse table, which
   * `crosstab push --replace` can change under an open dataset. Tables are not cached.
   */
  cellCache?: number;
}

/** Options of Dataset.close(). */
export interface CloseOptions {
  /** Let the calls in flight finish instead of rejecting them (new calls are refused at once). Default false. */
  drain?: boolean;
  /** With `drain`: most milliseconds to wait; calls still running then reject with `dataset_closed`. Default 30,000. */
  timeoutMs?: number;
}

/** Default of CloseOptions.timeoutMs. */
export const DEFAULT_DRAIN_MS = 30_000;
const CLOSE_OPTIONS = ['drain', 'timeoutMs'] as const satisfies ReadonlyArray<keyof CloseOptions>;

/** The keys of OpenOptions: any other key is refused. */
const OPEN_OPTIONS = ['execution', 'cellCache', 'verify', 'preload'] as const satisfies ReadonlyArray<keyof OpenOptions>;
const CROSSTAB_OPTIONS = ['base', 'targets', 'weight', 'allowedGroups', 'signal'] as const satisfies ReadonlyArray<keyof CrosstabQuery>;
const TABLE_OPTIONS = ['base', 'rows', 'columns', 'weight', 'allowedGroups', 'signal', 'onProgress', 'missing', 'percentBase', 'columnGroups'] as const satisfies ReadonlyArray<keyof TableQuery>;

/** Default of OpenOptions.cellCache. */
export const DEFAULT_CELL_CACHE = 10_000;
/** Key of the base's own cell among a base's cached cells. */
const BASE_CELL: Bound = { op: 'all' };

/**
 * Opens a compiled dataset (see `crosstab build`): validates the file and loads its
 * buffers into kernel memory. Rejects with CrosstabError (`file_not_found`,
 * `corrupt_dataset`, `unsupported_version`).
 *
 * A `clickhouse://host:port/database?table=NAME` address opens a dataset pushed to
 * ClickHouse with `crosstab push` instead: the same queries, compiled to SQL
 * (docs/clickhouse.md); an unreachable server rejects with `backend_unavailable`.
 */
export async function openDataset(path: string, openOptions?: OpenOptions): Promise<Dataset> {
  if (typeof path !== 'string' || path === '') {
    throw new CrosstabError(ErrorCode.invalidOption, 'path must be a non-empty string', { field: 'path', hint: 'Pass the path of a .arrow dataset.' });
  }
  const options = (openOptions === undefined ? {} : requireObject(openOptions, 'options', OPEN_OPTIONS)) as OpenOptions;
  const execution = options.execution ?? 'auto';
  if (!['auto', 'inline', 'pool'].includes(execution)) {
    throw invalidOption('execution', 'must be "auto", "inline" or "pool"', 'Leave it out for automatic planning.');
  }
  if (options.verify !== undefined && options.verify !== true && options.verify !== false && options.verify !== 'full') {
    throw invalidOption('verify', 'must be true, false or "full"', 'Leave it out to check each buffer before its first use; "full" checks all at open.');
  }
  const cellCache = options.cellCache ?? DEFAULT_CELL_CACHE;
  if (!Number.isInteger(cellCache) || cellCache < 0) {
    throw invalidOption('cellCache', `must be a whole number of cells (0 turns the cache off); got ${describeValue(options.cellCache)}`, `Leave it out for ${formatNumber(DEFAULT_CELL_CACHE, 0)}.`);
  }
  if (options.preload !== undefined && typeof options.preload !== 'boolean') {
    throw invalidOption('preload', 'must be true or false', 'Pass preload: true to read every buffer at open.');
  }
  if (isClickHouseUrl(path)) {
    const { openClickHouseEngine } = await import('./clickhouse-engine.js');
    const { engine, meta, checksum } = await openClickHouseEngine(path);
    // A pushed table can be replaced (`crosstab push --replace`) under an open dataset: no cache unless asked for.
    return new Dataset(engine, meta, checksum, options.cellCache ?? 0);
  }
  const kernel = mainThreadKernel();
  const data = await loadDataset(path, kernel, options);
  return new Dataset(new LocalEngine(data, kernel, new Evaluator(kernel, data), execution), data.meta, data.checksum, cellCache, data.weightsFile);
}

/** A survey dataset, open for queries. */
export class Dataset {
  /** What the dataset holds: survey code, variables, codes, weights, thresholds. */
  readonly info: DatasetInfo;
  private readonly resolver: Resolver;
  /** Calls in flight; close() stops them and frees the engine once their work has settled. */
  private readonly inFlight: InFlight;
  /**
   * Cells computed before, per weight: bound base → (bound target, or BASE_CELL) → sums.
   * Keyed by the bound expressions, which the resolver hands out again for the same text.
   */
  private cells = new Map<string, WeakMap<Bound, Map<Bound, CellSums>>>();
  private cachedCells = 0;
  private readonly cache = { hits: 0, misses: 0 };

  /** @internal Use openDataset(). */
  constructor(
    private readonly engine: DatasetEngine,
    meta: StoredMeta,
    checksum: string,
    private readonly maxCachedCells = DEFAULT_CELL_CACHE,
    weightsFile?: LoadedWeightsFile,
  ) {
    this.info = { ...describeDataset({ meta, checksum, ...(weightsFile ? { weightsFile } : {}) }), design: engine.design };
    this.resolver = new Resolver(meta);
    this.inFlight = new InFlight(
      () => this.closedError(),
      () => engine.close(),
    );
  }

  /**
   * Weighted sum, respondent count, sum of squared weights and stability of
   * `base AND target` for each target, plus the base itself.
   */
  crosstab(query: CrosstabQuery): Promise<CrosstabResult> {
    const answer = this.crosstabNow(query);
    return answer instanceof Promise ? answer : Promise.resolve(answer);
  }

  /**
   * crosstab(), with the result itself rather than a promise of it when the cell cache holds
   * every cell and the calling thread's slice has time left (checkpoint()): an answer from
   * memory then makes no promise at all. Otherwise, and for every failure, the promise
   * crosstab() returns. For a caller that answers many cached queries (a REST service).
   */
  crosstabNow(query: CrosstabQuery): CrosstabResult | Promise<CrosstabResult> {
    let base: Bound;
    let targets: Bound[];
    let weight: string | null;
    let signal: AbortSignal | undefined;
    try {
      this.checkOpen();
      const options = requireObject(query, 'query', CROSSTAB_OPTIONS);
      const baseText = requireString(options.base, 'base');
      const targetTexts = requireStringArray(options.targets, 'targets', MAX_TARGETS);
      const allowed = requireGroups(options.allowedGroups, 'allowedGroups');
      weight = resolveWeight(options.weight, this.info, 'weight', allowed);
      // An already-aborted signal rejects like one aborted mid-query: `cancelled`, not the signal's DOMException.
      signal = requireSignal(options.signal, 'signal');
      throwIfCancelled(signal, 'the query');
      base = this.bind(baseText, 'base', allowed).bound;
      targets = targetTexts.map((target, i) => this.bind(target, `targets[${i}]`, allowed).bound);
      // Answered from memory, but the event loop still gets its turn when one is due (a host
      // repeating cached questions without end must not starve its own timers): then the
      // call goes the way of any other, through checkpoint().
      const found = this.cellsInCache(base, targets, weight);
      if (found !== undefined && passCheckpoint()) {
        this.cache.hits++;
        return this.crosstabResult(found, weight);
      }
    } catch (error) {
      return Promise.reject(error);
    }
    return this.inFlight.run(signal, (running) => this.cellsOf(base, targets, weight, running)).then((cells) => this.crosstabResult(cells, weight));
  }

  private crosstabResult(cells: readonly CellSums[], weight: string | null): CrosstabResult {
    const targets: Cell[] = [];
    for (let i = 1; i < cells.length; i++) targets.push(this.toCell(cells[i]!));
    return { base: this.toCell(cells[0]!), targets, weight, units: this.info.units };
  }

  /** The base's cell and each target's when the cell cache holds them all, else undefined. */
  private cellsInCache(base: Bound, targets: readonly Bound[], weight: string | null): CellSums[] | undefined {
    if (this.maxCachedCells === 0) return undefined;
    const known = this.cells.get(weight ?? '')?.get(base);
    const baseCell = known?.get(BASE_CELL);
    if (known === undefined || baseCell === undefined) return undefined;
    const found: CellSums[] = [baseCell];
    for (const target of targets) {
      const cell = known.get(target);
      if (cell === undefined) return undefined;
      found.push(cell);
    }
    return found;
  }

  /** The base's cell and each target's, from the cell cache where it has them, else from the engine. */
  private async cellsOf(base: Bound, targets: readonly Bound[], weight: string | null, signal: AbortSignal): Promise<CellSums[]> {
    if (this.maxCachedCells === 0) return this.engine.cells(base, targets, weight, { signal });
    const key = weight ?? '';
    let byBase = this.cells.get(key);
    if (byBase === undefined) this.cells.set(key, (byBase = new WeakMap()));
    const found = this.cellsInCache(base, targets, weight);
    if (found !== undefined) {
      this.cache.hits++;
      // Answered from memory, but still a turn for the event loop when it is due: a host
      // repeating cached questions without end must not starve its own timers.
      await checkpoint(signal);
      return found;
    }
    this.cache.misses++;
    const computed = await this.engine.cells(base, targets, weight, { signal });
    if (computed.length > this.maxCachedCells) return computed;
    if (this.cachedCells + computed.length > this.maxCachedCells) {
      this.cells = new Map([[key, (byBase = new WeakMap())]]);
      this.cachedCells = 0;
    }
    let cells = byBase.get(base);
    if (cells === undefined) byBase.set(base, (cells = new Map()));
    const add = (bound: Bound, sums: CellSums): void => {
      if (!cells.has(bound)) this.cachedCells++;
      cells.set(bound, sums);
    };
    add(BASE_CELL, computed[0]!);
    targets.forEach((target, i) => add(target, computed[i + 1]!));
    return computed;
  }

  /**
   * A table of base AND row AND column cells, with margins. Rows and columns are
   * expressions, `{expr, label}` or `{variable}` (one entry per value, and with `missing:
   * 'show'`, the default, a "No answer" entry when the base has blanks on the variable);
   * up to MAX_AXIS (5,000) each.
   */
  async table(query: TableQuery): Promise<TableResult> {
    this.checkOpen();
    const options = requireObject(query, 'query', TABLE_OPTIONS);
    const base = requireString(options.base, 'base');
    const missing = readMissingMode(options.missing);
    const percentBase = readPercentBase(options.percentBase);
    const allowed = requireGroups(options.allowedGroups, 'allowedGroups');
    const expandedRows = expandAxis(options.rows, 'rows', this.info, missing === 'show', allowed);
    const expandedColumns = expandAxis(options.columns, 'columns', this.info, missing === 'show', allowed);
    const weight = resolveWeight(options.weight, this.info, 'weight', allowed);
    const signal = requireSignal(options.signal, 'signal');
    const onProgress = options.onProgress as TableQuery['onProgress'];
    if (onProgress !== undefined && typeof onProgress !== 'function') throw invalidOption('onProgress', 'must be a function', 'Pass (done, total) => void.');

    const boundBase = this.bind(base, 'base', allowed).bound;
    // Field names count the entries as expanded without "No answer" entries: rows[i] is the i-th value entry.
    const bindAxis = (entries: AxisEntry[], option: 'rows' | 'columns') => {
      let position = 0;
      return entries.map((entry) => (entry.missing ? this.bind(entry.expr, option, allowed).bound : this.bind(entry.expr, `${option}[${position++}]`, allowed).bound));
    };
    const allRows = bindAxis(expandedRows, 'rows');
    const allColumns = bindAxis(expandedColumns, 'columns');
    const { cells, rows, columns, groups, overlaps } = await this.inFlight.run(signal, async (running) => {
      // A "No answer" entry stays only when the base has respondents with that blank.
      const keepRows = await this.answeredOrBlank(boundBase, expandedRows, allRows, weight, running);
      const keepColumns = await this.answeredOrBlank(boundBase, expandedColumns, allColumns, weight, running);
      const rows = expandedRows.filter((_, i) => keepRows[i]);
      const columns = expandedColumns.filter((_, i) => keepColumns[i]);
      const boundRows = allRows.filter((_, i) => keepRows[i]);
      const boundColumns = allColumns.filter((_, i) => keepColumns[i]);
      const groups = readColumnGroups(options.columnGroups, columns.length);
      const cells = await this.engine.table(boundBase, boundRows, boundColumns, weight, { signal: running, onProgress });
      // The respondents in both columns of each pair that may overlap: one more table, whose columns are (A AND B).
      // Default groups overlap only for a multi-response variable's values; else no pair, no extra table. Their
      // pairs are left uncounted when more than an axis takes, or refused by the engine (per-PSU sums past its
      // cap): the table stays, and a column test of those columns is refused naming what to do.
      const defaults = groups === undefined;
      const all = overlappingPairs(columns, groups ?? variableRuns(columns));
      const pairs = defaults && all.length > AXIS_LIMIT ? [] : all;
      let both: Awaited<ReturnType<DatasetEngine['table']>> | undefined;
      try {
        both = pairs.length === 0 ? undefined : await this.engine.table(boundBase, boundRows, pairs.map(([a, b]): Bound => ({ op: 'and', items: [boundColumns[a]!, boundColumns[b]!] })), weight, { signal: running });
      } catch (error) {
        if (!defaults || !(error instanceof CrosstabError) || error.code !== ErrorCode.invalidOption) throw error;
      }
      shareSameSetSums(cells, boundRows.length, boundColumns.length, both && { table: both, pairs });
      const overlaps: ColumnOverlaps | undefined = both && { pairs, weighted: both.sums, respondents: both.counts, sumSqWeights: both.sumsSq, totals: both.margins.columns.map((sums) => this.toCell(sums)) };
      return { cells, rows, columns, groups, overlaps };
    });
    const thresholds = this.info.stability;
    const width = columns.length;
    return {
      base,
      rows,
      columns,
      weighted: cells.sums,
      respondents: cells.counts,
      sumSqWeights: cells.sumsSq,
      rowTotals: cells.margins.rows.map((sums) => this.toCell(sums)),
      columnTotals: cells.margins.columns.map((sums) => this.toCell(sums)),
      total: this.toCell(cells.total),
      weight,
      units: this.info.units,
      stability: { ...thresholds },
      missing,
      percentBase,
      plan: cells.plan,
      execution: cells.execution,
      design: cells.design,
      ...(groups === undefined ? {} : { columnGroups: groups }),
      ...(overlaps === undefined ? {} : { overlaps }),
      cell(row: number, column: number): Cell {
        const at = row * width + column;
        const respondents = cells.counts[at]!;
        return { weighted: cells.sums[at]!, respondents, sumSqWeights: cells.sumsSq[at]!, stability: stabilityOf(respondents, thresholds) };
      },
    };
  }

  /**
   * Per entry of an axis, whether it stays: every value entry does; a "No answer" entry
   * only when the base has at least one respondent with a blank on its variable (one
   * cell each, counted before the table).
   */
  private async answeredOrBlank(base: Bound, entries: readonly AxisEntry[], bound: readonly Bound[], weight: string | null, signal: AbortSignal): Promise<boolean[]> {
    const blanks = entries.flatMap((entry, i) => (entry.missing ? [i] : []));
    const keep = entries.map(() => true);
    if (blanks.length === 0) return keep;
    const [, ...cells] = await this.engine.cells(base, blanks.map((i) => bound[i]!), weight, { signal });
    blanks.forEach((i, k) => (keep[i] = cells[k]!.respondents > 0));
    return keep;
  }

  /**
   * Authorization groups an expression touches (for entitlement checks). Throws on a bad
   * expression; with `allowedGroups`, as a query with them does (another group's names are
   * unknown names, and no message names anything of another group).
   */
  groupsOf(expression: string, allowedGroups?: readonly string[]): string[] {
    this.checkOpen();
    const allowed = requireGroups(allowedGroups, 'allowedGroups');
    return [...this.resolver.resolve(requireString(expression, 'expression'), undefined, allowed).groups.keys()].sort();
  }

  /**
   * The cell cache's counts since the dataset opened: crosstab() calls answered wholly from
   * it (hits), calls that asked the engine (misses; none counted when the cache is off), and
   * the cells it holds now.
   */
  cacheStats(): { hits: number; misses: number; cells: number; maxCells: number } {
    return { hits: this.cache.hits, misses: this.cache.misses, cells: this.cachedCells, maxCells: this.maxCachedCells };
  }

  /**
   * Checks every buffer of the dataset against its checksum now (openDataset checks each
   * one before a query first reads it). Throws `corrupt_dataset` naming the first damaged
   * buffer; returns how many buffers and bytes the dataset holds. A ClickHouse dataset has
   * no local buffers: it throws `invalid_option`.
   */
  verify(): { buffers: number; bytes: number } {
    this.checkOpen();
    return this.engine.verify();
  }

  /**
   * Closes the dataset: calls made after close() reject with `dataset_closed`. Calls still
   * in flight reject with `dataset_closed` at once, or, with `{ drain: true }`, run to their
   * end (those still running after `timeoutMs`, default 30 s, are stopped then). Its kernel
   * memory (or its ClickHouse connection) is released when the work those calls had started
   * has stopped; the returned promise resolves then.
   *
   * To swap datasets in a running service without failing a call: open the new file, point
   * callers at it, then `await old.close({ drain: true })`.
   */
  close(options?: CloseOptions): Promise<void> {
    try {
      const { drain, timeoutMs } = (options === undefined ? {} : requireObject(options, 'options', CLOSE_OPTIONS)) as CloseOptions;
      if (drain !== undefined && typeof drain !== 'boolean') throw invalidOption('drain', `must be true or false; got ${describeValue(drain)}`, 'Pass drain: true to let the calls in flight finish.');
      if (timeoutMs !== undefined && (!Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > 2_147_483_647)) {
        throw invalidOption('timeoutMs', `must be a whole number of milliseconds; got ${describeValue(timeoutMs)}`, `Leave it out for ${formatNumber(DEFAULT_DRAIN_MS, 0)}.`);
      }
      if (timeoutMs !== undefined && drain !== true) throw invalidOption('timeoutMs', 'applies to a drain', 'Pass drain: true with it, or leave it out.');
      return this.inFlight.close(drain === true ? (timeoutMs ?? DEFAULT_DRAIN_MS) : undefined);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Keeps the dataset open for work of several calls begun before a close (a request of a
   * service that swaps datasets): until the returned function is called, a draining
   * `close({ drain: true })` waits for it and still takes its calls, up to the drain's time
   * limit. Call the function once the work is done; on a closed dataset it holds nothing.
   */
  hold(): () => void {
    return this.inFlight.hold();
  }

  /** Calls in flight: started and not yet settled (a draining close() waits for them). */
  get pendingCalls(): number {
    return this.inFlight.size;
  }

  /** Binds an expression; a variable or code outside `allowed` is refused before its values are read. */
  private bind(expression: string, field: string, allowed: readonly string[] | undefined): Resolved {
    return this.resolver.resolve(expression, field, allowed);
  }

  private toCell(sums: { respondents: number; weighted: number; sumSqWeights: number }): Cell {
    return { respondents: sums.respondents, weighted: sums.weighted, sumSqWeights: sums.sumSqWeights, stability: stabilityOf(sums.respondents, this.info.stability) };
  }

  private checkOpen(): void {
    if (this.inFlight.closed) throw this.closedError();
  }

  private closedError(): CrosstabError {
    return new CrosstabError(ErrorCode.closed, `dataset ${this.engine.location} is closed`, { hint: 'Open it again with openDataset().' });
  }
}
