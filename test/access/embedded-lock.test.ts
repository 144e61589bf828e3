// The embedded database belongs to one process at a time, whatever the lock file says: the
// lock is an flock the kernel arbitrates, so a live holder in another PID namespace (another
// container on the same volume) is refused, a stale lock file is no obstacle, and processes
// starting together on a stale lock get exactly one holder between them. Runs as root (as
// .ci/run does): unshare(1) makes the other PID namespace.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDatabase, type Database } from '../../src/access/index.js';
import { lockEmbedded } from '../../src/access/embedded-lock.js';
import { CrosstabError } from '../../src/index.js';
import { CLI } from '../http/serve-child.js';
import { tempDir } from '../http/support.js';

const paths = inject('testDatasets');
const children: ChildProcess[] = [];

beforeAll(() => {
  expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** A pid that no process has in this PID namespace (what a holder in another namespace looks like from here). */
function deadPid(): number {
  for (let pid = 30_000; pid > 1000; pid -= 7) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
  throw new Error('no free pid found');
}

function admin(database: string): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, 'accounts', 'list', '--database', database], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stderr: result.stderr };
}

/** Resolves with the child's output once it prints `listening`, or once it exits. */
function started(child: ChildProcess): Promise<{ listening: boolean; output: string }> {
  let output = '';
  return new Promise((resolve) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (/listening on http/.test(output)) resolve({ listening: true, output });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', () => resolve({ listening: false, output }));
  });
}

function serve(database: string, prefix: string[] = []): ChildProcess {
  const command = [...prefix, process.execPath, CLI, 'serve', '--dataset', paths.gss, '--port', '0', '--database', database];
  const child = spawn(command[0] as string, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return child;
}

describe('the embedded database lock', () => {
  it('refuses a second process while a live holder runs in another PID namespace, and is free once the holder is killed', async () => {
    const database = join(tempDir('crosstab-lock-'), 'db');
    // The holder runs with a pid that no process of this namespace has, as in another container.
    const pid = deadPid();
    const holder = serve(database, [
      'unshare', '--pid', '--fork', '--kill-child', '--mount-proc', 'sh', '-c', `echo ${pid - 1} > /proc/sys/kernel/ns_last_pid; "$@" & wait`, 'sh',
    ]);
    const { listening, output } = await started(holder);
    expect(listening, output).toBe(true);

    const second = admin(database);
    expect(second.status, second.stderr).toBe(1);
    expect(second.stderr).toMatch(/in use by another process/);

    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    // Released by the kernel with the holder; nothing to clean up by hand.
    const after = admin(database);
    expect(after.status, after.stderr).toBe(0);
  });

  it('with a stale lock file, lockers starting at once get exactly one holder, round after round', async () => {
    const lockPath = join(tempDir('crosstab-lock-'), 'db.lock');
    for (let round = 0; round < 30; round++) {
      writeFileSync(lockPath, String(deadPid()));
      const taken = await Promise.allSettled([1, 2, 3, 4].map(() => lockEmbedded(lockPath, 'db')));
      const holders = taken.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
      expect(holders.length, `round ${round}`).toBe(1);
      expect(taken.flatMap((outcome) => (outcome.status === 'rejected' ? [(outcome.reason as CrosstabError).code] : []))).toEqual(['locked', 'locked', 'locked']);
      await holders[0]?.release();
    }
  });

  it('openDatabase refuses a folder another open holds, with `locked` naming the folder', async () => {
    const database = join(tempDir('crosstab-lock-'), 'db');
    writeFileSync(`${database}.lock`, String(deadPid()));
    const opened = await Promise.allSettled([openDatabase(database), openDatabase(database)]);
    const winners = opened.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value as Database] : []));
    expect(winners.length).toBe(1);
    const refusal = opened.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
    expect(refusal.reason).toMatchObject({ code: 'locked', details: { field: 'database' } });
    expect((refusal.reason as Error).message).toContain(`embedded database ${database} is in use`);
    await winners[0]?.close();
  });

  it('two `crosstab serve` started together on a stale lock: exactly one serves, the other exits 1 naming the folder', async () => {
    const database = join(tempDir('crosstab-lock-'), 'db');
    for (let round = 0; round < 3; round++) {
      writeFileSync(`${database}.lock`, String(deadPid()));
      const pair = [serve(database), serve(database)];
      const outcomes = await Promise.all(pair.map(started));
      expect(outcomes.filter((outcome) => outcome.listening).length, outcomes.map((outcome) => outcome.output).join('\n---\n')).toBe(1);
      const refused = outcomes.find((outcome) => !outcome.listening);
      expect(refused?.output).toMatch(new RegExp(`embedded database ${database.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another process`));
      for (const child of pair) child.kill('SIGKILL');
      await Promise.all(pair.map((child) => (child.exitCode !== null || child.signalCode !== null ? undefined : new Promise((resolve) => child.once('exit', resolve)))));
    }
  });

  it('the perl helper holds the same kernel lock as flock(1)', async () => {
    const lockPath = join(tempDir('crosstab-lock-'), 'db.lock');
    const byFlock = await lockEmbedded(lockPath, 'db', ['flock']);
    await expect(lockEmbedded(lockPath, 'db', ['perl'])).rejects.toMatchObject({ code: 'locked' });
    await byFlock.release();
    const byPerl = await lockEmbedded(lockPath, 'db', ['perl']);
    await expect(lockEmbedded(lockPath, 'db', ['flock'])).rejects.toMatchObject({ code: 'locked' });
    await byPerl.release();
    expect(readFileSync(lockPath, 'utf8')).toBe('');
  });
});
