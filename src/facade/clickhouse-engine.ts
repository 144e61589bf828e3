import { CrosstabError, ErrorCode } from '../errors.js';
import type { StoredMeta } from '../dataset/format.js';
import type { DatasetEngine, EngineRun, EngineTable } from './engine.js';
import type { DesignInfo } from './types.js';
import type { CellSums } from '../kernel/kernel.js';
import type { Bound } from '../query/resolve.js';
import { ClickHouseConnection, UNKNOWN_TABLE } from '../clickhouse/connection.js';
import { datasetTables, qualified, versionTables, type DatasetTables, type VersionRow } from '../clickhouse/schema.js';
import { axisMembership, toSql, weightColumn } from '../clickhouse/sql.js';
import { parseClickHouseUrl } from '../clickhouse/url.js';
import { newestVersion, newestVersionNumber, tableNames } from '../clickhouse/versions.js';

/**
 * Tables of at most this many cells are one countIf/sumIf per cell and margin; bigger ones
 * one GROUP BY over arrayJoin()ed row and column indexes. Tests set it to 0 to cover both plans.
 */
export const tablePlans = { cellAggregatesMax: 256 };

/** Big tables write long SQL (one if() per free axis entry): raise 18.16's 256 KiB and AST limits. */
const QUERY_SETTINGS = 'SETTINGS max_query_size = 67108864, max_ast_elements = 10000000, max_expanded_ast_elements = 10000000';

/**
 * Opens a dataset pushed with `crosstab push`: reads its newest published version (the same
 * StoredMeta a compiled file carries, so binding, groups and errors are the local engine's)
 * and returns an engine that sums weights with SQL on the server, over that version's tables
 * only: later pushes publish new versions beside it, and this engine keeps answering from the
 * one it opened until a push removes it (then its queries are refused, never answered from another).
 */
export async function openClickHouseEngine(url: string): Promise<{ engine: ClickHouseEngine; meta: StoredMeta; checksum: string }> {
  const location = parseClickHouseUrl(url, 'path');
  const tables = datasetTables(location.database, location.table);
  const connection = await ClickHouseConnection.connect(location);
  try {
    let row: VersionRow | undefined;
    try {
      row = await newestVersion(connection, tables);
    } catch (error) {
      if (!(error instanceof CrosstabError && error.details.clickhouseCode === UNKNOWN_TABLE)) throw error;
      if ((await tableNames(connection, tables.database)).includes(tables.legacy.meta)) {
        throw new CrosstabError(ErrorCode.unsupportedVersion, `${location.display}: the dataset was pushed by an earlier crosstab, without versions`, {
          file: location.display,
          hint: 'Push it again with `crosstab push DATASET.arrow --clickhouse URL --replace` (docs/clickhouse.md); the push removes the old tables.',
        });
      }
      throw new CrosstabError(ErrorCode.fileNotFound, `${location.display}: no dataset here (table ${tables.database}.${tables.versions} does not exist)`, {
        file: location.display,
        hint: 'Push one first: `crosstab push DATASET.arrow --clickhouse URL` (docs/clickhouse.md).',
      });
    }
    if (!row) {
      throw new CrosstabError(ErrorCode.fileNotFound, `${location.display}: no version of the dataset is published yet (the first push is running or was interrupted)`, {
        file: location.display,
        hint: 'Wait for the push to finish, or push the dataset again.',
      });
    }
    const meta = JSON.parse(row.meta) as StoredMeta;
    const engine = new ClickHouseEngine(connection, location.display, tables, row.version, meta, row.shards);
    return { engine, meta, checksum: row.checksum };
  } catch (error) {
    await connection.close();
    throw error;
  }
}

/** Counts with SQL on ClickHouse: countIf/sumIf per target, one GROUP BY for a table. */
export class ClickHouseEngine implements DatasetEngine {
  readonly design: DesignInfo;

  /** The respondents table of the version this engine opened. */
  private readonly respondents: string;

  constructor(
    private readonly connection: ClickHouseConnection,
    readonly location: string,
    private readonly tables: DatasetTables,
    /** The published version this engine answers from. */
    readonly version: number,
    private readonly meta: StoredMeta,
    readonly shards: number,
  ) {
    this.respondents = qualified(tables.database, versionTables(tables, version).respondents);
    const source = meta.design;
    this.design = {
      kind: 'simple',
      description: source
        ? 'simple (independent respondents): the source dataset\'s design (strata, PSUs or replicate weights) is not pushed to ClickHouse'
        : 'simple (independent respondents, weights only)',
    };
  }

  async cells(base: Bound, targets: readonly Bound[], weight: string | null, run: EngineRun): Promise<CellSums[]> {
    const w = this.weight(weight);
    const aggregates = [`count() AS n`, ...(w ? [`sum(${w}) AS s`, `sum(${w} * ${w}) AS q`] : [])];
    targets.forEach((target, i) => {
      const condition = toSql(target);
      aggregates.push(`countIf(${condition}) AS n${i}`);
      if (w) aggregates.push(`sumIf(${w}, ${condition}) AS s${i}`, `sumIf(${w} * ${w}, ${condition}) AS q${i}`);
    });
    const sql = `SELECT ${aggregates.join(', ')} FROM ${this.respondents} WHERE ${toSql(base)} ${QUERY_SETTINGS}`;
    const [row] = await this.rows<Record<string, string | number>>(sql, run.signal);
    const cell = (suffix: string): CellSums => {
      const respondents = Number(row![`n${suffix}`]);
      return w ? { respondents, weighted: Number(row![`s${suffix}`]), sumSqWeights: Number(row![`q${suffix}`]) } : { respondents, weighted: respondents, sumSqWeights: respondents };
    };
    return [cell(''), ...targets.map((_, i) => cell(String(i)))];
  }

  /**
   * One scan of the base. Small tables: countIf/sumIf per distinct cell or margin condition.
   * Bigger ones: every respondent is counted in its (row, column) cells, row 0 and column 0
   * standing for "any", so the margins and the base come from the same GROUP BY.
   */
  async table(base: Bound, rows: readonly Bound[], columns: readonly Bound[], weight: string | null, run: EngineRun): Promise<EngineTable> {
    const w = this.weight(weight);
    const width = columns.length;
    const size = rows.length * width;
    const table: EngineTable = {
      sums: new Float64Array(size),
      sumsSq: new Float64Array(size),
      counts: new Float64Array(size),
      margins: { rows: rows.map(empty), columns: columns.map(empty) },
      total: empty(),
      plan: 'sql',
      execution: 'clickhouse',
      design: { kind: 'simple', fileRespondents: this.meta.respondents },
    };
    // Row r and column c are 1-based; 0 stands for "any" (margins and the base).
    const place = (r: number, c: number, cell: CellSums): void => {
      if (r === 0 && c === 0) table.total = cell;
      else if (c === 0) table.margins.rows[r - 1] = cell;
      else if (r === 0) table.margins.columns[c - 1] = cell;
      else {
        const at = (r - 1) * width + (c - 1);
        table.counts[at] = cell.respondents;
        table.sums[at] = cell.weighted;
        table.sumsSq[at] = cell.sumSqWeights;
      }
    };
    const sumsOf = (row: Record<string, unknown>, suffix: string): CellSums => {
      const respondents = Number(row[`n${suffix}`]);
      return w ? { respondents, weighted: Number(row[`s${suffix}`]), sumSqWeights: Number(row[`q${suffix}`]) } : { respondents, weighted: respondents, sumSqWeights: respondents };
    };
    const where = `FROM ${this.respondents} WHERE ${toSql(base)}`;
    if (size <= tablePlans.cellAggregatesMax) {
      // Small tables: countIf/sumIf per cell and margin in one scan, no arrayJoin per respondent.
      const slots: Array<[number, number, number]> = [];
      const conditions = new Map<string, number>();
      for (let r = 0; r <= rows.length; r++) {
        for (let c = 0; c <= width; c++) {
          const parts = [...(r > 0 ? [rows[r - 1]!] : []), ...(c > 0 ? [columns[c - 1]!] : [])];
          const condition = toSql({ op: 'and', items: parts });
          if (!conditions.has(condition)) conditions.set(condition, conditions.size);
          slots.push([r, c, conditions.get(condition)!]);
        }
      }
      const aggregates = [...conditions.keys()].flatMap((condition, i) =>
        w ? [`countIf(${condition}) AS n${i}`, `sumIf(${w}, ${condition}) AS s${i}`, `sumIf(${w} * ${w}, ${condition}) AS q${i}`] : [`countIf(${condition}) AS n${i}`],
      );
      // The base's respondents of weight 0, in the same scan: design effects must count them out.
      if (w) aggregates.push(`countIf(${w} = 0) AS z`);
      const [row] = await this.rows<Record<string, unknown>>(`SELECT ${aggregates.join(', ')} ${where} ${QUERY_SETTINGS}`, run.signal);
      for (const [r, c, i] of slots) place(r, c, sumsOf(row!, String(i)));
      zeroWeights(table, row?.z);
    } else {
      const sums = w ? `, sum(${w}) AS s, sum(${w} * ${w}) AS q, countIf(${w} = 0) AS z` : '';
      const sql = `SELECT arrayJoin(${axisMembership(rows, 'rows')}) AS r, arrayJoin(${axisMembership(columns, 'columns')}) AS c, count() AS n${sums} ${where} GROUP BY r, c ${QUERY_SETTINGS}`;
      for (const entry of await this.rows<Record<string, unknown>>(sql, run.signal)) {
        place(Number(entry.r), Number(entry.c), sumsOf(entry, ''));
        if (Number(entry.r) === 0 && Number(entry.c) === 0) zeroWeights(table, entry.z);
      }
    }
    run.onProgress?.(size, size);
    return table;
  }

  verify(): never {
    throw new CrosstabError(ErrorCode.invalidOption, `${this.location} is a ClickHouse dataset: it has no local buffers to verify`, {
      hint: 'ClickHouse checks the checksums of its own parts; `CHECK TABLE` on each shard checks them on demand.',
    });
  }

  close(): void {
    void this.connection.close();
  }

  /**
   * Runs a query over this version's tables. When a later push has removed them (a table is
   * missing here or on a shard), the query is refused, saying which version is current.
   */
  private async rows<T>(sql: string, signal: AbortSignal | undefined): Promise<T[]> {
    try {
      return await this.connection.rows<T>(sql, signal);
    } catch (error) {
      if (!(error instanceof CrosstabError && error.details.clickhouseCode === UNKNOWN_TABLE)) throw error;
      const newest = await newestVersionNumber(this.connection, this.tables).catch(() => undefined);
      if (newest === this.version) throw error;
      throw new CrosstabError(ErrorCode.backendUnavailable, `${this.location}: version ${this.version} of the dataset, which this dataset was opened at, has been removed by a later push (${newest === undefined ? 'no version is published now' : `the current version is ${newest}`})`, {
        hint: 'Open the URL again (restart `crosstab serve`) to answer from the current version; `crosstab push --keep-versions N` keeps more replaced versions for open readers.',
      });
    }
  }

  /** The SQL column of a weight (already checked by the Dataset), or null when unweighted. */
  private weight(name: string | null): string | null {
    if (name === null) return null;
    return weightColumn(this.meta.weights.findIndex((candidate) => candidate.name === name));
  }
}

/** Records the base's respondents of weight 0 in the table's design, when there are any. */
function zeroWeights(table: EngineTable, count: unknown): void {
  const zero = Number(count ?? 0);
  if (zero > 0) table.design = { ...table.design, zeroWeights: zero };
}

function empty(): CellSums {
  return { respondents: 0, weighted: 0, sumSqWeights: 0 };
}
