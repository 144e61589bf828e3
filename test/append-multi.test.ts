// appendRows() on a dataset with multi-response variables: a wave's sets are encoded with the
// dataset's definitions (dichotomies, category sets, delimited columns of numbers or text), new
// codes join the values where a build of every row puts them, and the result is the dataset a
// build of every row makes: the same info, the same respondents and weighted sums for seeded
// random expressions over the multi-response variables (as targets and as bases) and for
// tables of them, and the same `crosstab export` with --id.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRows, buildDataset, CrosstabError, ErrorCode, exportColumns, openDataset, type BuildOptions, type Dataset } from '../src/index.js';
import { loadDataset } from '../src/dataset/file/reader.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { seededRandom } from './support/large-dataset.js';
import { nhanesCsv } from './support/paths.js';
import { skipWithoutPspp } from './support/pspp.js';

const noPspp = skipWithoutPspp('the SPSS case of test/append-multi.test.ts');

const dir = mkdtempSync(join(tmpdir(), 'crosstab-append-multi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const file = (name: string) => join(dir, `${serial++}-${name}`);

const MULTI_HEADER = 'pid,brands,shops,A,B,C,pick1,pick2,notes';

/**
 * NHANES rows with an id and the columns of five multi-response variables, answered one way in
 * the first part and another in the wave: `brands` (`;`, numbers) loses code 1 (a dense
 * container turning sparse), gains 0 (before every old code) and 6, its 5 turns common
 * (sparse to dense) and its 7 stays rare (a list, extended), some written `2.0`; `shops`
 * (`|`, text, rarely unanswered: a list of no-answer respondents) gains Aldi and Morrisons;
 * dichotomies A, B, C (1 yes, 2 no); category columns pick1, pick2 gain amber and green;
 * `notes` is blank in the whole first part and holds text in the wave.
 */
function multiRow(next: () => number, wave: boolean): string {
  const pick = <T,>(options: T[]) => options[Math.floor(next() * options.length)]!;
  const noAnswer = next() < 0.08;
  const codes = wave ? [0, 2, 3, 4, 5, 6, 7] : [1, 2, 3, 4, 5, 7];
  const chance = (code: number) => (code === 1 ? 0.04 : code === 5 ? (wave ? 0.3 : 0.01) : code === 7 ? 0.01 : 0.25);
  const chosen = codes.filter((code) => next() < chance(code)).map((code) => (wave && code === 2 && next() < 0.5 ? '2.0' : String(code)));
  const brands = noAnswer ? '' : chosen.length === 0 ? ';' : chosen.join(';');
  const shopNames = wave ? ['Aldi', ' Tesco ', 'Morrisons', 'Lidl'] : ['Tesco', 'Lidl'];
  const shops = next() < 0.01 ? '' : shopNames.filter(() => next() < 0.4).join('|');
  const dichotomies = next() < 0.07 ? ['', '', ''] : [0, 1, 2].map(() => (next() < 0.4 ? '1' : '2'));
  const colours = wave ? ['amber', 'blue', 'green', 'red'] : ['blue', 'red'];
  const pick1 = next() < 0.1 ? '' : pick(colours);
  const pick2 = next() < 0.6 ? '' : pick(colours);
  const notes = wave && next() < 0.5 ? pick(['x', 'y;x', 'z', ';']) : '';
  return [brands, shops, ...dichotomies, pick1, pick2, notes].join(',');
}

/** The first part (`firstRows` NHANES rows), the wave (the rest) and every row, as CSV files. */
function waveFiles(firstRows: number): { first: string; rest: string; all: string } {
  const [header, ...rows] = gunzipSync(readFileSync(nhanesCsv)).toString('utf8').trimEnd().split('\n');
  const next = seededRandom(11);
  const lines = rows.map((line, row) => `P${row + 1},${line},${multiRow(next, row >= firstRows)}`);
  const head = `${MULTI_HEADER.split(',')[0]},${header},${MULTI_HEADER.split(',').slice(1).join(',')}`;
  const write = (name: string, part: string[]) => {
    const path = file(name);
    writeFileSync(path, `${[head, ...part].join('\n')}\n`);
    return path;
  };
  return { first: write('first.csv', lines.slice(0, firstRows)), rest: write('rest.csv', lines.slice(firstRows)), all: write('all.csv', lines) };
}

function codebookFile(): string {
  const path = file('codebook.json');
  writeFileSync(
    path,
    JSON.stringify({
      variables: { A: { label: 'Any' }, B: { label: 'Private' }, C: { label: 'Public' }, brands: { label: 'Brands bought', values: { '6': 'Brand six' } } },
      multi: [
        { name: 'cover', columns: ['A', 'B', 'C'], counted: '1', label: 'Coverage' },
        { name: 'picks', columns: ['pick1', 'pick2'], label: 'Colours picked' },
      ],
    }),
  );
  return path;
}

const OPTIONS: Omit<BuildOptions, 'out'> = {
  weights: ['WTMEC2YR'],
  survey: 'NHANES',
  id: 'pid',
  multi: [{ column: 'brands' }, { column: 'shops', delimiter: '|' }, { column: 'notes' }],
  design: { strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true },
};

/** Weighted sums: equal, or within what summing the same weights in another order changes. */
function expectSums(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string): void {
  expect(actual.length, what).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const [a, e] = [actual[i]!, expected[i]!];
    if (a !== e) expect(Math.abs(a - e), `${what}[${i}]: ${a} against ${e}`).toBeLessThanOrEqual(Math.abs(e) * 1e-12);
  }
}

/** Seeded random expressions over the multi-response variables (every form), alone or with single-coded ones. */
function randomExpressions(count: number, seed: number): string[] {
  const next = seededRandom(seed);
  const pick = <T,>(options: T[]) => options[Math.floor(next() * options.length)]!;
  const sets: Array<[string, string[]]> = [
    ['brands', ['0', '1', '2', '3', '4', '5', '6', '7']],
    ['shops', ['Aldi', 'Lidl', 'Morrisons', 'Tesco']],
    ['cover', ['1', '2', '3']],
    ['picks', ['amber', 'blue', 'green', 'red']],
    ['notes', ['x', 'y', 'z']],
  ];
  const multiAtom = (): string => {
    const [name, values] = pick(sets);
    const two = () => {
      const a = pick(values);
      const b = pick(values.filter((value) => value !== a));
      return `${a},${b}`;
    };
    return pick([
      () => `${name}=${pick(values)}`,
      () => `${name}=${two()}`,
      () => `${name}=all(${two()})`,
      () => `${name}=none(${two()})`,
      () => `${name}=NA`,
      () => `NOT ${name}=${pick(values)}`,
      () => (name === 'brands' || name === 'cover' ? `${name}=${pick(['0..2', '2..', '1..3', '..1'])}` : `${name}=${pick(values)}`),
    ])();
  };
  const singleAtom = () => pick(['RIAGENDR=1', 'agecat=2..3', 'race=1,3', 'HI_CHOL=1', 'agecat=NA', 'pick1=amber']);
  return Array.from({ length: count }, () =>
    pick([
      () => multiAtom(),
      () => `${multiAtom()} AND ${singleAtom()}`,
      () => `${multiAtom()} OR ${multiAtom()}`,
      () => `(${multiAtom()} OR ${singleAtom()}) AND NOT ${multiAtom()}`,
    ])(),
  );
}

/** Same info, tables of every multi-response variable, and random crosstabs (multi-response targets and bases) alike. */
async function expectSameDataset(appended: Dataset, whole: Dataset): Promise<number> {
  const { createdAt: _a, source: _s, checksum: _c, ...info } = appended.info;
  const { createdAt: _b, source: _t, checksum: _d, ...expected } = whole.info;
  expect(info).toEqual(expected);
  let compared = 0;
  const multis = whole.info.variables.filter((variable) => variable.kind === 'multi').map((variable) => variable.name);
  expect(multis.sort()).toEqual(['brands', 'cover', 'notes', 'picks', 'shops']);
  for (const rows of multis) {
    for (const columns of [...multis, 'agecat', 'pick1']) {
      for (const weight of ['WTMEC2YR', null]) {
        const query = { base: '*', rows: [{ variable: rows }], columns: [{ variable: columns }], weight };
        const [a, e] = [await appended.table(query), await whole.table(query)];
        expect([...a.respondents], `${rows} x ${columns}`).toEqual([...e.respondents]);
        expectSums(a.weighted, e.weighted, `${rows} x ${columns} weighted`);
        expectSums(a.sumSqWeights, e.sumSqWeights, `${rows} x ${columns} sumSqWeights`);
        compared += e.respondents.length;
      }
    }
  }
  const targets = randomExpressions(200, 5);
  const bases = ['*', ...randomExpressions(5, 9)];
  for (const base of bases) {
    const [a, e] = [await appended.crosstab({ base, targets }), await whole.crosstab({ base, targets })];
    expect(a.base.respondents, base).toBe(e.base.respondents);
    expect(a.targets.map((cell) => cell.respondents), base).toEqual(e.targets.map((cell) => cell.respondents));
    expectSums(a.targets.map((cell) => cell.weighted), e.targets.map((cell) => cell.weighted), `targets over ${base}`);
    compared += targets.length;
  }
  return compared;
}

describe('appendRows with multi-response variables', () => {
  it('a wave appended to the first part answers as the build of every row: new codes in place, containers changing kind, info, random queries, export', async () => {
    const parts = waveFiles(5000);
    const codebook = codebookFile();
    const [whole, first, appended] = [file('whole.arrow'), file('first.arrow'), file('appended.arrow')];
    await buildDataset(parts.all, { ...OPTIONS, codebook, out: whole });
    await buildDataset(parts.first, { ...OPTIONS, codebook, out: first });
    const report = await appendRows(first, parts.rest, { out: appended });
    expect(report.appended).toBe(8591 - 5000);
    const added = Object.fromEntries(report.newValues.map((entry) => [entry.variable, [...entry.values].sort()]));
    expect(added).toMatchObject({ brands: ['0', '6'], shops: ['Aldi', 'Morrisons'], picks: ['amber', 'green'], notes: ['x', 'y', 'z'] });
    expect(added.cover).toBeUndefined();
    const [a, e] = [await openDataset(appended, { cellCache: 0 }), await openDataset(whole, { cellCache: 0 })];
    try {
      const brands = e.info.variables.find((variable) => variable.name === 'brands')!;
      expect(brands.values!.map((value) => value.value)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
      expect(await expectSameDataset(a, e)).toBeGreaterThan(2000);
    } finally {
      await Promise.all([a.close(), e.close()]);
    }
    // The containers changed kind where a build of every row has them of the other kind: the same layout of each value.
    const kinds = async (path: string) => {
      const kernel = mainThreadKernel();
      const data = await loadDataset(path, kernel, { verify: 'full' });
      try {
        return Object.fromEntries(data.meta.variables.filter((variable) => variable.kind === 'multi').map((variable) => [variable.name, [...variable.codes!, variable.multi!.noAnswer].map((row) => data.buffers[row]!.kind)]));
      } finally {
        data.close();
        for (const region of data.regions) kernel.memory.release(region.ptr, region.bytes);
      }
    };
    expect(await kinds(appended)).toEqual(await kinds(whole));
    const columns = ['pid', 'WTMEC2YR', 'A', 'pick1', 'pick2', 'agecat', '_row'];
    for (const extension of ['csv', 'parquet']) {
      const [x, y] = [file(`appended.${extension}`), file(`whole.${extension}`)];
      await exportColumns(appended, { columns, out: x });
      await exportColumns(whole, { columns, out: y });
      expect(readFileSync(x).equals(readFileSync(y)), `${extension} export`).toBe(true);
    }
  });

  it('appended twice (three waves) as the build of every row', async () => {
    const parts = waveFiles(3000);
    const [header, ...rows] = readFileSync(parts.rest, 'utf8').trimEnd().split('\n');
    const second = file('second.csv');
    const third = file('third.csv');
    writeFileSync(second, `${[header, ...rows.slice(0, 2000)].join('\n')}\n`);
    writeFileSync(third, `${[header, ...rows.slice(2000)].join('\n')}\n`);
    const codebook = codebookFile();
    const [whole, tracker] = [file('whole.arrow'), file('tracker.arrow')];
    await buildDataset(parts.all, { ...OPTIONS, codebook, out: whole });
    await buildDataset(parts.first, { ...OPTIONS, codebook, out: tracker });
    await appendRows(tracker, second, { out: tracker });
    await appendRows(tracker, third, { out: tracker });
    const [a, e] = [await openDataset(tracker, { cellCache: 0 }), await openDataset(whole, { cellCache: 0 })];
    try {
      await expectSameDataset(a, e);
    } finally {
      await Promise.all([a.close(), e.close()]);
    }
  });

  // Debian's pspp writes the files; CI installs it, and under CI=true a missing pspp fails the test.
  it.skipIf(noPspp)('SPSS multiple-response sets (a dichotomy and a category set, pspp): a .sav wave appended as the build of every row', async () => {
    let seed = 3;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    // The wave's brands include 5 (Echo), which the first part's do not.
    const lines = Array.from({ length: 600 }, (_, row) => {
      const blank = next() < 0.1;
      const dich = [0, 1, 2].map(() => (blank ? '.' : next() < 0.45 ? '1' : '0'));
      const brands = [0, 1].map(() => (next() < 0.3 ? '.' : String(1 + Math.floor(next() * (row < 400 ? 4 : 5)))));
      return [row + 1, (0.5 + next() * 2).toFixed(2), ...dich, ...brands].join(' ');
    });
    const sav = (name: string, rows: string[]): string => {
      const out = file(name);
      writeFileSync(
        `${out}.sps`,
        [
          'DATA LIST LIST /id w hicov privcov pubcov brand1 brand2.',
          'BEGIN DATA',
          ...rows,
          'END DATA.',
          "VARIABLE LABELS hicov 'Any coverage' privcov 'Private coverage' pubcov 'Public coverage'.",
          "VALUE LABELS brand1 brand2 1 'Acme' 2 'Bolt' 3 'Crest' 4 'Dyno' 5 'Echo'.",
          "MRSETS /MDGROUP NAME=$cover LABEL='Health coverage' VARIABLES=hicov privcov pubcov VALUE=1",
          "  /MCGROUP NAME=$brands LABEL='Brands bought' VARIABLES=brand1 brand2.",
          `SAVE OUTFILE='${out}'.`,
          '',
        ].join('\n'),
      );
      execFileSync('pspp', ['-O', 'format=txt', '-o', `${out}.txt`, `${out}.sps`]);
      return out;
    };
    const [allSav, firstSav, restSav] = [sav('all.sav', lines), sav('first.sav', lines.slice(0, 400)), sav('rest.sav', lines.slice(400))];
    const options = { weights: ['w'], survey: 'SAV', id: 'id', rangeIndex: 'none' as const };
    const [whole, first, appended] = [file('whole.arrow'), file('first.arrow'), file('appended.arrow')];
    await buildDataset(allSav, { ...options, out: whole });
    await buildDataset(firstSav, { ...options, out: first });
    const report = await appendRows(first, restSav, { out: appended });
    expect(report.newValues.filter((entry) => entry.variable === '$brands')).toEqual([{ variable: '$brands', values: ['5'] }]);
    const [a, e] = [await openDataset(appended, { cellCache: 0 }), await openDataset(whole, { cellCache: 0 })];
    try {
      const { createdAt: _a, source: _s, checksum: _c, ...info } = a.info;
      const { createdAt: _b, source: _t, checksum: _d, ...expected } = e.info;
      expect(info).toEqual(expected);
      const targets = ['$cover=1', '$cover=2,3', '$cover=all(1,3)', '$cover=none(1,2)', '$cover=NA', '$brands=5', '$brands=Echo', '$brands=all(1,2)', '$brands=none(4,5)', '$brands=NA', 'NOT $brands=1..2'];
      for (const base of ['*', '$cover=2', 'NOT $brands=3', 'brand1=5']) {
        const [x, y] = [await a.crosstab({ base, targets }), await e.crosstab({ base, targets })];
        expect(x.targets.map((cell) => cell.respondents), base).toEqual(y.targets.map((cell) => cell.respondents));
        expectSums(x.targets.map((cell) => cell.weighted), y.targets.map((cell) => cell.weighted), `targets over ${base}`);
      }
      expect((await e.crosstab({ base: '*', targets: ['$brands=5'] })).targets[0]!.respondents).toBeGreaterThan(20);
    } finally {
      await Promise.all([a.close(), e.close()]);
    }
  });

  it('refuses a wave that would make a build of every row another variable: text in a set of numbers, a member column missing; writes nothing', async () => {
    const parts = waveFiles(8000);
    const base = file('base.arrow');
    await buildDataset(parts.first, { ...OPTIONS, codebook: codebookFile(), out: base });
    const [header, ...rows] = readFileSync(parts.rest, 'utf8').trimEnd().split('\n');
    const variant = (name: string, head: string, lines: string[]) => {
      const path = file(name);
      writeFileSync(path, `${[head, ...lines].join('\n')}\n`);
      return path;
    };
    const brandsAt = header!.split(',').indexOf('brands');
    const withBrands = (line: string, brands: string) => line.split(',').map((field, i) => (i === brandsAt ? brands : field)).join(',');
    const text = variant('text.csv', header!, [rows[0]!, withBrands(rows[1]!, '2;two')]);
    const collision = variant('collision.csv', header!, [withBrands(rows[0]!, '9007199254740992;9007199254740993')]);
    const dropColumn = (name: string) => {
      const at = header!.split(',').indexOf(name);
      const drop = (line: string) => line.split(',').filter((_, i) => i !== at).join(',');
      return variant(`no-${name}.csv`, drop(header!), rows.slice(0, 5).map(drop));
    };
    const cases: Array<[string, RegExp, string]> = [
      [text, /column brands holds "two", but the values of the multi-response variable brands are numbers/, 'brands'],
      [collision, /the multi-response variable brands cannot keep number values with the new rows: .*9007199254740993/, 'brands'],
      [dropColumn('brands'), /has no column brands, a column of the multi-response variable brands/, 'brands'],
      [dropColumn('pick2'), /has no column pick2/, 'pick2'],
    ];
    for (const [input, message, field] of cases) {
      const out = file('refused.arrow');
      const error = (await appendRows(base, input, { out }).catch((e: unknown) => e)) as CrosstabError;
      expect(error).toBeInstanceOf(CrosstabError);
      expect(error.code).toBe(ErrorCode.invalidInput);
      expect(error.message).toMatch(message);
      expect(error.details.field).toBe(field);
      expect(() => readFileSync(out)).toThrow();
    }
  });
});
