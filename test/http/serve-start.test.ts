// Starting `crosstab serve` with the development key: a second start that cannot get the
// port (EADDRINUSE: refused before any dataset or database is opened), or whose embedded
// database is in use, must not disturb the first server's key, and a start that fails leaves
// no unseen credentials behind.
import { spawn } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_DATABASE, openDatabase } from '../../src/access/index.js';
import { CLI, startServe } from './serve-child.js';
import { tempDir } from './support.js';

const paths = inject('testDatasets');

/**
 * Each step's own deadline (a start, a refused start, the key's line): a start opens GSS and
 * the embedded database, about 2 s alone and 20-30 s at a load of 15-20 on two cores.
 */
const STEP_MS = 60_000;
/** The test's deadline: longer than its steps' deadlines together (six starts, two waits for a key, the request), so a slow step fails as itself. */
const TEST_MS = 9 * STEP_MS;

/**
 * An embedded database with its tables and no account, made once and copied into each folder
 * a server starts in: creating one (initdb) is most of a start's time, and what this test
 * checks is what a start does with a database that has no account yet.
 */
let emptyDatabase: string;

beforeAll(async () => {
  expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
  emptyDatabase = tempDir();
  await (await openDatabase(join(emptyDatabase, DEFAULT_DATABASE))).close();
}, 3 * STEP_MS);

/** A folder holding an empty embedded database at the default place. */
function folderWithEmptyDatabase(): string {
  const cwd = tempDir();
  cpSync(join(emptyDatabase, '.crosstab'), join(cwd, '.crosstab'), { recursive: true });
  return cwd;
}

/** `crosstab serve ARGS` run to its end in `cwd` (killed after STEP_MS), without blocking this thread. */
function serveOnce(args: string[], cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: STEP_MS });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status, signal) => resolve({ status: signal === null ? status : null, stdout, stderr: signal === null ? stderr : `${stderr}\n(killed by ${signal} after ${STEP_MS} ms)` }));
  });
}

/** Waits until `output()` matches `pattern`, failing after STEP_MS with what was printed. */
async function printed(output: () => string, pattern: RegExp): Promise<RegExpExecArray> {
  const deadline = Date.now() + STEP_MS;
  for (;;) {
    const match = pattern.exec(output());
    if (match !== null) return match;
    if (Date.now() > deadline) throw new Error(`no ${pattern} within ${STEP_MS} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('crosstab serve with the development key', () => {
  it(
    'a second start on a busy port fails and leaves the first key working',
    async () => {
      const cwd = folderWithEmptyDatabase();
      const first = await startServe(['--dataset', paths.gss, '--port', '0'], { cwd, timeoutMs: STEP_MS });
      try {
        const apiKey = (await printed(first.output, /ctk_[A-Za-z0-9_-]{43}/))[0];
        const port = new URL(first.origin).port;
        // Same folder, another port: the embedded database is the first server's, and says so.
        const second = await serveOnce(['--dataset', paths.gss, '--port', '0'], cwd);
        expect(second.status, second.stderr).toBe(1);
        expect(second.stderr).toMatch(/embedded database .* is in use by another process/);
        expect(second.stdout).not.toMatch(/ctk_/);
        // Same folder, same port: the port is refused first, naming it and what to do.
        const again = await serveOnce(['--dataset', paths.gss, '--port', port], cwd);
        expect(again.status, again.stderr).toBe(1);
        expect(again.stderr).toContain(`Cannot listen on 127.0.0.1:${port} (EADDRINUSE`);
        expect(again.stderr).toMatch(/another --port .*or stop the process using it/);
        expect(again.stderr).not.toMatch(/in use by another process/);
        // Before any dataset or database is opened: a missing dataset is not reached, and a
        // folder without a database gets none.
        const bare = tempDir();
        const early = await serveOnce(['--dataset', join(bare, 'missing.arrow'), '--port', port], bare);
        expect(early.status, early.stderr).toBe(1);
        expect(early.stderr).toContain(`Cannot listen on 127.0.0.1:${port} (EADDRINUSE`);
        expect(existsSync(join(bare, '.crosstab'))).toBe(false);
        // Another folder, same port: EADDRINUSE before anything is seeded, so the next start
        // there (on a free port) still creates and prints the development credentials.
        const otherCwd = folderWithEmptyDatabase();
        const third = await serveOnce(['--dataset', paths.gss, '--port', port], otherCwd);
        expect(third.status, third.stderr).toBe(1);
        expect(third.stderr).toMatch(/EADDRINUSE/);
        expect(third.stdout).not.toMatch(/ctk_/);
        const fourth = await startServe(['--dataset', paths.gss, '--port', '0'], { cwd: otherCwd, timeoutMs: STEP_MS });
        try {
          await printed(fourth.output, /ctk_[A-Za-z0-9_-]{43}/);
          expect(fourth.output()).toMatch(/one-time password: \S+/);
        } finally {
          fourth.child.kill('SIGTERM');
          await fourth.exited;
        }
        // Past the key file's reload interval (500 ms): a rewritten file would be in force by now.
        await new Promise((resolve) => setTimeout(resolve, 1200));
        const response = await fetch(`${first.origin}/v1/crosstab`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey },
          body: JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] }),
          signal: AbortSignal.timeout(STEP_MS),
        });
        expect(response.status).toBe(200);
      } finally {
        first.child.kill('SIGTERM');
        await first.exited;
      }
    },
    TEST_MS,
  );
});
