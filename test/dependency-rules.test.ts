import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The layer order and the no-cycle rule live in .dependency-cruiser.cjs; this runs them on src/.
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const depcruise = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

describe('import rules', () => {
  it('src/ imports only its own layer and the layers below it, without cycles', () => {
    const run = spawnSync(process.execPath, [depcruise, 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], { cwd: root, encoding: 'utf8' });
    expect(run.error).toBeUndefined();
    // On failure the message lists every violation, as depcruise prints them.
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  }, 60_000);
});
