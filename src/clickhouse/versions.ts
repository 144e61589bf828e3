import { CrosstabError } from '../errors.js';
import { ClickHouseConnection, UNKNOWN_TABLE } from './connection.js';
import { qualified, VERSION_COLUMNS, versionOfTable, type DatasetTables, type VersionRow } from './schema.js';

/**
 * The versions of a pushed dataset. A push writes version N into tables no reader knows yet,
 * then publishes it with one INSERT of one row into the versions table (a MergeTree: a block
 * is visible whole or not at all), then removes versions older than the ones it keeps. A
 * reader takes the newest row and reads only that version's tables, which are never written
 * again: it sees a whole version, and keeps it for as long as it stays open and the version exists.
 */

/** The newest published version, or undefined when none is (rejects with UNKNOWN_TABLE when there is no versions table). */
export async function newestVersion(connection: ClickHouseConnection, tables: DatasetTables): Promise<VersionRow | undefined> {
  const [row] = await connection.rows<VersionRow>(
    `SELECT version, meta, checksum, shards, cluster, pushed_at FROM ${qualified(tables.database, tables.versions)} ORDER BY version DESC LIMIT 1`,
  );
  return row === undefined ? undefined : { ...row, version: Number(row.version), shards: Number(row.shards) };
}

/** The newest published version's number, or undefined (also when the versions table is gone). */
export async function newestVersionNumber(connection: ClickHouseConnection, tables: DatasetTables): Promise<number | undefined> {
  try {
    const [row] = await connection.rows<{ version: number }>(`SELECT max(version) AS version, count() AS n FROM ${qualified(tables.database, tables.versions)} HAVING n > 0`);
    return row === undefined ? undefined : Number(row.version);
  } catch (error) {
    if (error instanceof CrosstabError && error.details.clickhouseCode === UNKNOWN_TABLE) return undefined;
    throw error;
  }
}

export async function createVersionsTable(entry: ClickHouseConnection, tables: DatasetTables): Promise<void> {
  await entry.command(`CREATE TABLE IF NOT EXISTS ${qualified(tables.database, tables.versions)} (${VERSION_COLUMNS}) ENGINE = MergeTree ORDER BY version`);
}

/** Names of the tables of `database` on a server. */
export async function tableNames(node: ClickHouseConnection, database: string): Promise<string[]> {
  const rows = await node.rows<{ name: string }>(`SELECT name FROM system.tables WHERE database = '${database}'`);
  return rows.map((row) => row.name);
}

/** The number of the next version: above every published one and every version table on any server (an interrupted push's too). */
export async function nextVersion(entry: ClickHouseConnection, shards: readonly ClickHouseConnection[], tables: DatasetTables): Promise<number> {
  let highest = (await newestVersionNumber(entry, tables)) ?? 0;
  for (const node of [entry, ...shards]) {
    for (const name of await tableNames(node, tables.database)) highest = Math.max(highest, versionOfTable(tables, name) ?? 0);
  }
  return highest + 1;
}

/** Makes `row` the dataset's newest version: one row, one INSERT. */
export async function publishVersion(entry: ClickHouseConnection, tables: DatasetTables, row: VersionRow): Promise<void> {
  await entry.insertJson(qualified(tables.database, tables.versions), [row]);
}

/**
 * Drops the tables of every version below the newest except the `keep` newest published before
 * it (readers that opened those go on answering from them), and their rows. Versions above
 * the newest belong to a push still writing and are left alone. Returns the versions dropped.
 */
export async function removeOldVersions(entry: ClickHouseConnection, shards: readonly ClickHouseConnection[], tables: DatasetTables, keep: number): Promise<number[]> {
  const published = (await entry.rows<{ version: number }>(`SELECT version FROM ${qualified(tables.database, tables.versions)} ORDER BY version DESC`)).map((row) => Number(row.version));
  const newest = published[0];
  if (newest === undefined) return [];
  const kept = new Set(published.slice(0, 1 + keep));
  const dropped = new Set<number>();
  // The tables readers query first (on the entry server), then the shards' tables under them.
  for (const local of [false, true]) {
    for (const node of local ? shards : [entry]) {
      for (const name of await tableNames(node, tables.database)) {
        const version = versionOfTable(tables, name);
        if (version === undefined || version >= newest || kept.has(version) || name.endsWith('_local') !== local) continue;
        await node.command(`DROP TABLE IF EXISTS ${qualified(tables.database, name)}`);
        dropped.add(version);
      }
    }
  }
  const stale = published.filter((version) => !kept.has(version));
  if (stale.length > 0) await entry.command(`ALTER TABLE ${qualified(tables.database, tables.versions)} DELETE WHERE version IN (${stale.join(', ')})`);
  return [...dropped].sort((a, b) => a - b);
}
