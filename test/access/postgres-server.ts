// A real PostgreSQL server for the tests: Debian's `postgresql` package, a fresh cluster in a
// temporary folder, started as the `postgres` user (it refuses to run as root) on a free
// loopback port. Missing binaries fail the test: `.ci/run` installs the package.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../bench/lib/free-port.js';

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  /** A new, empty database on the server; its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): void;
  /** Stops the server (fast shutdown), keeping its data; `start()` starts it again on the same port. */
  pause(): void;
  start(): void;
  /** Sends `signal` (SIGSTOP, SIGCONT) to the server and every backend process it runs. */
  signal(signal: NodeJS.Signals): void;
}

function binaries(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((name) => existsSync(join(root, name, 'bin', 'pg_ctl'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions[0] === undefined) throw new Error('PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl): run `apt-get install -y postgresql` (.ci/run does).');
  return join(root, versions[0], 'bin');
}


function asPostgres(command: string, args: string[]): string {
  const runAs = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  return execFileSync(runAs[0] as string, runAs[1] as string[], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Initialises and starts a cluster; `stop()` shuts it down and removes its folder. */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = binaries();
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-pg-'));
  if (process.getuid?.() === 0) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })));
  const data = join(dir, 'data');
  asPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const start = (): void => {
    asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-w', '-o', `-p ${port} -h 127.0.0.1 -k ${dir} -c max_connections=200`, 'start']);
  };
  start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const { default: pg } = await import('pg');
  return {
    url,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    pause() {
      asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
    },
    start,
    signal(signal) {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const backends = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' }).split('\n').map(Number).filter((pid) => pid > 0);
      for (const pid of [postmaster, ...backends]) process.kill(pid, signal);
    },
    stop() {
      try {
        asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
