// Starting `crosstab serve` with the development key: a second start that cannot get the
// port (EADDRINUSE), or whose embedded database is in use, must not disturb the first
// server's key, and a start that fails leaves no unseen credentials behind.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { CLI, startServe } from './serve-child.js';
import { tempDir } from './support.js';

const paths = inject('testDatasets');

beforeAll(() => {
  expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
});

describe('crosstab serve with the development key', () => {
  it('a second start on a busy port fails and leaves the first key working', async () => {
    const cwd = tempDir();
    const first = await startServe(['--dataset', paths.gss, '--port', '0'], { cwd });
    try {
      for (let i = 0; i < 50 && !/ctk_/.test(first.output()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      const apiKey = /ctk_[A-Za-z0-9_-]{43}/.exec(first.output())?.[0] as string;
      expect(apiKey).toBeDefined();
      const port = new URL(first.origin).port;
      // Same folder: the embedded database is the first server's, and says so.
      const second = spawnSync(process.execPath, [CLI, 'serve', '--dataset', paths.gss, '--port', port], { cwd, encoding: 'utf8', timeout: 30_000 });
      expect(second.status).toBe(1);
      expect(second.stderr).toMatch(/embedded database .* is in use by another process/);
      expect(second.stdout).not.toMatch(/ctk_/);
      // Another folder, same port: EADDRINUSE before anything is seeded, so the next start
      // there (on a free port) still creates and prints the development credentials.
      const otherCwd = tempDir();
      const third = spawnSync(process.execPath, [CLI, 'serve', '--dataset', paths.gss, '--port', port], { cwd: otherCwd, encoding: 'utf8', timeout: 60_000 });
      expect(third.status).toBe(1);
      expect(third.stderr).toMatch(/EADDRINUSE/);
      expect(third.stdout).not.toMatch(/ctk_/);
      const fourth = await startServe(['--dataset', paths.gss, '--port', '0'], { cwd: otherCwd });
      try {
        for (let i = 0; i < 50 && !/ctk_/.test(fourth.output()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
        expect(fourth.output()).toMatch(/one-time password: \S+/);
        expect(fourth.output()).toMatch(/ctk_[A-Za-z0-9_-]{43}/);
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
      });
      expect(response.status).toBe(200);
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  });
});
