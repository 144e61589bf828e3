import type { StoredMeta } from '../dataset/format.js';
import { variableColumn, weightColumn } from './sql.js';
import { quoteName } from './url.js';

/** Names of the tables of one pushed dataset. */
export interface DatasetTables {
  database: string;
  /** What queries read: Distributed over the shards, or the MergeTree itself on one server. */
  respondents: string;
  /** The MergeTree table on each shard (cluster pushes only). */
  local: string;
  /** One row: the dataset's metadata as JSON, on the server the URL names. */
  meta: string;
}

export function datasetTables(database: string, table: string): DatasetTables {
  return { database, respondents: table, local: `${table}_local`, meta: `${table}_meta` };
}

export const qualified = (database: string, table: string): string => `${quoteName(database)}.${quoteName(table)}`;

/** Column types of the respondents table: respondent number, one rank per variable (as wide as its index column), one Float64 per weight. */
export function respondentColumns(meta: StoredMeta, widths: readonly (1 | 2 | 4)[]): string {
  const ranks = meta.variables.map((_, i) => `${variableColumn(i)} UInt${widths[i]! * 8}`);
  const weights = meta.weights.map((_, i) => `${weightColumn(i)} Float64`);
  return ['rid UInt32', ...ranks, ...weights].join(', ');
}

/** The metadata row as stored: StoredMeta JSON and the source dataset's checksum. */
export interface MetaRow {
  meta: string;
  checksum: string;
  shards: number;
  cluster: string;
  pushed_at: string;
}

export const META_COLUMNS = 'meta String, checksum String, shards UInt32, cluster String, pushed_at String';
