// appendRows(): a dataset built from the first part of a file and extended with the rest
// answers every query as the dataset built from the whole file at once: every variable's
// values, counts and blanks, every value of every variable crossed with others (respondents
// exactly, weighted sums to the last bits a different order of summation can change), range
// indexes, design counts and design-based standard errors. New values join the dictionaries
// (also before the old ones, shifting every old rank); rows that do not fit are refused.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRows, buildDataset, CrosstabError, ErrorCode, exportColumns, openDataset, tableStatistics, weightDataset, type BuildOptions, type Dataset } from '../src/index.js';
import { loadDataset } from '../src/dataset/file/reader.js';
import { readInput } from '../src/dataset/input/read-input.js';
import { BufferKind } from '../src/dataset/format.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { cliPath, gssCsv, nhanesCsv, repoRoot } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-append-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const file = (name: string) => join(dir, `${serial++}-${name}`);

/** The CSV's header and rows, split into two files by `second` (rows for which it is true go second). */
function split(csvGz: string, second: (fields: string[], row: number) => boolean): { first: string; rest: string; all: string } {
  const [header, ...rows] = gunzipSync(readFileSync(csvGz)).toString('utf8').trimEnd().split('\n');
  const isSecond = rows.map((line, row) => second(line.split(','), row));
  const write = (name: string, lines: string[]) => {
    const path = file(name);
    writeFileSync(path, `${[header, ...lines].join('\n')}\n`);
    return path;
  };
  const firstRows = rows.filter((_, row) => !isSecond[row]);
  const restRows = rows.filter((_, row) => isSecond[row]);
  return { first: write('first.csv', firstRows), rest: write('rest.csv', restRows), all: write('all.csv', [...firstRows, ...restRows]) };
}

/** `split`, with a first column `pid` holding each input row's id (`P1`, `P2`, ... in the gzip'd file's order). */
function splitWithIds(csvGz: string, second: (fields: string[], row: number) => boolean): { first: string; rest: string; all: string } {
  const [header, ...rows] = gunzipSync(readFileSync(csvGz)).toString('utf8').trimEnd().split('\n');
  const path = file('with-ids.csv.gz');
  writeFileSync(path, gzipSync(`${[`pid,${header}`, ...rows.map((line, row) => `P${row + 1},${line}`)].join('\n')}\n`));
  return split(path, (fields, row) => second(fields.slice(1), row));
}

/** Builds the whole file and the first part extended with the rest; opens both. */
async function buildBoth(parts: { first: string; rest: string; all: string }, options: Omit<BuildOptions, 'out'>, threads?: number): Promise<{ whole: Dataset; appended: Dataset; paths: { whole: string; appended: string } }> {
  const whole = file('whole.arrow');
  const first = file('first.arrow');
  const appended = file('appended.arrow');
  await buildDataset(parts.all, { ...options, out: whole });
  await buildDataset(parts.first, { ...options, out: first });
  const report = await appendRows(first, parts.rest, { out: appended, ...(threads === undefined ? {} : { threads }) });
  expect(report.appended).toBeGreaterThan(0);
  return { whole: await openDataset(whole, { cellCache: 0 }), appended: await openDataset(appended, { cellCache: 0 }), paths: { whole, appended } };
}

/** Weighted sums: equal, or within what summing the same weights in another order changes. */
function expectSums(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const [a, e] = [actual[i]!, expected[i]!];
    if (a !== e) expect(Math.abs(a - e), `${what}[${i}]: ${a} against ${e}`).toBeLessThanOrEqual(Math.abs(e) * 1e-12);
  }
}

/** Every variable's info, and every variable by every other of at most 100 values, as table cells. */
async function expectSameAnswers(appended: Dataset, whole: Dataset, columnsBy: string[], weights: Array<string | null> = [...whole.info.weights, null]): Promise<number> {
  // Skipped columns too, with their reasons (an id-like column's as the build of all rows words it).
  const { createdAt: _a, source: _s, checksum: _c, ...info } = appended.info;
  const { createdAt: _b, source: _t, checksum: _d, ...expected } = whole.info;
  expect(info).toEqual(expected);
  let cells = 0;
  for (const variable of whole.info.variables.filter((v) => v.values !== undefined && v.values.length <= 100)) {
    for (const column of columnsBy) {
      for (const weight of weights) {
        const query = { base: '*', rows: [{ variable: variable.name }], columns: [{ variable: column }], weight };
        const [a, e] = [await appended.table(query), await whole.table(query)];
        expect([...a.respondents], `${variable.name} x ${column}`).toEqual([...e.respondents]);
        expectSums(a.weighted, e.weighted, `${variable.name} x ${column} weighted`);
        expectSums(a.sumSqWeights, e.sumSqWeights, `${variable.name} x ${column} sumSqWeights`);
        cells += e.respondents.length;
      }
    }
  }
  return cells;
}

describe('appendRows', () => {
  it('GSS waves: 1972-2000 built, 2002-2024 appended, answers as the build of all years; expressions and ranges too', async () => {
    const parts = split(gssCsv, (fields) => Number(fields[0]) > 2000);
    // Read by worker threads (a wave this small takes the main thread by default).
    const { whole, appended } = await buildBoth(parts, { weights: ['wtssps'], survey: 'GSS', codebook: join(repoRoot, 'datasets', 'gss.codebook.json'), rangeIndex: ['age'] }, 2);
    try {
      expect(appended.info.respondents).toBe(whole.info.respondents);
      expect(await expectSameAnswers(appended, whole, ['sex', 'degree', 'year'])).toBeGreaterThan(1000);
      const targets = ['age=18..34', 'age=40..', 'year=1990..2010 AND sex=2', 'degree=3,4 OR NOT race=1', 'age=NA'];
      const [a, e] = [await appended.crosstab({ base: 'year=1998..2016', targets }), await whole.crosstab({ base: 'year=1998..2016', targets })];
      expect(a.targets.map((cell) => cell.respondents)).toEqual(e.targets.map((cell) => cell.respondents));
      expectSums(a.targets.map((cell) => cell.weighted), e.targets.map((cell) => cell.weighted), 'targets');
    } finally {
      await Promise.all([whole.close(), appended.close()]);
    }
  });

  it('new values that sort before the old ones (every old rank moves): 2002-2024 built, 1972-2000 appended', async () => {
    const parts = split(gssCsv, (fields) => Number(fields[0]) <= 2000);
    const { whole, appended } = await buildBoth(parts, { weights: ['wtssps'], survey: 'GSS', rangeIndex: ['age', 'year'] });
    try {
      expect(await expectSameAnswers(appended, whole, ['sex', 'year'])).toBeGreaterThan(1000);
      const [a, e] = [await appended.crosstab({ base: '*', targets: ['year=1972..1980', 'year=1990..'] }), await whole.crosstab({ base: '*', targets: ['year=1972..1980', 'year=1990..'] })];
      expect(a.targets.map((cell) => cell.respondents)).toEqual(e.targets.map((cell) => cell.respondents));
    } finally {
      await Promise.all([whole.close(), appended.close()]);
    }
  });

  it('NHANES with its design (strata, nested PSUs): design counts and standard errors as the whole build', async () => {
    const parts = split(nhanesCsv, (_, row) => row % 3 === 0);
    const { whole, appended, paths } = await buildBoth(parts, { weights: ['WTMEC2YR'], survey: 'NHANES', codebook: join(repoRoot, 'datasets', 'nhanes.codebook.json'), design: { strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true } });
    try {
      // The input order extended (no --id): the export is the full build's.
      const [exportA, exportE] = [file('appended.csv'), file('whole.csv')];
      await exportColumns(paths.appended, { columns: ['_row', 'WTMEC2YR', 'HI_CHOL', 'agecat'], out: exportA });
      await exportColumns(paths.whole, { columns: ['_row', 'WTMEC2YR', 'HI_CHOL', 'agecat'], out: exportE });
      expect(readFileSync(exportA, 'utf8')).toBe(readFileSync(exportE, 'utf8'));
      expect(appended.info.design).toEqual(whole.info.design);
      await expectSameAnswers(appended, whole, ['agecat']);
      const query = { base: '*', rows: [{ variable: 'HI_CHOL' }], columns: [{ variable: 'agecat' }] };
      const [a, e] = [tableStatistics(await appended.table(query), { stats: ['vpct', 'se'] }), tableStatistics(await whole.table(query), { stats: ['vpct', 'se'] })];
      const se = (stats: typeof a) => [...(stats.columnPctSE as Float64Array)];
      expect(se(e).some((value) => value > 0)).toBe(true);
      expectSums(se(a), se(e), 'columnPercentSE');
    } finally {
      await Promise.all([whole.close(), appended.close()]);
    }
  });

  it('a dataset with an --id column: ids and input order extended, so crosstab export writes what a build of all the rows writes', async () => {
    const parts = splitWithIds(nhanesCsv, (_, row) => row % 4 === 1);
    const options = { weights: ['WTMEC2YR'], survey: 'NHANES', id: 'pid', design: { strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true } };
    const { whole, appended, paths } = await buildBoth(parts, options);
    try {
      await expectSameAnswers(appended, whole, ['agecat']);
    } finally {
      await Promise.all([whole.close(), appended.close()]);
    }
    const columns = ['pid', 'WTMEC2YR', 'agecat', 'HI_CHOL', 'SDMVSTRA', '_row'];
    for (const extension of ['csv', 'parquet']) {
      const [a, e] = [file(`appended.${extension}`), file(`whole.${extension}`)];
      await exportColumns(paths.appended, { columns, out: a });
      await exportColumns(paths.whole, { columns, out: e });
      expect(readFileSync(a).equals(readFileSync(e)), `${extension} export`).toBe(true);
      // The first part's rows, then the rest's: P1 (first part), P2 (the rest: row 1 % 4).
      if (extension === 'csv') expect(readFileSync(a, 'utf8').split('\n').slice(1, 3).map((line) => line.split(',')[0])).toEqual(['P1', 'P3']);
    }
  });

  it('refuses a new respondent whose id is taken (by an old respondent or another new one) or blank, naming the id and file:line', async () => {
    const parts = splitWithIds(nhanesCsv, (_, row) => row >= 100 && row < 140);
    const base = file('ids-base.arrow');
    await buildDataset(parts.first, { weights: ['WTMEC2YR'], survey: 'NHANES', id: 'pid', out: base });
    const [header, ...rows] = readFileSync(parts.rest, 'utf8').trimEnd().split('\n');
    const variant = (name: string, lines: string[]) => {
      const path = file(name);
      writeFileSync(path, `${[header, ...lines].join('\n')}\n`);
      return path;
    };
    // Line 4 of the file (data row 3) takes the id P7 of the 7th respondent of the dataset.
    const taken = variant('taken.csv', [rows[0]!, rows[1]!, rows[2]!.replace(/^P\d+,/, 'P7,'), rows[3]!]);
    // A quoted field with a line break before: the repeat is on line 6.
    const twice = variant('twice.csv', [rows[0]!.replace(/^(P\d+),/, '"$1",'), `"P9${'\n'}9",${rows[1]!.replace(/^P\d+,/, '')}`, rows[2]!, rows[0]!]);
    const blank = variant('blank.csv', [rows[0]!, rows[1]!.replace(/^P\d+,/, ',')]);
    const cases: Array<[string, RegExp]> = [
      [taken, /taken\.csv:4: the id "P7" of column pid is already the id of a respondent of .*ids-base\.arrow \(its input row 7\)/],
      [twice, /twice\.csv:6: the id "P101" of column pid is also the id of line 2/],
      [blank, /blank\.csv:3: column pid \(the respondent id\) is blank/],
    ];
    for (const [input, message] of cases) {
      const out = file('refused.arrow');
      const error = await appendRows(base, input, { out }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CrosstabError);
      expect((error as CrosstabError).code).toBe(ErrorCode.invalidInput);
      expect((error as CrosstabError).message).toMatch(message);
      expect((error as CrosstabError).details.field).toBe('pid');
      expect(() => readFileSync(out)).toThrow();
    }
    const missing = variant('no-id.csv', []);
    writeFileSync(missing, `${header!.replace(/^pid,/, '')}\n${rows[0]!.replace(/^P\d+,/, '')}\n`);
    expect(((await appendRows(base, missing, { out: file('x.arrow') }).catch((e: unknown) => e)) as CrosstabError).message).toMatch(/has no column pid, the respondent id column/);
  });

  it('replicate weights: degrees of freedom given at build (--degf) kept, counted ones counted again over every row, as the full builds', async () => {
    // Strata 75-80 built, 81-89 appended: the JKn replicates' rank grows with the strata (first part 10 - 1, all 17 - 1).
    // The fixture's NHANES columns and its 31 JKn replicates (its other replicate families left out).
    const lines = gunzipSync(readFileSync(join(repoRoot, 'test', 'fixtures', 'r', 'nhanes-replicates.csv.gz'))).toString('utf8').trimEnd().split('\n');
    const jkn = file('jkn.csv.gz');
    writeFileSync(jkn, gzipSync(`${lines.map((line) => line.split(',').slice(0, 38).join(',')).join('\n')}\n`));
    const parts = split(jkn, (fields) => Number(fields[1]) > 80);
    const replicateWeights = Array.from({ length: 31 }, (_, i) => `JKN_${String(i + 1).padStart(2, '0')}`);
    const rscales = [0.5, 0.5, 0.5, 0.5, 2 / 3, 2 / 3, 2 / 3, ...new Array<number>(24).fill(0.5)];
    const query = { base: '*', rows: [{ variable: 'HI_CHOL' }], columns: [{ variable: 'agecat' }] };
    for (const degf of [undefined, 40]) {
      const design = { replicateWeights, replicateType: 'JKn' as const, rscales, ...(degf === undefined ? {} : { degf }) };
      // No automatic range index: the strata (6 values built, 15 in all) would get one in the full build only, which is
      // a difference of layout, not of answers (append keeps the first build's range indexes).
      const { whole, appended } = await buildBoth(parts, { weights: ['WTMEC2YR'], survey: 'NHANES', design, rangeIndex: 'none' });
      try {
        expect(whole.info.design.replicates!.degf).toBe(degf ?? 16);
        expect(appended.info.design).toEqual(whole.info.design);
        await expectSameAnswers(appended, whole, ['agecat'], ['WTMEC2YR', 'JKN_07', null]);
        const [a, e] = [tableStatistics(await appended.table(query), { stats: ['vpct', 'se', 'chisq'] }), tableStatistics(await whole.table(query), { stats: ['vpct', 'se', 'chisq'] })];
        expectSums([...(a.columnPctSE as Float64Array)], [...(e.columnPctSE as Float64Array)], 'columnPctSE');
        expect(e.raoScott?.length).toBeGreaterThan(0);
        expectSums(a.raoScott!.map((test) => test.ddf), e.raoScott!.map((test) => test.ddf), 'Rao-Scott ddf');
      } finally {
        await Promise.all([whole.close(), appended.close()]);
      }
    }
  });

  it('refuses a damaged dataset (a byte changed in any old buffer, where the new rows meet it or not): compact, writes nothing; in segments, the new file refuses the damaged part when read', async () => {
    const parts = split(nhanesCsv, (_, row) => row % 4 === 0);
    const built = file('first.arrow');
    await buildDataset(parts.first, { weights: ['WTMEC2YR'], survey: 'NHANES', out: built });
    const kernel = mainThreadKernel();
    const data = await loadDataset(built, kernel, { verify: true });
    const entries = data.buffers as unknown as Array<{ name: string; kind: number; fileOffset: number; stored: number }>;
    data.close();
    for (const region of data.regions) kernel.memory.release(region.ptr, region.bytes);
    // One buffer of each kind: the first byte (old respondents the new ones do not change) and the last (where they go).
    const kinds = [BufferKind.weights, BufferKind.inputRows, BufferKind.indexU8, BufferKind.dense, BufferKind.sparse];
    const picked = kinds.map((kind) => entries.find((entry) => entry.kind === kind && !entry.name.startsWith('atleast:'))!);
    picked.push(entries.find((entry) => entry.name.startsWith('atleast:'))!);
    expect(picked.every((entry) => entry !== undefined)).toBe(true);
    const bytes = readFileSync(built);
    for (const entry of picked) {
      for (const at of [entry.fileOffset, entry.fileOffset + entry.stored - 1]) {
        const damaged = file('damaged.arrow');
        const copy = Uint8Array.from(bytes);
        copy[at]! ^= 0x10;
        writeFileSync(damaged, copy);
        const out = file('from-damaged.arrow');
        const error = (await appendRows(damaged, parts.rest, { out, compact: true }).catch((e: unknown) => e)) as CrosstabError;
        expect(error, `${entry.name} at ${at - entry.fileOffset}`).toBeInstanceOf(CrosstabError);
        expect(error.code).toBe(ErrorCode.corruptDataset);
        expect(error.message).toContain(`(${entry.name}): its bytes were modified or damaged`);
        expect(() => readFileSync(out)).toThrow();
        // In segments the old bytes are copied with their hashes, unread: the damaged part fails its own when read.
        const report = await appendRows(damaged, parts.rest, { out });
        expect(report.segments).toBe(2);
        const opened = (await loadDataset(out, kernel, { verify: 'full' }).catch((e: unknown) => e)) as CrosstabError;
        expect(opened, `${entry.name} at ${at - entry.fileOffset}, in segments`).toBeInstanceOf(CrosstabError);
        expect(opened.code).toBe(ErrorCode.corruptDataset);
        expect(opened.message).toContain(`(${entry.name}): its bytes were modified or damaged`);
      }
    }
  });

  it('refuses a dataset with a calibrated weight, saying to append before weighting, and writes nothing', async () => {
    const [header, ...rows] = gunzipSync(readFileSync(nhanesCsv)).toString('utf8').trimEnd().split('\n');
    const write = (name: string, head: string, lines: string[]) => {
      const path = file(name);
      writeFileSync(path, `${[head, ...lines].join('\n')}\n`);
      return path;
    };
    const calibrated = file('calibrated.arrow');
    const plain = file('plain.arrow');
    await buildDataset(write('plain.csv', header!, rows.slice(0, 400)), { weights: ['WTMEC2YR'], survey: 'NHANES', out: plain });
    await weightDataset(plain, { targets: { margins: [{ variable: 'RIAGENDR', proportions: { '1': 0.49, '2': 0.51 } }] }, method: 'rake', name: 'wt_rake', out: calibrated });
    const cases: Array<[string, string, RegExp, string]> = [
      [calibrated, write('wave.csv', header!, rows.slice(400, 500)), /its weight wt_rake was calibrated to population targets/, 'wt_rake'],
    ];
    for (const [dataset, wave, message, field] of cases) {
      const out = file('refused.arrow');
      const error = (await appendRows(dataset, wave, { out }).catch((e: unknown) => e)) as CrosstabError;
      expect(error).toBeInstanceOf(CrosstabError);
      expect(error.message).toMatch(message);
      expect(error.details.field).toBe(field);
      expect(error.details.hint).toMatch(/--drop-calibrated/);
      expect(() => readFileSync(out)).toThrow();
    }
  });

  it('refuses new rows that do not fit, naming the column and the file, and writes nothing', async () => {
    const parts = split(nhanesCsv, (_, row) => row % 2 === 0);
    const base = file('base.arrow');
    await buildDataset(parts.first, { weights: ['WTMEC2YR'], survey: 'NHANES', out: base });
    const [header, ...rows] = readFileSync(parts.rest, 'utf8').trimEnd().split('\n');
    const variant = (name: string, head: string, lines: string[]) => {
      const path = file(name);
      writeFileSync(path, `${[head, ...lines].join('\n')}\n`);
      return path;
    };
    const textInNumeric = variant('text.csv', header!, [...rows.slice(0, 10), rows[10]!.replace(/^1,/, 'one,')]);
    const unknown = variant('unknown.csv', `${header},brand`, rows.slice(0, 10).map((line) => `${line},A`));
    const missing = variant('missing.csv', header!.replace(/,RIAGENDR$/, ''), rows.slice(0, 10).map((line) => line.replace(/,[^,]*$/, '')));
    // 9007199254740993 reads as the float of 9007199254740992, a value the dataset's SDMVSTRA has not; with 0.1 and 0.10000000000000001 alike.
    const collision = variant('collision.csv', header!, [rows[0]!.replace(/^(\d+),(\d+),/, '$1,0.1,'), rows[1]!.replace(/^(\d+),(\d+),/, '$1,0.10000000000000001,')]);
    const cases: Array<[string, RegExp, string]> = [
      [collision, /column SDMVSTRA cannot stay numeric with the new rows: its values 0\.1 and 0\.10000000000000001/, 'SDMVSTRA'],
      [textInNumeric, /column SDMVPSU holds "one", but SDMVPSU is numeric/, 'SDMVPSU'],
      [unknown, /has column brand that .* does not have/, 'brand'],
      [missing, /has no column RIAGENDR/, 'RIAGENDR'],
    ];
    for (const [input, message, field] of cases) {
      const out = file('refused.arrow');
      const error = await appendRows(base, input, { out }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CrosstabError);
      expect((error as CrosstabError).code).toBe(ErrorCode.invalidInput);
      expect((error as CrosstabError).message).toMatch(message);
      expect((error as CrosstabError).details.field).toBe(field);
      expect(() => readFileSync(out)).toThrow();
    }
    // A column blank for every old respondent is no variable of the dataset: answers in it are refused.
    const blankBase = file('blank-base.arrow');
    await buildDataset(variant('blank.csv', `${header},note`, rows.slice(0, 50).map((line) => `${line},`)), { weights: ['WTMEC2YR'], survey: 'NHANES', out: blankBase });
    const filled = await appendRows(blankBase, variant('filled.csv', `${header},note`, rows.slice(50, 60).map((line) => `${line},x`)), { out: file('filled.arrow') }).catch((e: unknown) => e);
    expect((filled as CrosstabError).message).toMatch(/has answers in column note, which was blank for every respondent/);
  });

  it('a text column skipped as id-like is not read from the new rows (ignore), and is read again when they could make it a variable; answers as the build of all rows', async () => {
    // 5,200 distinct household ids in the first part: more than the 5,000 values that make a text column id-like.
    const lines = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => {
        const n = from + i;
        return `H${String(n).padStart(7, '0')},${['north', 'south', 'east', 'west'][n % 4]},${18 + (n % 70)},${1 + (n % 13) / 4}`;
      });
    const header = 'serial,region,age,w';
    const write = (name: string, rows: string[]) => {
      const path = file(name);
      writeFileSync(path, `${[header, ...rows].join('\n')}\n`);
      return path;
    };
    // The read option: a named column is left out when present, and a name the input lacks is no error.
    const small = write('small.csv', lines(0, 20));
    const table = await readInput(small, { weights: ['w'], ignore: ['serial', 'absent'] });
    expect(table.columns.map((column) => column.name)).toEqual(['region', 'age']);
    for (const [first, wave] of [
      [5200, 800], // 6,000 rows: the 5,200 old ids alone keep the column id-like; it is not read
      [5200, 47_000], // 52,200 rows: 5,200 ids would not; the new rows are read again with it (and it stays id-like)
    ] as const) {
      const parts = { first: write('ids-first.csv', lines(0, first)), rest: write('ids-rest.csv', lines(first, first + wave)), all: write('ids-all.csv', lines(0, first + wave)) };
      const { whole, appended } = await buildBoth(parts, { weights: ['w'], survey: 'IDS' });
      try {
        expect(whole.info.skipped.map((entry) => entry.column)).toEqual(['serial']);
        expect(appended.info.respondents).toBe(first + wave);
        expect(await expectSameAnswers(appended, whole, ['region'])).toBeGreaterThan(0);
      } finally {
        await Promise.all([whole.close(), appended.close()]);
      }
    }
  });

  it('crosstab append: writes the extended dataset over the old one, names the new values, and labels a refusal with the flag', async () => {
    const parts = split(nhanesCsv, (fields) => fields[5] === '4');
    const dataset = file('tracker.arrow');
    await buildDataset(parts.first, { weights: ['WTMEC2YR'], survey: 'NHANES', out: dataset });
    const before = await openDataset(dataset);
    const respondents = before.info.respondents;
    await before.close();
    const run = (...args: string[]) => spawnSync(process.execPath, [cliPath, 'append', ...args], { encoding: 'utf8', timeout: 60_000 });
    const done = run(dataset, parts.rest, '--out', dataset);
    expect(done.status, done.stderr).toBe(0);
    expect(done.stderr).toMatch(/appended \d[\d,]* respondents: .*tracker\.arrow has [\d,]+/);
    expect(done.stderr).toMatch(/new values of agecat: 4\n/);
    const after = await openDataset(dataset);
    expect(after.info.respondents).toBeGreaterThan(respondents);
    expect(after.info.variables.find((variable) => variable.name === 'agecat')?.values?.map((value) => value.value)).toEqual(['1', '2', '3', '4']);
    await after.close();
    const refused = run(dataset, parts.rest, '--out', join(dir, 'nowhere', 'x.arrow'));
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/--out/);
  });
});
