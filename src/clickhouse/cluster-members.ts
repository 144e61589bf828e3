import { CrosstabError, ErrorCode, fieldError, mention, problemText } from '../errors.js';
import { ClickHouseConnection } from './connection.js';
import { checkIdentifier, parseClickHouseUrl, type ClickHouseLocation } from './url.js';

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
export async function shardsOf(entry: ClickHouseConnection, location: ClickHouseLocation, options: { cluster?: string | undefined; shards?: number | undefined; shardUrls?: string[] | undefined }): Promise<Array<{ location: ClickHouseLocation; connection: ClickHouseConnection }>> {
  const cluster = options.cluster;
  if (cluster === undefined) {
    if (options.shards !== undefined || options.shardUrls?.length) {
      const problem = problemText`NAME is needed by ${mention('shards')} and ${mention('shardUrl')}`;
      throw fieldError(ErrorCode.invalidOption, 'cluster', problem.text, { mentions: problem.mentions, hint: 'Name the remote_servers cluster of the server config.' });
    }
    return [];
  }
  checkIdentifier(cluster, 'cluster');
  const membersSql = `SELECT shard_num, replica_num, host_name, host_address, port, is_local FROM system.clusters WHERE cluster = '${cluster}' ORDER BY shard_num, replica_num`;
  const members = (await entry.rows<Member>(membersSql)).map(numericMember);
  if (members.length === 0) {
    const names = await entry.rows<{ cluster: string }>('SELECT DISTINCT cluster FROM system.clusters ORDER BY cluster');
    throw fieldError(ErrorCode.invalidOption, 'cluster', `${location.display} has no cluster "${cluster}" in its remote_servers`, {
      suggestions: names.map((row) => row.cluster),
      hint: `Clusters defined there: ${names.map((row) => row.cluster).join(', ') || 'none'}.`,
    }, ': ');
  }
  const listed = members.map(describeMember).join(', ');
  const replicated = members.find((member) => member.replica_num > 1);
  if (replicated) {
    throw fieldError(ErrorCode.invalidOption, 'cluster', `shard ${replicated.shard_num} of cluster "${cluster}" has more than one replica (${listed})`, {
      hint: 'push writes one plain MergeTree table per shard, so another replica of a shard would answer without its respondents: use a cluster with one server per shard.',
    }, ': ');
  }
  const shardCount = members.length;
  if (options.shards !== undefined && options.shards !== shardCount) {
    throw fieldError(ErrorCode.invalidOption, 'shards', `${options.shards}: cluster "${cluster}" has ${shardCount} shards`, { hint: `Pass \`shards\` ${shardCount}, or fix remote_servers.`, hintOptions: ['shards'] }, ' ');
  }
  const urls = options.shardUrls ?? [];
  const shards: Array<{ location: ClickHouseLocation; connection: ClickHouseConnection; member: Member }> = [];
  try {
    for (const [i, url] of urls.entries()) {
      const parsed = parseClickHouseUrl(url, `shardUrl[${i}]`, location.table);
      const shard = { ...parsed, display: parsed.http };
      const connection = await ClickHouseConnection.connect(shard);
      shards.push({ location: shard, connection, member: await memberAt(connection, membersSql, members, cluster, listed) });
    }
    for (const [i, shard] of shards.entries()) {
      const first = shards.findIndex((other) => other.member.shard_num === shard.member.shard_num);
      if (first !== i) {
        const problem = problemText`${shard.location.http} and ${mention('shardUrl')} ${shards[first]!.location.http} are the same server of cluster "${cluster}": ${describeMember(shard.member)}`;
        throw fieldError(ErrorCode.invalidOption, 'shardUrl', problem.text, {
          mentions: problem.mentions,
          hint: `Give each shard's HTTP URL once. Members of "${cluster}" (host:native port): ${listed}.`,
        });
      }
    }
    const missing = members.filter((member) => !shards.some((shard) => shard.member.shard_num === member.shard_num));
    if (missing.length > 0) {
      throw fieldError(ErrorCode.invalidOption, 'shardUrl', `is missing for ${missing.map(describeMember).join(', ')}: cluster "${cluster}" has ${shardCount} shards`, {
        hintOptions: ['shardUrl'],
        hint: `Give the HTTP URL of every shard (\`shardUrl\` once each; members of "${cluster}", host:native port: ${listed}): its MergeTree table is created through it (18.16 has no ON CLUSTER without ZooKeeper).`,
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
    throw fieldError(ErrorCode.invalidOption, 'shardUrl', `${url}: the server there has no cluster "${cluster}" in its remote_servers, so it cannot be matched with a member of the cluster (${listed})`, { hint });
  }
  const local = own.filter((member) => member.is_local === 1);
  const matches = local.flatMap((self) => members.filter((member) => member.port === self.port && (member.host_name === self.host_name || member.host_address === self.host_address)));
  if (local.length !== 1 || matches.length !== 1) {
    throw fieldError(ErrorCode.invalidOption, 'shardUrl', `${url} is not a member of cluster "${cluster}" (${listed})`, { hint });
  }
  return matches[0]!;
}
