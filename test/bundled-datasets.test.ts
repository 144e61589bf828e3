// The bundled datasets as the library names them, and the paths `--help` examples show.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLED_DATASETS, bundledDataset, bundledSource, openDataset } from '../src/index.js';
import { cliPath, repoRoot } from './support/paths.js';

describe('bundled datasets', () => {
  it('bundledDataset() gives a path openDataset() opens, for every bundled survey', async () => {
    for (const name of BUNDLED_DATASETS) {
      const dataset = await openDataset(bundledDataset(name));
      try {
        expect(dataset.info.survey.toLowerCase(), name).toBe(name);
      } finally {
        dataset.close();
      }
      const { data, codebook } = bundledSource(name);
      expect(existsSync(data) && existsSync(codebook), name).toBe(true);
    }
  });

  it('every file an example of `--help` reads exists', () => {
    for (const command of [[], ['build'], ['query'], ['table']]) {
      const help = spawnSync(process.execPath, [cliPath, ...command, '--help'], { cwd: repoRoot, encoding: 'utf8' }).stdout;
      const examples = help.slice(help.indexOf('Examples:')).split('\n').filter((line) => line.trim().startsWith('$ crosstab'));
      expect(examples.length, command.join(' ')).toBeGreaterThan(0);
      for (const line of examples) {
        // The input of build/info/query/table/serve/push: the first argument ending in .arrow, .csv.gz or .json that is not written by the command.
        const words = line.trim().split(/\s+/);
        const outIndex = words.indexOf('--out');
        const keysIndex = words.indexOf('--keys');
        const inputs = words.filter((word, index) => /\.(arrow|csv\.gz|json)$/.test(word) && index !== outIndex + 1 && index !== keysIndex + 1);
        for (const input of inputs) expect(existsSync(isAbsolute(input) ? input : join(repoRoot, input)), `${line.trim()}: ${input}`).toBe(true);
      }
    }
  });
});
