// The range index a build gets without asking (`crosstab build` without --range-index): the
// rule picks the numeric variables of 10-256 values that fill half their span, fewest values
// first, within half the bytes of the rest of the dataset; the answers are those of the same
// build without any range index (`--range-index none`), to the last bit.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset } from '../src/build/build.js';
import { AUTO_RANGE_BUDGET, AUTO_RANGE_FILE_LIMIT, AUTO_RANGE_MIN_VALUES, autoRangeIndex } from '../src/dataset/build/compile.js';
import { RANGE_INDEX_LIMIT } from '../src/dataset/format.js';
import { openDataset, type Dataset } from '../src/facade/dataset.js';
import { estimateCellsMs } from '../src/query/cells-plan.js';
import { POOL_THRESHOLD_MS } from '../src/query/executor.js';
import { seededRandom } from './support/large-dataset.js';
import { cliPath, gssCsv } from './support/paths.js';

type Sums = { respondents: number; weighted: number; sumSqWeights: number };
const same = (a: Sums, b: Sums) => expect([a.respondents, a.weighted, a.sumSqWeights]).toEqual([b.respondents, b.weighted, b.sumSqWeights]);

const column = (name: string, values: number[], kind: 'numeric' | 'text' = 'numeric') => ({ column: { name } as never, kind, values: values.map(String) });
const run = (from: number, count: number, step = 1) => Array.from({ length: count }, (_, i) => from + i * step);

describe('autoRangeIndex: the stated rule', () => {
  const words = 1_000;
  const bitset = words * 8;
  const roomy = 100e6;

  it('takes numeric variables of 10 to 256 values that fill half their span, and nothing else', () => {
    const columns = [
      column('nine', run(1, AUTO_RANGE_MIN_VALUES - 1)),
      column('ten', run(1, AUTO_RANGE_MIN_VALUES)),
      column('age', run(0, 97)),
      column('widest', run(1, RANGE_INDEX_LIMIT)),
      column('too-wide', run(1, RANGE_INDEX_LIMIT + 1)),
      // 10 values over 1..19 fill half of their span; over 1..21 they do not.
      column('half', run(1, 10, 2)),
      column('scattered', [...run(1, 9, 2), 21]),
      column('codes', run(1100, 20, 100)),
      column('halves', run(0, 21, 0.5)),
      column('text', run(1, 20), 'text'),
    ];
    expect(autoRangeIndex(columns, roomy, words)).toEqual(['ten', 'half', 'halves', 'age', 'widest']);
  });

  it('fewest values first, while the range indexes stay within half the rest of the dataset', () => {
    const columns = [column('age', run(0, 97)), column('year', run(1972, 35)), column('hours', run(1, 99)), column('scale', run(1, 11))];
    // Rest of 2 x (11 + 35 + 97) bitsets: room for scale, year and age, not hours.
    const rest = ((11 + 35 + 97) * bitset) / AUTO_RANGE_BUDGET;
    expect(autoRangeIndex(columns, rest, words)).toEqual(['scale', 'year', 'age']);
    expect(autoRangeIndex(columns, rest - 1, words)).toEqual(['scale', 'year']);
    expect(autoRangeIndex(columns, 0, words)).toEqual([]);
  });

  it('keeps the dataset within 1 GiB: a large one gets what fits, a larger one none', () => {
    const acsWords = 42_764;
    const columns = [column('age', run(0, 97)), column('year', run(1972, 35))];
    const bitsets = (count: number) => count * acsWords * 8;
    expect(autoRangeIndex(columns, AUTO_RANGE_FILE_LIMIT - bitsets(35 + 97), acsWords)).toEqual(['year', 'age']);
    expect(autoRangeIndex(columns, AUTO_RANGE_FILE_LIMIT - bitsets(35 + 97) + 1, acsWords)).toEqual(['year']);
    expect(autoRangeIndex(columns, AUTO_RANGE_FILE_LIMIT - bitsets(35) + 1, acsWords)).toEqual([]);
    expect(autoRangeIndex(columns, 2 * AUTO_RANGE_FILE_LIMIT, acsWords)).toEqual([]);
  });

  it('keeps ACS-sized S1 (AGEP=18.. over SEX=2 and SCHL=21..24) on the calling thread once its ranges are indexed', () => {
    // ACS: 2,736,891 respondents, 42,764 bitset words. The pool path is the slower for this shape.
    const respondents = 2_736_891;
    const acsWords = Math.ceil(respondents / 64);
    const age = { op: 'range', variable: 0, lo: 19, hi: 97 } as const;
    const sex = { op: 'ranks' as const, variable: 1, ranks: [2] };
    const schl = { op: 'range', variable: 2, lo: 21, hi: 24 } as const;
    const indexed = estimateCellsMs({ rangeBuild: () => 'index' }, age, [sex, schl], acsWords, respondents);
    expect(indexed).toBeLessThan(POOL_THRESHOLD_MS);
  });
});

// 60,000 respondents, two weights: an age (with blanks), a year, hours with half of its values
// blank, a 4-valued count, scattered numeric codes and a text column.
const ROWS = 60_000;
function csvText(): string {
  const next = seededRandom(41);
  const lines = ['w,w2,age,year,hours,kids,field,region'];
  for (let row = 0; row < ROWS; row++) {
    const age = next() < 0.02 ? '' : String(Math.floor(next() * 50));
    const year = String(1990 + Math.floor(next() * 35));
    const hours = next() < 0.5 ? '' : String(1 + Math.floor(next() * 40));
    const kids = String(Math.floor(next() * 4));
    const field = String(1100 + 100 * Math.floor(next() * 40));
    const region = ['north', 'south', 'east', 'west'][Math.floor(next() * 4)]!;
    const weight = next() < 0.5 ? Math.round(next() * 2300) : (next() * 900).toFixed(3);
    lines.push([weight, (next() * 10).toFixed(2), age, year, hours, kids, field, region].join(','));
  }
  return `${lines.join('\n')}\n`;
}

describe('buildDataset without a range-index option', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-range-auto-'));
  const csv = join(dir, 'survey.csv');
  const opened: Record<string, Dataset> = {};
  const sizes: Record<string, number> = {};

  beforeAll(async () => {
    writeFileSync(csv, csvText());
    const builds = { auto: undefined, none: 'none', empty: [], named: ['kids'] } as const;
    for (const [name, rangeIndex] of Object.entries(builds)) {
      const out = join(dir, `${name}.arrow`);
      const report = await buildDataset(csv, { weights: ['w', 'w2'], survey: 'T', out, ...(rangeIndex === undefined ? {} : { rangeIndex: rangeIndex as string[] | 'none' }) });
      sizes[name] = report.bytes;
      for (const execution of ['inline', 'pool'] as const) opened[`${name}-${execution}`] = await openDataset(out, { cellCache: 0, execution });
    }
    const out = join(dir, 'auto-named.arrow');
    await buildDataset(csv, { weights: ['w', 'w2'], survey: 'T', out, rangeIndex: 'auto' });
    opened['auto-named-inline'] = await openDataset(out, { cellCache: 0 });
  });
  afterAll(() => {
    Object.values(opened).forEach((ds) => ds.close());
    rmSync(dir, { recursive: true, force: true });
  });

  const indexed = (name: string) => opened[`${name}-inline`]!.info.variables.filter((v) => v.rangeIndex === true).map((v) => v.name);

  it('carries the range indexes the rule picks: year, hours, age (not the 4-valued count, the scattered codes or the text)', () => {
    expect(indexed('auto')).toEqual(['age', 'year', 'hours']);
    expect(indexed('auto-named')).toEqual(['age', 'year', 'hours']);
    // Each costs a bitset per value: 50 + 35 + 40 values of 60,000 / 8 bytes (in 64-bit words,
    // each buffer aligned), and their names in the metadata.
    const bitsets = (50 + 35 + 40) * Math.ceil(ROWS / 64) * 8;
    expect(sizes.auto! - sizes.none!).toBeGreaterThanOrEqual(bitsets);
    expect(sizes.auto! - sizes.none!).toBeLessThan(bitsets * 1.05);
  });

  it("'none' (or an empty list) builds none, a list exactly those", () => {
    expect(indexed('none')).toEqual([]);
    expect(indexed('empty')).toEqual([]);
    expect(indexed('named')).toEqual(['kids']);
  });

  for (const execution of ['inline', 'pool'] as const) {
    it(`${execution}: every range, band, list and blank gives the answers of the build without a range index, to the last bit`, async () => {
      const next = seededRandom(7);
      const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
      const term = () => {
        const [variable, bottom, top] = pick([['age', 0, 49], ['year', 1990, 2024], ['hours', 1, 40], ['kids', 0, 3]] as const);
        const clamp = (value: number) => Math.min(top, Math.max(bottom, value));
        const lo = bottom + Math.floor(next() * (top - bottom + 3)) - 1;
        const hi = lo + Math.floor(next() * (top - bottom + 2));
        return pick([`${variable}=${lo}..${hi}`, `${variable}=${lo}..`, `${variable}=..${hi}`, `${variable}=NA`, `${variable}=${clamp(lo)},${clamp(hi)}`, `not ${variable}=${lo}..${hi}`, `${variable}=${lo}..${hi} and region=south`]);
      };
      for (let query = 0; query < 60; query++) {
        const spec = { base: next() < 0.2 ? '*' : term(), targets: Array.from({ length: 1 + Math.floor(next() * 4) }, term) };
        const auto = await opened[`auto-${execution}`]!.crosstab(spec);
        const none = await opened[`none-${execution}`]!.crosstab(spec);
        same(auto.base, none.base);
        auto.targets.forEach((cell, i) => same(cell, none.targets[i]!));
        const rows = Array.from({ length: 3 }, term);
        const table = { base: spec.base, rows, columns: spec.targets };
        const a = await opened[`auto-${execution}`]!.table(table);
        const b = await opened[`none-${execution}`]!.table(table);
        rows.forEach((_, r) => spec.targets.forEach((_, c) => same(a.cell(r, c), b.cell(r, c))));
        same(a.total, b.total);
      }
    });
  }
});

describe('crosstab build: the automatic range index and --range-index none', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-range-auto-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cli = (...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', timeout: 120_000 });

  it('without the flag the build carries the rule\'s range indexes; with none, none; the answers are the same', () => {
    const auto = join(dir, 'gss-auto.arrow');
    const none = join(dir, 'gss-none.arrow');
    for (const [out, extra] of [[auto, []], [none, ['--range-index', 'none']]] as const) {
      const built = cli('build', gssCsv, '--weight', 'wtssps', '--survey', 'GSS', ...extra, '--quiet', '--out', out);
      expect(built.stderr).toBe('');
      expect(built.status).toBe(0);
    }
    expect(cli('info', auto).stdout).toMatch(/^range index \(a range of values reads stored bitsets, no scan\): year, age, relig, formwt, sample$/m);
    expect(cli('info', none).stdout).not.toContain('range index');
    const targets = ['age=18..34', 'age=65..', 'year=2000..2010', 'year=..1980', 'age=NA', 'relig=2..5', 'not age=..40', 'formwt=1..'].flatMap((target) => ['--target', target]);
    const a = cli('query', auto, '--base', 'age=18..', ...targets, '--json');
    const b = cli('query', none, '--base', 'age=18..', ...targets, '--json');
    expect(a.stderr).toBe('');
    expect(JSON.parse(a.stdout)).toEqual(JSON.parse(b.stdout));
  });
});
