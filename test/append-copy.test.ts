// appendRows() in segments copies the old dataset file beside the output as soon as the dataset
// is opened, while the wave is read and planned. Whatever stops the append while that copy is
// under way leaves nothing behind: a wave refused (malformed, or not fitting the dataset), the
// signal aborted; and a new version of the dataset put at its path meanwhile is refused, not
// written over with the old version extended. The copy is caught in the act by watching the
// folder for its temporary file, so each failure lands while it exists.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRows, buildDataset, ErrorCode, openDataset } from '../src/index.js';
import { rejection } from './support/rejection.js';

const root = mkdtempSync(join(tmpdir(), 'crosstab-append-copy-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let serial = 0;

/** `rows` CSV rows of a small survey (a code 1-5, a text, a weight), numbered from `first`. */
function csvText(rows: number, first: number): string {
  const lines = ['a,b,w'];
  for (let i = first; i < first + rows; i++) lines.push(`${(i % 5) + 1},${['x', 'y', 'z'][i % 3]},${(i % 7) + 1}`);
  return `${lines.join('\n')}\n`;
}

/** A folder of its own holding a dataset of `rows` respondents and a wave file with `wave` as its text. */
async function setUp(rows: number, wave: string): Promise<{ folder: string; dataset: string; wavePath: string }> {
  const folder = join(root, `case-${serial++}`);
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder);
  const input = join(folder, 'first.csv');
  writeFileSync(input, csvText(rows, 0));
  const dataset = join(folder, 'first.arrow');
  await buildDataset(input, { weights: ['w'], survey: 'T', out: dataset });
  const wavePath = join(folder, 'wave.csv');
  writeFileSync(wavePath, wave);
  return { folder, dataset, wavePath };
}

/** Calls `then` once, when a temporary file (the append's copy) appears in `folder`. */
function onTemporaryFile(folder: string, then: () => void): { seen: () => boolean; close: () => void } {
  let seen = false;
  const watcher = watch(folder, (_event, name) => {
    if (!seen && typeof name === 'string' && name.endsWith('.tmp')) {
      seen = true;
      then();
    }
  });
  return { seen: () => seen, close: () => watcher.close() };
}

const temporaryFiles = (folder: string) => readdirSync(folder).filter((name) => name.endsWith('.tmp'));

async function respondents(path: string): Promise<number> {
  const dataset = await openDataset(path, { cellCache: 0 });
  try {
    return dataset.info.respondents;
  } finally {
    await dataset.close();
  }
}

describe('appendRows in segments: the copy of the old file, started at open', () => {
  it('a wave refused (malformed CSV, or a column the dataset lacks) leaves no copy behind, and no output', async () => {
    const malformed = `${csvText(3000, 5000)}1,"x,2\n`;
    const unknown = csvText(3000, 5000)
      .trimEnd()
      .split('\n')
      .map((line, i) => `${line},${i === 0 ? 'extra' : 9}`)
      .join('\n');
    for (const wave of [malformed, unknown]) {
      const { folder, dataset, wavePath } = await setUp(4000, wave);
      const out = join(folder, 'out.arrow');
      const watcher = onTemporaryFile(folder, () => undefined);
      try {
        const error = await rejection(appendRows(dataset, wavePath, { out }));
        expect(error.code).toBe(ErrorCode.invalidInput);
      } finally {
        watcher.close();
      }
      expect(watcher.seen(), 'the copy was started').toBe(true);
      expect(temporaryFiles(folder)).toEqual([]);
      expect(existsSync(out)).toBe(false);
    }
  });

  it('aborted while the copy is made: rejects with cancelled, leaving no copy and no output', async () => {
    const { folder, dataset, wavePath } = await setUp(4000, csvText(3000, 5000));
    const out = join(folder, 'out.arrow');
    const controller = new AbortController();
    const watcher = onTemporaryFile(folder, () => controller.abort());
    try {
      const error = await rejection(appendRows(dataset, wavePath, { out, signal: controller.signal }));
      expect(error.code).toBe(ErrorCode.cancelled);
    } finally {
      watcher.close();
    }
    expect(watcher.seen()).toBe(true);
    expect(temporaryFiles(folder)).toEqual([]);
    expect(existsSync(out)).toBe(false);
    // Not aborted, the same append writes its file.
    expect((await appendRows(dataset, wavePath, { out })).respondents).toBe(7000);
  });

  it('a new version of the dataset put at its path after the copy started is refused, not written over with the old one extended', async () => {
    const { folder, dataset, wavePath } = await setUp(4000, csvText(3000, 5000));
    const newer = join(folder, 'newer.arrow');
    const newerInput = join(folder, 'newer.csv');
    writeFileSync(newerInput, csvText(1000, 0));
    await buildDataset(newerInput, { weights: ['w'], survey: 'T', out: newer });
    // Published as a new build is: written under another name, renamed over the dataset.
    const watcher = onTemporaryFile(folder, () => renameSync(newer, dataset));
    try {
      const error = await rejection(appendRows(dataset, wavePath, { out: dataset }));
      expect(error.code).toBe(ErrorCode.corruptDataset);
      expect(error.message).toContain('was replaced while the wave was appended');
    } finally {
      watcher.close();
    }
    expect(watcher.seen()).toBe(true);
    expect(temporaryFiles(folder)).toEqual([]);
    // The new version is in place, as it was published.
    expect(await respondents(dataset)).toBe(1000);
  });
});
