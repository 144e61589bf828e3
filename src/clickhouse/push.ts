import { Readable } from 'node:stream';
import { CrosstabError, ErrorCode } from '../errors.js';
import { BufferKind } from '../dataset/format.js';
import { loadDataset, type LoadedDataset } from '../dataset/reader.js';
import { mainThreadKernel } from '../kernel/kernel.js';
import { ClickHouseConnection } from './connection.js';
import { datasetTables, META_COLUMNS, qualified, respondentColumns, type MetaRow } from './schema.js';
import { checkIdentifier, parseClickHouseUrl, quoteName, type ClickHouseLocation } from './url.js';

export interface PushOptions {
  /** The server queries go to: `clickhouse://host:port/db[?table=NAME]` (HTTP port). */
  clickhouse: string;
  /** Table name (overrides the URL's `table=`; default: the survey code in lower case). */
  table?: string;
  /** A `remote_servers` cluster of the server's config: one MergeTree per shard, a Distributed table over them. */
  cluster?: string;
  /** Expected number of shards of `cluster` (checked against system.clusters). */
  shards?: number;
  /** HTTP URL of each shard, in the cluster's order (the tables on each shard are created through it). */
  shardUrls?: string[];
  /** Drop the dataset's tables first when they exist. */
  replace?: boolean;
  /** Respondents per insert chunk (default 100,000). */
  chunkRows?: number;
  onProgress?: (pushed: number, total: number) => void;
}

export interface PushReport {
  url: string;
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
 * Loads a compiled dataset into ClickHouse: every respondent's rank of every variable (as the
 * kernel's index columns hold them: 0 = blank) and every weight, streamed in RowBinary chunks,
 * split into contiguous respondent ranges, one per shard; then the metadata row, last, so an
 * interrupted push leaves no openable dataset. Design columns (strata/PSU) not stored as
 * variables are not pushed.
 */
export async function pushDataset(path: string, options: PushOptions): Promise<PushReport> {
  const started = performance.now();
  const kernel = mainThreadKernel();
  const data = await loadDataset(path, kernel, { preload: true });
  try {
    const meta = data.meta;
    const defaultTable = meta.survey.toLowerCase().replace(/[^a-z0-9_]/g, '_').replace(/^(?=\d)/, 't');
    const location = parseClickHouseUrl(options.clickhouse, '--clickhouse', defaultTable);
    if (options.table !== undefined) {
      location.table = checkIdentifier(options.table, '--table');
      location.display = location.display.replace(/\?table=.*$/, `?table=${location.table}`);
    }
    const entry = await ClickHouseConnection.connect(location);
    const shardConnections: ClickHouseConnection[] = [];
    try {
      for (const shard of await shardsOf(entry, location, options)) shardConnections.push(shard.connection);
      const tables = datasetTables(location.database, location.table);
      const db = quoteName(location.database);
      const cluster = options.cluster;
      const nodes = cluster ? [entry, ...shardConnections] : [entry];
      for (const node of nodes) await node.command(`CREATE DATABASE IF NOT EXISTS ${db}`);

      const existing: string[] = [];
      const exists = async (node: ClickHouseConnection, table: string) => {
        const [row] = await node.rows<{ result: number }>(`EXISTS TABLE ${qualified(tables.database, table)}`);
        if (Number(row?.result) === 1) existing.push(`${table} on ${node.location.display}`);
      };
      await exists(entry, tables.meta);
      await exists(entry, tables.respondents);
      for (const shard of shardConnections) await exists(shard, tables.local);
      if (existing.length > 0) {
        if (!options.replace) {
          throw new CrosstabError(ErrorCode.invalidOption, `${location.display}: the dataset's tables already exist (${existing.join(', ')})`, {
            field: '--table',
            hint: 'Pass --replace to drop and push them again, or --table NAME to push beside them.',
          });
        }
        await entry.command(`DROP TABLE IF EXISTS ${qualified(tables.database, tables.meta)}`);
        await entry.command(`DROP TABLE IF EXISTS ${qualified(tables.database, tables.respondents)}`);
        for (const shard of shardConnections) await shard.command(`DROP TABLE IF EXISTS ${qualified(tables.database, tables.local)}`);
      }

      const columns = columnsOf(data);
      const widths = meta.variables.map((_, i) => columns[i]!.width as 1 | 2 | 4);
      const definition = respondentColumns(meta, widths);
      if (cluster) {
        for (const shard of shardConnections) await shard.command(`CREATE TABLE ${qualified(tables.database, tables.local)} (${definition}) ENGINE = MergeTree ORDER BY rid`);
        const literal = (text: string) => `'${text.replace(/[\\']/g, '\\$&')}'`;
        await entry.command(
          `CREATE TABLE ${qualified(tables.database, tables.respondents)} (${definition}) ENGINE = Distributed(${literal(cluster)}, ${literal(tables.database)}, ${literal(tables.local)}, rid)`,
        );
      } else {
        await entry.command(`CREATE TABLE ${qualified(tables.database, tables.respondents)} (${definition}) ENGINE = MergeTree ORDER BY rid`);
      }

      const targets = cluster ? shardConnections.map((shard) => ({ node: shard, table: qualified(tables.database, tables.local) })) : [{ node: entry, table: qualified(tables.database, tables.respondents) }];
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

      await entry.command(`CREATE TABLE ${qualified(tables.database, tables.meta)} (${META_COLUMNS}) ENGINE = TinyLog`);
      const row: MetaRow = { meta: JSON.stringify(meta), checksum: data.checksum, shards: targets.length, cluster: cluster ?? '', pushed_at: new Date().toISOString() };
      await entry.insertJson(qualified(tables.database, tables.meta), [row]);
      return {
        url: location.display,
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

/** One server of a `remote_servers` cluster as system.clusters lists it (port: its native TCP port). */
interface Member {
  shard_num: number;
  replica_num: number;
  host_name: string;
  host_address: string;
  port: number;
  is_local: number;
}

const describeMember = (member: Member): string => `${member.host_name}:${member.port} (shard ${member.shard_num})`;

/**
 * Shard HTTP endpoints for a cluster push, checked against the cluster's definition on the
 * entry server: each --shard-url must be a server of the cluster (it finds itself in its own
 * system.clusters, at a host and native port the entry server lists), every shard must be
 * given exactly once, and every shard must have one replica (the tables are plain MergeTrees,
 * so a second replica would answer without the data). A mismatch is refused before anything
 * is written: a push to a server the Distributed table does not read would answer from stale shards.
 */
async function shardsOf(entry: ClickHouseConnection, location: ClickHouseLocation, options: PushOptions): Promise<Array<{ location: ClickHouseLocation; connection: ClickHouseConnection }>> {
  const cluster = options.cluster;
  if (cluster === undefined) {
    if (options.shards !== undefined || options.shardUrls?.length) {
      throw new CrosstabError(ErrorCode.invalidOption, '--shards and --shard-url need --cluster NAME', { field: '--cluster', hint: 'Name the remote_servers cluster of the server config.' });
    }
    return [];
  }
  checkIdentifier(cluster, '--cluster');
  const membersSql = `SELECT shard_num, replica_num, host_name, host_address, port, is_local FROM system.clusters WHERE cluster = '${cluster}' ORDER BY shard_num, replica_num`;
  const members = (await entry.rows<Member>(membersSql)).map(numericMember);
  if (members.length === 0) {
    const names = await entry.rows<{ cluster: string }>('SELECT DISTINCT cluster FROM system.clusters ORDER BY cluster');
    throw new CrosstabError(ErrorCode.invalidOption, `--cluster: ${location.display} has no cluster "${cluster}" in its remote_servers`, {
      field: '--cluster',
      suggestions: names.map((row) => row.cluster),
      hint: `Clusters defined there: ${names.map((row) => row.cluster).join(', ') || 'none'}.`,
    });
  }
  const listed = members.map(describeMember).join(', ');
  const replicated = members.find((member) => member.replica_num > 1);
  if (replicated) {
    throw new CrosstabError(ErrorCode.invalidOption, `--cluster: shard ${replicated.shard_num} of cluster "${cluster}" has more than one replica (${listed})`, {
      field: '--cluster',
      hint: 'push writes one plain MergeTree table per shard, so another replica of a shard would answer without its respondents: use a cluster with one server per shard.',
    });
  }
  const shardCount = members.length;
  if (options.shards !== undefined && options.shards !== shardCount) {
    throw new CrosstabError(ErrorCode.invalidOption, `--shards ${options.shards}: cluster "${cluster}" has ${shardCount} shards`, { field: '--shards', hint: `Pass --shards ${shardCount}, or fix remote_servers.` });
  }
  const urls = options.shardUrls ?? [];
  const shards: Array<{ location: ClickHouseLocation; connection: ClickHouseConnection; member: Member }> = [];
  try {
    for (const [i, url] of urls.entries()) {
      const parsed = parseClickHouseUrl(url, `--shard-url[${i}]`, location.table);
      const shard = { ...parsed, display: parsed.http };
      const connection = await ClickHouseConnection.connect(shard);
      shards.push({ location: shard, connection, member: await memberAt(connection, membersSql, members, cluster, listed) });
    }
    for (const [i, shard] of shards.entries()) {
      const first = shards.findIndex((other) => other.member.shard_num === shard.member.shard_num);
      if (first !== i) {
        throw new CrosstabError(ErrorCode.invalidOption, `--shard-url ${shard.location.http} and --shard-url ${shards[first]!.location.http} are the same server of cluster "${cluster}": ${describeMember(shard.member)}`, {
          field: '--shard-url',
          hint: `Give each shard's HTTP URL once. Members of "${cluster}" (host:native port): ${listed}.`,
        });
      }
    }
    const missing = members.filter((member) => !shards.some((shard) => shard.member.shard_num === member.shard_num));
    if (missing.length > 0) {
      throw new CrosstabError(ErrorCode.invalidOption, `cluster "${cluster}" has ${shardCount} shards, and no --shard-url names ${missing.map(describeMember).join(', ')}`, {
        field: '--shard-url',
        hint: `Give the HTTP URL of every shard (--shard-url once each; members of "${cluster}", host:native port: ${listed}): its MergeTree table is created through it (18.16 has no ON CLUSTER without ZooKeeper).`,
      });
    }
  } catch (error) {
    for (const shard of shards) await shard.connection.close();
    throw error;
  }
  return shards.map(({ location: shard, connection }) => ({ location: shard, connection }));
}

function numericMember(row: Member): Member {
  return { ...row, shard_num: Number(row.shard_num), replica_num: Number(row.replica_num), port: Number(row.port), is_local: Number(row.is_local) };
}

/** The member of `cluster` the server behind `connection` is: the one it calls local in its own system.clusters, matched with the entry server's list. */
async function memberAt(connection: ClickHouseConnection, membersSql: string, members: readonly Member[], cluster: string, listed: string): Promise<Member> {
  const url = connection.location.display;
  const hint = `Each --shard-url must be the HTTP URL of one server of "${cluster}" (members, host:native port: ${listed}), and each shard's config must define "${cluster}" as the server of --clickhouse does.`;
  const own = (await connection.rows<Member>(membersSql)).map(numericMember);
  if (own.length === 0) {
    throw new CrosstabError(ErrorCode.invalidOption, `--shard-url ${url}: the server there has no cluster "${cluster}" in its remote_servers, so it cannot be matched with a member of the cluster (${listed})`, { field: '--shard-url', hint });
  }
  const local = own.filter((member) => member.is_local === 1);
  const matches = local.flatMap((self) => members.filter((member) => member.port === self.port && (member.host_name === self.host_name || member.host_address === self.host_address)));
  if (local.length !== 1 || matches.length !== 1) {
    throw new CrosstabError(ErrorCode.invalidOption, `--shard-url ${url} is not a member of cluster "${cluster}" (${listed})`, { field: '--shard-url', hint });
  }
  return matches[0]!;
}

/** The typed view of each variable's index column, then each weight, over kernel memory. */
function columnsOf(data: LoadedDataset): Column[] {
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
