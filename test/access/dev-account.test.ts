// The development account (every survey and group licensed, a one-time password and a 24 h
// key printed to stdout) is for a developer's first `crosstab serve` on the embedded
// database (test/http/cli.test.ts). On a PostgreSQL server - a production database - it is
// created only when asked for with --dev-account.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { listAccounts, openDatabase } from '../../src/access/index.js';
import { CLI, startServe } from '../http/serve-child.js';
import { tempDir } from '../http/support.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

const paths = inject('testDatasets');
let postgres: PostgresServer;

beforeAll(async () => {
  expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
  postgres = await startPostgres();
});
afterAll(() => postgres?.stop());

async function serveOnce(args: string[]): Promise<{ output: string; accounts: string[] }> {
  const server = await startServe(['--dataset', paths.gss, '--port', '0', ...args], { cwd: tempDir() });
  try {
    // Everything a start prints comes right after its "listening" line; wait for the last line of either form.
    await expect.poll(() => server.output(), { timeout: 30_000 }).toMatch(/curl -s .*\n|no account yet.*\n/);
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  const url = args[args.indexOf('--database') + 1] as string;
  const db = await openDatabase(url);
  try {
    return { output: server.output(), accounts: (await listAccounts(db)).map((account) => account.name) };
  } finally {
    await db.close();
  }
}

describe('crosstab serve on an empty PostgreSQL database', () => {
  it('creates no development account and prints no credentials, but says how to add an account', async () => {
    const { output, accounts } = await serveOnce(['--database', await postgres.createDatabase(`dev_none_${Date.now()}`)]);
    expect(accounts).toEqual([]);
    expect(output).not.toMatch(/one-time password|ctk_/);
    expect(output).toMatch(/The database has no account yet: add one with `crosstab accounts add`/);
  });

  it('with --dev-account creates it and prints its one-time password and key', async () => {
    const { output, accounts } = await serveOnce(['--database', await postgres.createDatabase(`dev_asked_${Date.now()}`), '--dev-account']);
    expect(accounts).toEqual(['development']);
    expect(output).toMatch(/developer@localhost\.localdomain {2}one-time password: \S{16}/);
    expect(output).toMatch(/ctk_[A-Za-z0-9_-]{43}/);
  });
});
