// A throwaway PostgreSQL server for benchmarks: Debian's `postgresql` binaries, a fresh
// cluster in a temporary folder on a free loopback port, run as the `postgres` user when
// started as root. (test/access/postgres-server.ts does the same for the tests.) With `cpu`,
// the server and every backend it forks run on that CPU only (`taskset -c`).
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

function binaries() {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((name) => existsSync(join(root, name, 'bin', 'pg_ctl'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions[0] === undefined) throw new Error('PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl): apt-get install -y postgresql, or pass --postgres URL');
  return join(root, versions[0], 'bin');
}

function asPostgres(command, args) {
  const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Starts a cluster with default durability settings; returns its URL and stop(). */
export async function startPostgres({ cpu } = {}) {
  const bin = binaries();
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-bench-pg-'));
  if (process.getuid?.() === 0) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })));
  const data = join(dir, 'data');
  asPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8']);
  const port = await freePort();
  const pgCtl = ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', `-p ${port} -h 127.0.0.1 -k ${dir} -c max_connections=200`, 'start'];
  if (cpu === undefined) asPostgres(join(bin, 'pg_ctl'), pgCtl);
  else asPostgres('taskset', ['-c', String(cpu), join(bin, 'pg_ctl'), ...pgCtl]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    version: asPostgres(join(bin, 'postgres'), ['--version']).trim(),
    /** The postmaster's pid (the first line of postmaster.pid). */
    pid: Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
    stop() {
      try {
        asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
