import type { StoredMeta } from '../dataset/format.js';
import { variableColumn, weightColumn } from './sql.js';
import { quoteName } from './url.js';

/**
 * Names of the tables of one pushed dataset. Every push writes a new version into tables of
 * its own and publishes it with one row in `versions`; readers open the newest row and read
 * only that version's tables, which no push changes afterwards.
 */
export interface DatasetTables {
  database: string;
  table: string;
  /** One row per published version (a MergeTree on the server the URL names): the newest is the dataset. */
  versions: string;
  /** Tables of a push from before versions (one TinyLog metadata row, no version). */
  legacy: { meta: string; respondents: string; local: string };
}

/** The tables of one version. */
export interface VersionTables {
  /** What queries read: Distributed over the shards, or the MergeTree itself on one server. */
  respondents: string;
  /** The MergeTree table on each shard (cluster pushes only). */
  local: string;
}

export function datasetTables(database: string, table: string): DatasetTables {
  return { database, table, versions: `${table}__versions`, legacy: { meta: `${table}_meta`, respondents: table, local: `${table}_local` } };
}

export function versionTables(tables: DatasetTables, version: number): VersionTables {
  return { respondents: `${tables.table}__v${version}`, local: `${tables.table}__v${version}_local` };
}

/** The version a table of `tables` belongs to (either of its names), or undefined for any other table. */
export function versionOfTable(tables: DatasetTables, name: string): number | undefined {
  const prefix = `${tables.table}__v`;
  if (!name.startsWith(prefix)) return undefined;
  const match = /^(\d+)(?:_local)?$/.exec(name.slice(prefix.length));
  return match ? Number(match[1]) : undefined;
}

export const qualified = (database: string, table: string): string => `${quoteName(database)}.${quoteName(table)}`;

/** Column types of the respondents table: respondent number, one rank per variable (as wide as its index column), one Float64 per weight. */
export function respondentColumns(meta: StoredMeta, widths: readonly (1 | 2 | 4)[]): string {
  const ranks = meta.variables.map((_, i) => `${variableColumn(i)} UInt${widths[i]! * 8}`);
  const weights = meta.weights.map((_, i) => `${weightColumn(i)} Float64`);
  return ['rid UInt32', ...ranks, ...weights].join(', ');
}

/** A published version as stored: its number, StoredMeta JSON and the source dataset's checksum. */
export interface VersionRow {
  version: number;
  meta: string;
  checksum: string;
  shards: number;
  cluster: string;
  pushed_at: string;
}

export const VERSION_COLUMNS = 'version UInt32, meta String, checksum String, shards UInt32, cluster String, pushed_at String';
