import { copyFileSync, existsSync, mkdtempSync, openSync, readSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { weightDataset } from '../../src/index.js';
import type { BufferEntry } from '../../src/dataset/file/lazy-buffers.js';
import { loadDataset } from '../../src/dataset/file/reader.js';
import { mainThreadKernel } from '../../src/kernel/kernel.js';
import { repoRoot } from '../support/paths.js';
import { rejection } from '../support/rejection.js';

/** A damaged buffer that weighting does not read itself is still refused while the dataset is copied, not copied under a fresh checksum. */
const dir = mkdtempSync(join(tmpdir(), 'weight-damaged-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('refuses a source whose copied buffer fails its hash, and writes nothing', async () => {
  const source = join(dir, 'nhanes.arrow');
  copyFileSync(join(repoRoot, 'datasets', 'build', 'nhanes.arrow'), source);
  const kernel = mainThreadKernel();
  const loaded = await loadDataset(source, kernel);
  const variable = loaded.meta.variables.find((v) => v.name === 'HI_CHOL')!;
  const entry = loaded.buffers[variable.index] as BufferEntry;
  loaded.close();
  for (const region of loaded.regions) kernel.memory.release(region.ptr, region.bytes);
  const fd = openSync(source, 'r+');
  const byte = Buffer.alloc(1);
  readSync(fd, byte, 0, 1, entry.fileOffset + 10);
  byte[0] = byte[0]! ^ 0xff;
  writeSync(fd, byte, 0, 1, entry.fileOffset + 10);
  closeSync(fd);
  const out = join(dir, 'out.arrow');
  const error = await rejection(weightDataset(source, { targets: { margins: [{ variable: 'RIAGENDR', proportions: { '1': 0.49, '2': 0.51 } }] }, method: 'poststratify', name: 'wt_ps', out }));
  expect(error.code).toBe('corrupt_dataset');
  expect(error.message).toContain('HI_CHOL');
  expect(existsSync(out)).toBe(false);
});
