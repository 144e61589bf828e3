// appendRows() on single-coded variables whose code containers change kind as the wave adds
// respondents: a code common in the first part (a bitset) that is rare among all the rows (a
// list), and one rare at first (a list) that the wave makes common (a bitset), with a new value
// sorting before the old ones so that every old rank moves too. Every wave weight is above every
// first-part weight, so the build of every row stores its respondents in the order the append
// gives them (the old ones, then the new ones): the two files must then be the same dataset
// to the byte (the same fingerprint), besides answering alike.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain-JavaScript bench helper without types
import { buildFingerprint } from '../bench/lib/build-fingerprint.js';
import { appendRows, buildDataset, openDataset, type BuildOptions } from '../src/index.js';
import { loadDataset } from '../src/dataset/file/reader.js';
import { BufferKind } from '../src/dataset/format.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { seededRandom } from './support/large-dataset.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-append-kinds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FIRST = 2000;
const WAVE = 6000;

/**
 * Rows of `w,a,b`. `a`: value 1 is held by 100 of the first part's 2,000 respondents (a
 * bitset: 32 words hold 2,048 respondents, a list of 100 would take more bytes) and by none
 * of the wave (a list among 8,000); 2 by 20 at first (a list) and 2,000 of the wave (a
 * bitset); 4 by 10 and 10 (a list either way); 3 by the rest (a bitset either way); the wave
 * adds 0 (rare, before every old value) and 9 (common); some blanks. `b` 1..5 at random.
 */
function rows(): { first: string[]; wave: string[] } {
  const next = seededRandom(39);
  const make = (count: number, wave: boolean) =>
    Array.from({ length: count }, (_, row) => {
      const a = wave
        ? row < 2000 ? '2' : row < 2010 ? '4' : row < 2040 ? '0' : row < 3500 ? '9' : row < 3600 ? '' : '3'
        : row < 100 ? '1' : row < 120 ? '2' : row < 130 ? '4' : row < 150 ? '' : '3';
      // Weights: the first part's in [1, 5), the wave's in [10, 14): some repeat, as survey weights do.
      const weight = (wave ? 10 : 1) + Math.floor(next() * 400) / 100;
      return { line: `${weight},${a},${1 + Math.floor(next() * 5)}`, key: next() };
    })
      // Shuffled, so that the containers' respondents are spread over the weight order.
      .sort((x, y) => x.key - y.key)
      .map((row) => row.line);
  return { first: make(FIRST, false), wave: make(WAVE, true) };
}

/** The kind of every code container of `a`, by value. */
async function containerKinds(path: string): Promise<Record<string, string>> {
  const kernel = mainThreadKernel();
  const data = await loadDataset(path, kernel, { verify: 'full' });
  try {
    const a = data.meta.variables.find((variable) => variable.name === 'a')!;
    return Object.fromEntries(a.values.map((value, rank) => [String(value), data.buffers[a.codes![rank]!]!.kind === BufferKind.dense ? 'bits' : 'list']));
  } finally {
    data.close();
    for (const region of data.regions) kernel.memory.release(region.ptr, region.bytes);
  }
}

describe('appendRows, single-coded containers changing kind', () => {
  it('a bitset that becomes a list and a list that becomes a bitset: the same dataset as the build of every row (kinds, info, answers, fingerprint)', async () => {
    const { first, wave } = rows();
    const write = (name: string, lines: string[]) => {
      const path = join(dir, name);
      writeFileSync(path, `w,a,b\n${lines.join('\n')}\n`);
      return path;
    };
    const [firstCsv, waveCsv, allCsv] = [write('first.csv', first), write('wave.csv', wave), write('all.csv', [...first, ...wave])];
    const [firstArrow, appendedArrow, wholeArrow] = ['first.arrow', 'appended.arrow', 'whole.arrow'].map((name) => join(dir, name)) as [string, string, string];
    const options: Omit<BuildOptions, 'out'> = { weights: ['w'], survey: 'T', rangeIndex: ['b'] };
    await buildDataset(firstCsv, { ...options, out: firstArrow });
    await buildDataset(allCsv, { ...options, out: wholeArrow });
    const report = await appendRows(firstArrow, waveCsv, { out: appendedArrow });
    expect(report.appended).toBe(WAVE);
    expect(report.newValues.map((entry) => [entry.variable, [...entry.values].sort()])).toEqual([['a', ['0', '9']]]);

    // The test reaches the change of kind: 1 bits -> list, 2 list -> bits (and the others in each kind, old and new).
    expect(await containerKinds(firstArrow)).toEqual({ '1': 'bits', '2': 'list', '3': 'bits', '4': 'list' });
    const kinds = await containerKinds(wholeArrow);
    expect(kinds).toEqual({ '0': 'list', '1': 'list', '2': 'bits', '3': 'bits', '4': 'list', '9': 'bits' });
    expect(await containerKinds(appendedArrow)).toEqual(kinds);

    const [appended, whole] = [await openDataset(appendedArrow, { cellCache: 0 }), await openDataset(wholeArrow, { cellCache: 0 })];
    try {
      const { createdAt: _a, source: _s, checksum: _c, ...info } = appended.info;
      const { createdAt: _b, source: _t, checksum: _d, ...expected } = whole.info;
      expect(info).toEqual(expected);
      for (const weight of ['w', null]) {
        for (const [rows, columns] of [['a', 'b'], ['b', 'a'], ['a', 'a']]) {
          const query = { base: '*', rows: [{ variable: rows! }], columns: [{ variable: columns! }], weight };
          const [x, y] = [await appended.table(query), await whole.table(query)];
          expect([...x.respondents], `${rows} x ${columns}`).toEqual([...y.respondents]);
          expect([...x.weighted], `${rows} x ${columns} weighted`).toEqual([...y.weighted]);
        }
      }
      const targets = ['a=1', 'a=2', 'a=0..2', 'a=1,9', 'NOT a=2', 'a=NA', 'a=2 AND b=3..', 'a=1 OR b=1'];
      for (const base of ['*', 'a=1,2', 'b=2..4']) {
        const [x, y] = [await appended.crosstab({ base, targets }), await whole.crosstab({ base, targets })];
        expect(x.targets.map((cell) => [cell.respondents, cell.weighted]), base).toEqual(y.targets.map((cell) => [cell.respondents, cell.weighted]));
      }
      // Spot figures, counted from the rows as written: value 1's 100 respondents, 2's 2,020.
      const counts = await whole.crosstab({ base: '*', targets: ['a=1', 'a=2'] });
      expect(counts.targets.map((cell) => cell.respondents)).toEqual([100, 2020]);
    } finally {
      await Promise.all([appended.close(), whole.close()]);
    }
    expect(await buildFingerprint(appendedArrow)).toBe(await buildFingerprint(wholeArrow));
  }, 120_000);
});
