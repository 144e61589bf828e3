// Starts a throwaway ClickHouse cluster on loopback: N clickhouse-server processes (Debian's
// package, 18.16 here) each with its own temporary data folder, generated config.xml and
// users.xml, free HTTP and native ports, and a remote_servers cluster naming every server as
// one shard. Used by the ClickHouse tests (test/support/clickhouse-server.ts) and the bench.
import { spawn, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../bench/lib/free-port.js';

/** Where Debian installs the server (clickhouse-server 18.16 ships /usr/sbin/clickhouse-server). */
export const CLICKHOUSE_CANDIDATES = ['/usr/sbin/clickhouse-server', '/usr/bin/clickhouse-server', '/usr/bin/clickhouse'];

/** The server binary, or undefined when clickhouse-server is not installed. */
export function clickhouseBinary() {
  return CLICKHOUSE_CANDIDATES.find((path) => existsSync(path));
}


const xml = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function configXml(dir, ports, cluster, shards) {
  const replicas = shards.map((shard) => `      <shard><replica><host>127.0.0.1</host><port>${shard.tcp}</port></replica></shard>`).join('\n');
  return `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${xml(join(dir, 'server.log'))}</log><errorlog>${xml(join(dir, 'server.err.log'))}</errorlog></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${ports.http}</http_port>
  <tcp_port>${ports.tcp}</tcp_port>
  <path>${xml(join(dir, 'data'))}/</path>
  <tmp_path>${xml(join(dir, 'tmp'))}/</tmp_path>
  <user_files_path>${xml(join(dir, 'user_files'))}/</user_files_path>
  <format_schema_path>${xml(join(dir, 'format_schemas'))}/</format_schema_path>
  <users_config>${xml(join(dir, 'users.xml'))}</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <max_concurrent_queries>100</max_concurrent_queries>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <remote_servers>
    <${cluster}>
${replicas}
    </${cluster}>
  </remote_servers>
</yandex>
`;
}

const USERS_XML = `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage><load_balancing>in_order</load_balancing></default></profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`;

async function waitReady(http, child, dir, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const response = await fetch(`${http}/?query=SELECT%201`);
      if (response.ok && (await response.text()).trim() === '1') return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const log = ['server.err.log', 'stderr.log'].map((name) => join(dir, name)).filter(existsSync).map((path) => readFileSync(path, 'utf8').slice(-2000)).join('\n');
  throw new Error(`clickhouse-server on ${http} did not become ready (exit code ${child.exitCode}):\n${log}`);
}

/**
 * Starts `shards` servers (default 2) forming cluster `cluster` (default crosstab_test).
 * Runs them as the `clickhouse` user when started as root and that user exists.
 * Returns { cluster, shards: [{ http, tcp, url }], url (the first shard), stop() }.
 */
export async function startClickHouseCluster({ shards: count = 2, cluster = 'crosstab_test', timeoutMs = 60_000 } = {}) {
  const binary = clickhouseBinary();
  if (!binary) throw new Error(`clickhouse-server is not installed (looked for ${CLICKHOUSE_CANDIDATES.join(', ')}): run \`apt-get install -y clickhouse-server\` (.ci/run does).`);
  const root = mkdtempSync(join(tmpdir(), 'crosstab-clickhouse-'));
  let owner;
  if (process.getuid?.() === 0) {
    try {
      owner = { uid: Number(execFileSync('id', ['-u', 'clickhouse'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'clickhouse'], { encoding: 'utf8' })) };
    } catch {
      owner = undefined; // no clickhouse user: 18.16 runs as root too
    }
  }
  const shards = [];
  const ports = await freePorts(2 * count);
  for (let i = 0; i < count; i++) shards.push({ http: ports[2 * i], tcp: ports[2 * i + 1], dir: join(root, `shard${i + 1}`) });
  const children = [];
  const stop = () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  };
  try {
    for (const shard of shards) {
      for (const sub of ['', 'data', 'tmp', 'user_files', 'format_schemas']) mkdirSync(join(shard.dir, sub), { recursive: true });
      writeFileSync(join(shard.dir, 'config.xml'), configXml(shard.dir, shard, cluster, shards));
      writeFileSync(join(shard.dir, 'users.xml'), USERS_XML);
      if (owner) {
        chownSync(root, owner.uid, owner.gid);
        for (const sub of ['', 'data', 'tmp', 'user_files', 'format_schemas', 'config.xml', 'users.xml']) chownSync(join(shard.dir, sub), owner.uid, owner.gid);
      }
      const child = spawn(binary, [`--config-file=${join(shard.dir, 'config.xml')}`], {
        cwd: shard.dir,
        stdio: ['ignore', 'ignore', 'ignore'],
        ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
      });
      child.unref();
      children.push(child);
    }
    for (let i = 0; i < shards.length; i++) await waitReady(`http://127.0.0.1:${shards[i].http}`, children[i], shards[i].dir, timeoutMs);
  } catch (error) {
    stop();
    throw error;
  }
  const described = shards.map((shard) => ({ http: shard.http, tcp: shard.tcp, url: `http://127.0.0.1:${shard.http}` }));
  return { cluster, shards: described, url: described[0].url, pids: children.map((child) => child.pid), stop };
}
