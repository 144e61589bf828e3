// appendRows() and columns skipped as id-like: the appended dataset is the build of all the
// rows (same info, skip reasons included, same answers), or the append is refused, naming
// the column and the file and saying to build from all the rows. An id-like text column is
// kept skipped when its old count (kept by the build) or the new rows' own count exceeds the
// id-like bound of every row; an id-like integer column when the new values are distinct
// integers lying outside the old ones' range. Datasets of earlier builds (a reason with the
// exact count, no kept count or range) are decided from what they hold, or refused.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRows, buildDataset, CrosstabError, openDataset } from '../src/index.js';
import { writeWithWeight } from '../src/dataset/file/add-weight.js';
import { loadDataset } from '../src/dataset/file/reader.js';
import type { StoredMeta } from '../src/dataset/format.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-append-idlike-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const file = (name: string) => join(dir, `${serial++}-${name}`);

/** One respondent per entry: its id (text or integer, as written), and region, age and weight from its position (after `offset` rows). */
function csv(name: string, ids: ReadonlyArray<string | number>, column = 'id', extraWeight = false, offset = 0): string {
  const header = `${column},region,age,w${extraWeight ? ',w2' : ''}`;
  const lines = ids.map((id, i) => [id, i + offset] as const).map(([id, n]) => `${id},${['north', 'south', 'east', 'west'][n % 4]},${18 + (n % 70)},${1 + (n % 13) / 4}${extraWeight ? ',1' : ''}`);
  const path = file(name);
  writeFileSync(path, `${[header, ...lines].join('\n')}\n`);
  return path;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);
const texts = (from: number, to: number): string[] => range(from, to).map((n) => `H${String(n).padStart(7, '0')}`);

async function storedMeta(path: string): Promise<StoredMeta> {
  const kernel = mainThreadKernel();
  const loaded = await loadDataset(path, kernel);
  loaded.close();
  for (const region of loaded.regions) kernel.memory.release(region.ptr, region.bytes);
  return loaded.meta;
}

/** The appended dataset and the build of all the rows: info equal (skip reasons too), tables equal. */
async function expectSameDataset(appendedPath: string, wholePath: string): Promise<void> {
  const [appended, whole] = [await openDataset(appendedPath, { cellCache: 0 }), await openDataset(wholePath, { cellCache: 0 })];
  try {
    const { createdAt: _a, source: _s, checksum: _c, ...info } = appended.info;
    const { createdAt: _b, source: _t, checksum: _d, ...expected } = whole.info;
    expect(info).toEqual(expected);
    for (const weight of [...whole.info.weights, null]) {
      const query = { base: '*', rows: [{ variable: 'region' }], columns: [{ variable: 'age' }], weight };
      const [a, e] = [await appended.table(query), await whole.table(query)];
      expect([...a.respondents]).toEqual([...e.respondents]);
      for (let i = 0; i < e.weighted.length; i++) expect(Math.abs(a.weighted[i]! - e.weighted[i]!)).toBeLessThanOrEqual(Math.abs(e.weighted[i]!) * 1e-12);
    }
    const targets = ['age=18..40 AND region=north', 'NOT region=east'];
    const [a, e] = [await appended.crosstab({ base: '*', targets }), await whole.crosstab({ base: '*', targets })];
    expect(a.targets.map((cell) => cell.respondents)).toEqual(e.targets.map((cell) => cell.respondents));
  } finally {
    await Promise.all([appended.close(), whole.close()]);
  }
}

/** Builds the first ids, appends the rest, builds all of them: the appended path (or the refusal), the whole build's path. */
async function appendAndBuild(first: ReadonlyArray<string | number>, rest: ReadonlyArray<string | number>, column = 'id'): Promise<{ appended?: string; refused?: CrosstabError; whole: string; restPath: string; out: string }> {
  const [firstPath, restPath, allPath] = [csv('first.csv', first, column), csv('rest.csv', rest, column, false, first.length), csv('all.csv', [...first, ...rest], column)];
  const [base, out, whole] = [file('first.arrow'), file('appended.arrow'), file('whole.arrow')];
  await buildDataset(firstPath, { weights: ['w'], survey: 'IDS', out: base });
  await buildDataset(allPath, { weights: ['w'], survey: 'IDS', out: whole });
  try {
    await appendRows(base, restPath, { out });
    return { appended: out, whole, restPath, out };
  } catch (error) {
    if (!(error instanceof CrosstabError)) throw error;
    return { refused: error, whole, restPath, out };
  }
}

function expectRefusal(result: { refused?: CrosstabError; appended?: string; restPath: string; out: string }, column: string, why: RegExp): void {
  expect(result.appended, 'the append should be refused').toBeUndefined();
  const error = result.refused!;
  expect(error.code).toBe('invalid_input');
  expect(error.message).toContain(result.restPath);
  expect(error.message).toContain(`column ${column}`);
  expect(error.message).toMatch(why);
  expect(error.details.field).toBe(column);
  expect(error.details.hint).toContain('crosstab build');
  expect(existsSync(result.out)).toBe(false);
}

describe('append and id-like text columns', () => {
  it('a 1% wave: the old count keeps the column id-like over every row; the reason is the build of all rows\'', async () => {
    // 10,000 distinct ids: more than max(5,000, 10,100 / 10), whatever the 100 new ones are.
    const result = await appendAndBuild(texts(0, 10_000), texts(10_000, 10_100));
    expect(result.refused).toBeUndefined();
    await expectSameDataset(result.appended!, result.whole);
    const skipped = (await storedMeta(result.appended!)).skipped;
    expect(skipped).toEqual([{ column: 'id', reason: 'id-like: more than 5000 distinct text values in 10100 rows', textValues: { count: 5001, atLeast: true } }]);
    // Counted up to the bound of twice the rows (5,000 here) and one more.
    expect((await storedMeta(result.whole)).skipped).toEqual([{ column: 'id', reason: 'id-like: more than 5000 distinct text values in 10100 rows', textValues: { count: 5001, atLeast: true } }]);
  });

  it('a wave too large for the old count: read, and its own values keep the column id-like', async () => {
    // 5,200 old ids are not more than 52,200 / 10; the 47,000 new ones are.
    const result = await appendAndBuild(texts(0, 5200), texts(5200, 52_200));
    expect(result.refused).toBeUndefined();
    await expectSameDataset(result.appended!, result.whole);
    expect((await storedMeta(result.appended!)).skipped[0]!.textValues).toEqual({ count: 47_000, atLeast: true });
  }, 60_000);

  it('refused when neither count shows the column id-like over every row (here a build of all rows makes it a variable)', async () => {
    // The 47,000 new rows repeat 200 old ids: 5,200 distinct in 52,200 rows, not more than 5,220.
    const result = await appendAndBuild(texts(0, 5200), range(0, 47_000).map((n) => `H${String(n % 200).padStart(7, '0')}`));
    expectRefusal(result, 'id', /neither its at least 5001 old ones nor the 200 of the new rows/);
    const whole = await openDataset(result.whole);
    try {
      expect(whole.info.skipped).toEqual([]);
      expect(whole.info.variables.map((variable) => variable.name)).toContain('id');
    } finally {
      await whole.close();
    }
  }, 60_000);
});

describe('append and id-like integer columns', () => {
  it('new ids all outside the old range, distinct: skipped as the build of all rows skips it, range and counts updated', async () => {
    const result = await appendAndBuild(range(1, 2001), [...range(-5, 0), ...range(2001, 2296)]);
    expect(result.refused).toBeUndefined();
    await expectSameDataset(result.appended!, result.whole);
    const expected = [{ column: 'id', reason: 'id-like: 2300 distinct integers, one per row', integerRange: { min: -5, max: 2295 } }];
    expect((await storedMeta(result.appended!)).skipped).toEqual(expected);
    expect((await storedMeta(result.whole)).skipped).toEqual(expected);
  });

  it('refused when a new id repeats an old one (a build of all rows makes the column a variable)', async () => {
    const result = await appendAndBuild(range(1, 2001), [...range(2001, 2100), 17]);
    expectRefusal(result, 'id', /new value 17 lies within its old values' range 1 to 2000/);
    const whole = await openDataset(result.whole);
    try {
      expect(whole.info.variables.map((variable) => variable.name)).toContain('id');
    } finally {
      await whole.close();
    }
  });

  it('refused when new ids repeat each other, as texts or as numbers, or one is blank', async () => {
    expectRefusal(await appendAndBuild(range(1, 2001), [...range(2001, 2100), 2050]), 'id', /blank or repeat each other/);
    // Two integers of one 64-bit float: a build of all rows reads the column as text.
    expectRefusal(await appendAndBuild(range(1, 2001), [...range(2001, 2100), '9007199254740992', '9007199254740993']), 'id', /repeat each other \(9007199254740993\)/);
    expectRefusal(await appendAndBuild(range(1, 2001), [...range(2001, 2100), '']), 'id', /blank or repeat each other/);
  });

  it('refused when a new value is not an integer (a build of all rows makes the column a numeric variable), or not a number', async () => {
    expectRefusal(await appendAndBuild(range(1, 2001), [...range(2001, 2100), 'x2100']), 'id', /new value x2100 is not a number/);
    const result = await appendAndBuild(range(1, 2001), [...range(2001, 2100), '2100.5']);
    expectRefusal(result, 'id', /new value 2100\.5 is not an integer/);
    const whole = await openDataset(result.whole);
    try {
      expect(whole.info.variables.find((variable) => variable.name === 'id')?.kind).toBe('numeric');
    } finally {
      await whole.close();
    }
  });
});

describe('append to a dataset of an earlier build (a reason with the exact count; no kept count or range)', () => {
  /** The first ids built, then written again with the skip entry an earlier build wrote (and a second weight, w2: the writer at hand adds one). */
  async function earlier(first: ReadonlyArray<string | number>, reason: string): Promise<string> {
    const built = file('first.arrow');
    await buildDataset(csv('first.csv', first), { weights: ['w'], survey: 'IDS', out: built });
    const kernel = mainThreadKernel();
    const loaded = await loadDataset(built, kernel);
    const old = file('earlier.arrow');
    try {
      expect(loaded.meta.skipped.map((entry) => entry.column)).toEqual(['id']);
      await writeWithWeight(loaded, kernel, 'w2', new Float64Array(first.length).fill(1), old, { skipped: [{ column: 'id', reason }] });
    } finally {
      loaded.close();
      for (const region of loaded.regions) kernel.memory.release(region.ptr, region.bytes);
    }
    expect((await storedMeta(old)).skipped).toEqual([{ column: 'id', reason }]);
    return old;
  }

  it('text: the count read from the reason keeps the column id-like; the reason becomes the build of all rows\'', async () => {
    const old = await earlier(texts(0, 10_000), 'id-like: 10000 distinct text values in 10000 rows');
    const [out, whole] = [file('appended.arrow'), file('whole.arrow')];
    await appendRows(old, csv('rest.csv', texts(10_000, 10_100), 'id', true, 10_000), { out });
    await buildDataset(csv('all.csv', texts(0, 10_100), 'id', true), { weights: ['w', 'w2'], survey: 'IDS', out: whole });
    await expectSameDataset(out, whole);
  });

  it('integers: new ids cannot be told apart from old ones without the range: refused', async () => {
    const old = await earlier(range(1, 2001), 'id-like: 2000 distinct integers, one per row');
    const rest = csv('rest.csv', range(5001, 5100), 'id', true, 2000);
    const out = file('appended.arrow');
    const error = await appendRows(old, rest, { out }).catch((caught: unknown) => caught as CrosstabError);
    expectRefusal({ refused: error as CrosstabError, restPath: rest, out }, 'id', /earlier build, which did not keep the column's smallest and largest value/);
  });
});
