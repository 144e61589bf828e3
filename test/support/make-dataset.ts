import { mkdtempSync, rmSync } from 'node:fs';
import { afterAll } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileDataset, type CompileOptions } from '../../src/dataset/build/compile.js';
import type { RawTable } from '../../src/dataset/input/raw-table.js';
import { writeDataset } from '../../src/dataset/file/writer.js';
import { openDataset, type Dataset, type OpenOptions } from '../../src/facade/dataset.js';
import type { Codebook } from '../../src/dataset/build/codebook.js';

let folder: string | undefined;
// Registered in each test file that imports this module: the datasets it made go with it.
// (The global setup imports this module too, outside any test file: no hook there.)
try {
  afterAll(() => {
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
    folder = undefined;
  });
} catch {
  // not collecting a test file
}
let serial = 0;

/** Dictionary-encodes text columns the way an input reader does. */
export function rawTable(columns: Record<string, string[]>, weights: number[]): RawTable {
  return {
    source: 'test.csv',
    rows: weights.length,
    weights: [{ name: 'w', values: Float64Array.from(weights) }],
    columns: Object.entries(columns).map(([name, values]) => {
      const ids = new Map<string, number>();
      const dictionary: string[] = [];
      const encoded = Uint32Array.from(values, (value) => {
        if (value === '') return 0;
        let id = ids.get(value);
        if (id === undefined) {
          dictionary.push(value);
          id = dictionary.length;
          ids.set(value, id);
        }
        return id;
      });
      return { name, dictionary, ids: encoded };
    }),
  };
}

/** Compiles and writes a dataset made of the given columns; its path. */
export async function writeMadeDataset(columns: Record<string, string[]>, weights: number[], codebook?: Codebook, compile: Partial<CompileOptions> = {}): Promise<string> {
  const compiled = compileDataset(rawTable(columns, weights), { survey: 'TEST', ...(codebook ? { codebook } : {}), ...compile });
  folder ??= mkdtempSync(join(tmpdir(), 'crosstab-made-'));
  const out = join(folder, `made-${serial++}.arrow`);
  await writeDataset(compiled, out);
  return out;
}

/** Compiles, writes and opens a dataset made of the given columns. */
export async function makeDataset(columns: Record<string, string[]>, weights: number[], codebook?: Codebook, open: OpenOptions = {}): Promise<Dataset> {
  return openDataset(await writeMadeDataset(columns, weights, codebook), open);
}
