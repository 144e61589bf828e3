// A dataset file replaced while a Dataset reads it lazily (buffers read when a query first
// needs them): renamed over (a publish), the open Dataset goes on reading the old file whole;
// written over in place (a copy over it), every later read is refused, with or without buffer
// checksums, instead of reading another build's bytes at the old offsets (a mixture of the two
// versions: with verify: false, y=2 answered the new build's figure beside x=1 of the old).
import { copyFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset, type CrosstabError, type Dataset } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-rewritten-'));
const first = join(dir, 'first.arrow');
const second = join(dir, 'second.arrow');
const QUERIES = ['x=1', 'y=2', 'z=3', 'x=1 AND y=2'];
const figures = new Map<string, string[]>();

async function answers(dataset: Dataset): Promise<string[]> {
  const out: string[] = [];
  for (const target of QUERIES) {
    const result = await dataset.crosstab({ base: '*', targets: [target] }).then(
      (answer) => `${answer.targets[0]!.respondents}/${answer.targets[0]!.weighted}`,
      (error: CrosstabError) => `${error.code}: ${error.message}`,
    );
    out.push(result);
  }
  return out;
}

beforeAll(async () => {
  // Two builds of one layout (the same columns and values, shifted by a row): each buffer sits
  // at the same offset in both files, so bytes read from the other file look like a dataset's.
  for (const [path, shift] of [[first, 0], [second, 1]] as const) {
    const lines = ['x,y,z,w'];
    for (let i = 0; i < 5000; i++) lines.push(`${(i * 7 + shift) % 5},${(i * 3 + shift) % 4},${(i + shift) % 6},${1 + ((i + shift) % 3)}`);
    writeFileSync(`${path}.csv`, `${lines.join('\n')}\n`);
    await buildDataset(`${path}.csv`, { weights: ['w'], survey: 'T', out: path });
    const dataset = await openDataset(path);
    figures.set(path, await answers(dataset));
    await dataset.close();
  }
  // The builds differ in every query but z=3.
  expect(figures.get(first)!.filter((answer, i) => answer !== figures.get(second)![i])).toHaveLength(3);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each([
  ['inline', true],
  ['inline', false],
  ['pool', true],
  ['pool', false],
] as const)('a Dataset opened lazily (%s, verify %s)', (execution, verify) => {
  it('goes on reading the old file when a new build is renamed over it', async () => {
    const live = join(dir, `renamed-${execution}-${verify}.arrow`);
    copyFileSync(first, live);
    const dataset = await openDataset(live, { execution, verify, cellCache: 0 });
    try {
      await dataset.crosstab({ base: '*', targets: ['x=1'] });
      copyFileSync(second, `${live}.new`);
      renameSync(`${live}.new`, live);
      expect(await answers(dataset)).toEqual(figures.get(first));
    } finally {
      await dataset.close();
    }
  });

  it('refuses every read once the file is written over in place, and answers from what it had read', async () => {
    const live = join(dir, `in-place-${execution}-${verify}.arrow`);
    copyFileSync(first, live);
    const dataset = await openDataset(live, { execution, verify, cellCache: 0 });
    try {
      const x = await dataset.crosstab({ base: '*', targets: ['x=1'] }).then((answer) => `${answer.targets[0]!.respondents}/${answer.targets[0]!.weighted}`);
      copyFileSync(second, live);
      const after = await answers(dataset);
      // x=1 was read before the copy: the old build's figure. Every query that reads a new buffer is refused.
      expect(after[0]).toBe(x);
      for (const answer of after.slice(1)) expect(answer).toMatch(/^corrupt_dataset: .*in-place-.*\.arrow was written over in place after it was opened.*cannot be read from it/);
    } finally {
      await dataset.close();
    }
  });
});
