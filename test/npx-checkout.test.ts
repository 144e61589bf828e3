// `npx crosstab` inside the checkout, as README's examples run it: npm installs the checkout
// into its npx cache to link the bin, which runs the package's `prepare`. That must not build
// again (it replaced dist/ under a running `npm start` server, for about 150 s, unseen).
// A fresh npx cache makes every run the first one. Needs `npm run build` first.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { cliPath, repoRoot } from './support/paths.js';

const cache = mkdtempSync(join(tmpdir(), 'crosstab-npx-cache-'));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

it('runs the built CLI at once, without building the checkout again', () => {
  const before = statSync(cliPath).mtimeMs;
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key)) env[key] = value;
  env['npm_config_cache'] = cache;
  const run = spawnSync('npx', ['--yes', 'crosstab', '--version'], { cwd: repoRoot, env, encoding: 'utf8', timeout: 120_000 });
  expect(run.status, run.stderr).toBe(0);
  expect(run.stdout.trim()).toBe((JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version);
  expect(statSync(cliPath).mtimeMs).toBe(before);
}, 150_000);
