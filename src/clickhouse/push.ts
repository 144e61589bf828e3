import { Readable } from 'node:stream';
import { CrosstabError, ErrorCode, fieldError } from '../errors.js';
import { BufferKind } from '../dataset/format.js';
import { loadDataset, type LoadedDataset } from '../dataset/file/reader.js';
import { mainThreadKernel } from '../kernel/kernel.js';
import { shardsOf } from './cluster-members.js';
import { ClickHouseConnection } from './connection.js';
import { datasetTables, qualified, respondentColumns, versionTables, type DatasetTables, type VersionRow } from './schema.js';
import { checkIdentifier, parseClickHouseUrl, quoteName } from './url.js';
import { createVersionsTable, newestVersionNumber, nextVersion, publishVersion, removeOldVersions, tableNames } from './versions.js';

export interface PushOptions {
  /** The server queries go to: `clickhouse://host:port/db[?table=NAME]` (HTTP port). */
  clickhouse: string;
  /** Table name (overrides the URL's `table=`; default: the survey code in lower case). */
  table?: string;
  /** A `remote_servers` cluster of the server's config: one MergeTree per shard, a Distributed table over them. */
  cluster?: string;
  /** Expected number of shards of `cluster` (checked against system.clusters). */
  shards?: number;
  /** HTTP URL of each shard of `cluster`, once each, in any order (the tables on each shard are created through it). */
  shardUrls?: string[];
  /** Publish a new version of a dataset that exists (without it, an existing dataset is refused). */
  replace?: boolean;
  /** Replaced versions kept for readers that opened them (default 1: the version this push replaces). */
  keepVersions?: number;
  /** Respondents per insert chunk (default 100,000). */
  chunkRows?: number;
  onProgress?: (pushed: number, total: number) => void;
}

export interface PushReport {
  url: string;
  /** The version this push published (1 for a new dataset). */
  version: number;
  /** Older versions this push removed. */
  removedVersions: number[];
  respondents: number;
  variables: number;
  weights: number;
  shards: number;
  seconds: number;
}

interface Column {
  width: 1 | 2 | 4 | 8;
  view: () => Uint8Array | Uint16Array | Uint32Array | Float64Array;
}

/**
 * Loads a compiled dataset into ClickHouse as a new version: every respondent's rank of every
 * variable (as the kernel's index columns hold them: 0 = blank) and every weight, streamed in
 * RowBinary chunks into tables of this version only, split into contiguous respondent ranges,
 * one per shard; then, once every respondent is in, the version is published with one row
 * (versions.ts), so readers see the old version or the new one, whole, never a mix or a part.
 * Design columns (strata/PSU) not stored as variables are not pushed.
 */
export async function pushDataset(path: string, options: PushOptions): Promise<PushReport> {
  const started = performance.now();
  const keep = options.keepVersions ?? 1;
  if (!Number.isInteger(keep) || keep < 0) {
    throw fieldError(ErrorCode.invalidOption, 'keepVersions', `must be a whole number from 0, not ${String(options.keepVersions)}`);
  }
  const kernel = mainThreadKernel();
  const data = await loadDataset(path, kernel, { preload: true });
  try {
    const meta = data.meta;
    // Read (and each weight's values checked) before anything is written to ClickHouse.
    const columns = columnsOf(data);
    const defaultTable = meta.survey.toLowerCase().replace(/[^a-z0-9_]/g, '_').replace(/^(?=\d)/, 't');
    const location = parseClickHouseUrl(options.clickhouse, '--clickhouse', defaultTable);
    if (options.table !== undefined) {
      location.table = checkIdentifier(options.table, 'table');
      location.display = location.display.replace(/\?table=.*$/, `?table=${location.table}`);
    }
    const entry = await ClickHouseConnection.connect(location);
    const shardConnections: ClickHouseConnection[] = [];
    try {
      for (const shard of await shardsOf(entry, location, options)) shardConnections.push(shard.connection);
      const tables = datasetTables(location.database, location.table);
      const db = quoteName(location.database);
      const cluster = options.cluster;
      for (const node of cluster ? [entry, ...shardConnections] : [entry]) await node.command(`CREATE DATABASE IF NOT EXISTS ${db}`);

      const legacy = await legacyTables(entry, shardConnections, tables);
      const published = await newestVersionNumber(entry, tables);
      if ((published !== undefined || legacy.length > 0) && !options.replace) {
        const existing = published !== undefined ? [`version ${published} in ${tables.versions}`] : legacy.map(([node, name]) => `${name} on ${node.location.display}`);
        throw new CrosstabError(ErrorCode.invalidOption, `${location.display}: the dataset already exists (${existing.join(', ')})`, {
          field: 'table',
          hint: 'Set `replace` to publish a new version of it (readers keep answering from the version they opened), or another table name to push beside it.',
          hintOptions: ['replace'],
        });
      }
      await createVersionsTable(entry, tables);
      const version = await nextVersion(entry, shardConnections, tables);
      const names = versionTables(tables, version);

      const widths = meta.variables.map((_, i) => columns[i]!.width as 1 | 2 | 4);
      const definition = respondentColumns(meta, widths);
      // Plain CREATE TABLE: a push that picked the same version number meanwhile fails here, before writing.
      if (cluster) {
        for (const shard of shardConnections) await shard.command(`CREATE TABLE ${qualified(tables.database, names.local)} (${definition}) ENGINE = MergeTree ORDER BY rid`);
        const literal = (text: string) => `'${text.replace(/[\\']/g, '\\$&')}'`;
        await entry.command(
          `CREATE TABLE ${qualified(tables.database, names.respondents)} (${definition}) ENGINE = Distributed(${literal(cluster)}, ${literal(tables.database)}, ${literal(names.local)}, rid)`,
        );
      } else {
        await entry.command(`CREATE TABLE ${qualified(tables.database, names.respondents)} (${definition}) ENGINE = MergeTree ORDER BY rid`);
      }

      const targets = cluster ? shardConnections.map((shard) => ({ node: shard, table: qualified(tables.database, names.local) })) : [{ node: entry, table: qualified(tables.database, names.respondents) }];
      const n = meta.respondents;
      const chunk = options.chunkRows ?? 100_000;
      let pushed = 0;
      await Promise.all(
        targets.map(({ node, table }, s) => {
          const from = Math.floor((n * s) / targets.length);
          const to = Math.floor((n * (s + 1)) / targets.length);
          const body = Readable.from(rowBinaryChunks(columns, from, to, chunk, (rows) => options.onProgress?.((pushed += rows), n)), { objectMode: false });
          return node.insertRowBinary(table, body);
        }),
      );
      // Read back through the table readers will query: a version is published only whole.
      const [counted] = await entry.rows<{ n: string }>(`SELECT count() AS n FROM ${qualified(tables.database, names.respondents)}`);
      if (Number(counted?.n) !== n) {
        throw new CrosstabError(ErrorCode.backendUnavailable, `${location.display}: version ${version} holds ${String(counted?.n)} respondents after the push, not ${n}; it was not published`, {
          hint: 'Check the shards (`shardUrl`) and push again; readers keep the published version.',
          hintOptions: ['shardUrl'],
        });
      }

      const row: VersionRow = { version, meta: JSON.stringify(meta), checksum: data.checksum, shards: targets.length, cluster: cluster ?? '', pushed_at: new Date().toISOString() };
      await publishVersion(entry, tables, row);
      const removedVersions = await removeOldVersions(entry, shardConnections, tables, keep);
      // Tables of a push from before versions: nobody opens them any more once a version is published.
      for (const [node, name] of legacy) await node.command(`DROP TABLE IF EXISTS ${qualified(tables.database, name)}`);
      return {
        url: location.display,
        version,
        removedVersions,
        respondents: n,
        variables: meta.variables.length,
        weights: meta.weights.length,
        shards: targets.length,
        seconds: (performance.now() - started) / 1000,
      };
    } finally {
      for (const node of [entry, ...shardConnections]) await node.close();
    }
  } finally {
    data.close();
    for (const region of data.regions) kernel.memory.release(region.ptr, region.bytes);
  }
}

/**
 * The tables of a push from before versions, metadata first: `NAME_meta` (a TinyLog) and `NAME`
 * on the entry server, `NAME_local` on each shard. Found only when `NAME_meta` is such a TinyLog.
 */
async function legacyTables(entry: ClickHouseConnection, shards: readonly ClickHouseConnection[], tables: DatasetTables): Promise<Array<[ClickHouseConnection, string]>> {
  const [meta] = await entry.rows<{ engine: string }>(`SELECT engine FROM system.tables WHERE database = '${tables.database}' AND name = '${tables.legacy.meta}'`);
  if (meta?.engine !== 'TinyLog') return [];
  const found: Array<[ClickHouseConnection, string]> = [[entry, tables.legacy.meta]];
  if ((await tableNames(entry, tables.database)).includes(tables.legacy.respondents)) found.push([entry, tables.legacy.respondents]);
  for (const shard of shards) if ((await tableNames(shard, tables.database)).includes(tables.legacy.local)) found.push([shard, tables.legacy.local]);
  return found;
}

/** The typed view of each variable's index column, then each weight, over kernel memory. */
function columnsOf(data: LoadedDataset): Column[] {
  const multi = data.meta.variables.find((variable) => variable.kind === 'multi');
  if (multi) {
    throw new CrosstabError(ErrorCode.invalidOption, `${data.meta.survey}: variable "${multi.name}" is multi-response, which the ClickHouse engine does not store yet`, {
      field: multi.name,
      hint: 'Query this dataset with the local engine, or build it without multi-response variables to push it.',
    });
  }
  const memory = mainThreadKernel().memory;
  const n = data.meta.respondents;
  const columns: Column[] = data.meta.variables.map((variable) => {
    const buffer = data.buffer(variable.index);
    if (buffer.kind === BufferKind.indexU8) return { width: 1, view: () => new Uint8Array(memory.memory.buffer, buffer.ptr, n) };
    if (buffer.kind === BufferKind.indexU16) return { width: 2, view: () => new Uint16Array(memory.memory.buffer, buffer.ptr, n) };
    return { width: 4, view: () => new Uint32Array(memory.memory.buffer, buffer.ptr, n) };
  });
  for (const weight of data.meta.weights) {
    const buffer = data.buffer(weight.buffer);
    columns.push({ width: 8, view: () => new Float64Array(memory.memory.buffer, buffer.ptr, n) });
  }
  return columns;
}

/** RowBinary rows `from`..`to`: rid UInt32, then each column little-endian at its width. */
function* rowBinaryChunks(columns: Column[], from: number, to: number, chunk: number, onChunk: (rows: number) => void): Generator<Buffer> {
  const rowBytes = 4 + columns.reduce((sum, column) => sum + column.width, 0);
  for (let start = from; start < to; start += chunk) {
    const end = Math.min(to, start + chunk);
    const out = Buffer.allocUnsafe((end - start) * rowBytes);
    const views = columns.map((column) => column.view());
    let at = 0;
    for (let rid = start; rid < end; rid++) {
      out.writeUInt32LE(rid, at);
      at += 4;
      for (let c = 0; c < columns.length; c++) {
        const value = views[c]![rid]!;
        switch (columns[c]!.width) {
          case 1: out[at] = value; break;
          case 2: out.writeUInt16LE(value, at); break;
          case 4: out.writeUInt32LE(value, at); break;
          default: out.writeDoubleLE(value, at);
        }
        at += columns[c]!.width;
      }
    }
    onChunk(end - start);
    yield out;
  }
}
