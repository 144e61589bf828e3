// CROSSTAB_TRACE=1 makes `crosstab build` print its phases to stderr, each with its wall and
// CPU time (src/build/build.ts, the trace of src/build/append-trace.ts), and nothing without it.
// Runs the built CLI (`npm run build:ts` first).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliPath } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-build-trace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('crosstab build with CROSSTAB_TRACE', () => {
  it('prints each phase with its wall and CPU time when set, and no trace otherwise', () => {
    const input = join(dir, 'small.csv');
    writeFileSync(input, ['sex,age,w', ...Array.from({ length: 50 }, (_, i) => `${1 + (i % 2)},${20 + (i % 7)},${1 + (i % 3)}`)].join('\n') + '\n');
    const build = (env: NodeJS.ProcessEnv) => spawnSync(process.execPath, [cliPath, 'build', input, '--weight', 'w', '--survey', 'T', '--out', join(dir, 'small.arrow'), '--quiet'], { encoding: 'utf8', env: { ...process.env, ...env } });
    const traced = build({ CROSSTAB_TRACE: '1' });
    expect(traced.status, traced.stderr).toBe(0);
    const phases = traced.stderr.split('\n').filter((line) => line.startsWith('trace:')).map((line) => /^trace: +\d+ ms  (.+?) +[\d.]+ ms wall +[\d.]+ ms CPU/.exec(line)?.[1]);
    expect(phases).toEqual(['start (node, modules)', 'load the input reader', 'read the input', 'plan', 'make, write, sync, rename', 'buildDataset in all']);
    expect(traced.stderr).toMatch(/read the input .* ms CPU  50 rows, 2 columns\n/);
    const quiet = build({ CROSSTAB_TRACE: '0' });
    expect(quiet.status, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain('trace:');
  });
});
