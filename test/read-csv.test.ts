import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { readCsv } from '../src/dataset/input/read-csv.js';
import type { RawTable, ReadOptions } from '../src/dataset/input/raw-table.js';
import { CrosstabError, ErrorCode } from '../src/errors.js';
import { suggest } from '../src/text/suggest.js';
import { TableEncoder } from '../src/dataset/input/table-encoder.js';
import { acsCsv, gssCsv, skipWithoutAcs } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'read-csv-test-'));
let fileCount = 0;

/** Writes a fixture (text or bytes) into the temp folder and returns its path. */
function fixture(content: string | Uint8Array, name = `file-${++fileCount}.csv`): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

async function failure(path: string, options: ReadOptions): Promise<CrosstabError> {
  const error = await readCsv(path, options).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(CrosstabError);
  return error as CrosstabError;
}

function column(table: RawTable, name: string) {
  const found = table.columns.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no column ${name}`);
  return found;
}

const basic = ['id,zip,state,wt,note', '1,06,06,1.5,a', '2,6,,2,', '3,06,36,0,b', '4,,06,3e2,a', ''].join('\n');

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readCsv: reading', () => {
  it('dictionary-encodes every column, keeps text as written and blanks as 0', async () => {
    const table = await readCsv(fixture(basic), { weights: ['wt'] });
    expect(table.rows).toBe(4);
    expect(table.columns.map((c) => c.name)).toEqual(['id', 'zip', 'state', 'note']);
    expect(column(table, 'zip').dictionary).toEqual(['06', '6']);
    expect([...column(table, 'zip').ids]).toEqual([1, 2, 1, 0]);
    expect(column(table, 'state').dictionary).toEqual(['06', '36']);
    expect([...column(table, 'state').ids]).toEqual([1, 0, 2, 1]);
    expect(column(table, 'note').dictionary).toEqual(['a', 'b']);
    expect([...column(table, 'note').ids]).toEqual([1, 0, 2, 1]);
    expect(table.weights).toHaveLength(1);
    expect(table.weights[0]!.name).toBe('wt');
    expect([...table.weights[0]!.values]).toEqual([1.5, 2, 0, 300]);
    expect(table.columns.every((c) => c.ids.length === 4)).toBe(true);
  });

  it('keeps weights in the order requested and leaves out excluded columns', async () => {
    const path = fixture('a,w1,b,w2\nx,1,y,2\nz,3,,4\n');
    const table = await readCsv(path, { weights: ['w2', 'w1'], exclude: ['b'] });
    expect(table.source).toBe(path);
    expect(table.columns.map((c) => c.name)).toEqual(['a']);
    expect(table.weights.map((w) => [w.name, [...w.values]])).toEqual([
      ['w2', [2, 4]],
      ['w1', [1, 3]],
    ]);
  });

  it('does not trim spaces and decodes quoted fields', async () => {
    const table = await readCsv(fixture('v,w\n" 06",1\n06 ,1\n"a,b",1\n"say ""hi""",1\n'), { weights: ['w'] });
    expect(column(table, 'v').dictionary).toEqual([' 06', '06 ', 'a,b', 'say "hi"']);
  });

  it('reads gzip by its magic bytes, whatever the file is called', async () => {
    const fromGzip = await readCsv(fixture(gzipSync(basic), 'gzipped.csv'), { weights: ['wt'] });
    const fromPlain = await readCsv(fixture(basic, 'plain.csv.gz'), { weights: ['wt'] });
    const reference = await readCsv(fixture(basic), { weights: ['wt'] });
    expect(fromGzip).toEqual({ ...reference, source: fromGzip.source });
    expect(fromPlain).toEqual({ ...reference, source: fromPlain.source });
  });

  it('accepts CRLF line endings and a UTF-8 BOM', async () => {
    const reference = await readCsv(fixture(basic), { weights: ['wt'] });
    const crlf = await readCsv(fixture(basic.replaceAll('\n', '\r\n')), { weights: ['wt'] });
    const bom = await readCsv(fixture(`\uFEFF${basic}`), { weights: ['wt'] });
    expect(crlf).toEqual({ ...reference, source: crlf.source });
    expect(bom).toEqual({ ...reference, source: bom.source });
    expect(bom.columns[0]!.name).toBe('id');
  });

  it('reports progress, ending at the file size', async () => {
    const path = fixture(gzipSync(basic));
    const calls: Array<[number, number]> = [];
    await readCsv(path, { weights: ['wt'], onProgress: (done, total) => calls.push([done, total]) });
    const size = gzipSync(basic).length;
    expect(calls.at(-1)).toEqual([size, size]);
    expect(calls.every(([done, total]) => done <= total && total === size)).toBe(true);
  });

  it('grows past its initial capacity', async () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => `${i % 7 === 0 ? '' : String(i % 13).padStart(2, '0')},${i}`);
    const table = await readCsv(fixture(['code,w', ...rows].join('\n')), { weights: ['w'] });
    expect(table.rows).toBe(10_000);
    expect(table.columns[0]!.ids.length).toBe(10_000);
    expect(table.weights[0]!.values[9_999]).toBe(9_999);
    expect(table.columns[0]!.ids[7]).toBe(0);
    expect(table.columns[0]!.dictionary[table.columns[0]!.ids[9_999]! - 1]).toBe(String(9_999 % 13).padStart(2, '0'));
  });
});

describe('readCsv: errors', () => {
  it('rejects a missing file or a folder as file_not_found', async () => {
    const missing = join(dir, 'nope.csv');
    const error = await failure(missing, { weights: ['w'] });
    expect(error.code).toBe(ErrorCode.fileNotFound);
    expect(error.message).toContain(missing);
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    expect((await failure(folder, { weights: ['w'] })).code).toBe(ErrorCode.fileNotFound);
  });

  it.each([
    ['empty file', '', 1, undefined, 'empty'],
    ['header only', 'a,w\n', 1, undefined, 'no data rows'],
    ['duplicate header', 'a,w,b,a\n1,1,1,1\n', 1, 'a', 'columns 1 and 4'],
    ['blank header name', 'a,,w\n1,1,1\n', 1, undefined, 'column 2'],
    ['short row', 'a,b,w\n1,2,3\n4,5\n', 3, 'w', '2 fields but the header (line 1) has 3'],
    ['long row', 'a,w\n1,2\n3,4\n5,6,7\n', 4, undefined, '3 fields but the header (line 1) has 2'],
    ['blank line', 'a,w\n1,2\n\n3,4\n', 3, undefined, 'blank'],
    ['missing weight', 'a,WT,wt2\n1,2,3\n', 1, 'wt', 'did you mean "WT" or "wt2"?'],
    ['unclosed quote', 'a,w\n1,2\n"3,4\n5,6\n', 4, undefined, 'quote'],
    ['quote inside a field', 'a,w\n1,2\nab"c,4\n', 3, undefined, 'quote'],
  ])('%s', async (_name, content, line, field, text) => {
    const path = fixture(content);
    const error = await failure(path, { weights: field === 'wt' ? ['wt'] : ['w'] });
    expect(error.code).toBe(ErrorCode.invalidInput);
    expect(error.message).toContain(`${path}:${line}:`);
    expect(error.message).toContain(text);
    expect(error.details).toMatchObject({ file: path, line });
    expect(error.details.hint).toBeTruthy();
    if (field !== undefined) {
      expect(error.details.field).toBe(field);
      expect(error.message).toContain(`"${field}"`);
    }
  });

  it.each([
    ['blank', '', 'blank'],
    ['text', 'abc', 'not a number'],
    ['decimal comma', '"1,5"', 'not a number'],
    ['NaN', 'NaN', 'not a number'],
    ['Infinity', 'Infinity', 'not a number'],
    ['overflow', '1e999', 'not finite'],
    ['negative', '-1', 'negative'],
    ['padded', ' 1', 'not a number'],
  ])('rejects a %s weight with file:line, column and text', async (_name, cell, problem) => {
    const path = fixture(`id,wgt\n1,0.5\n2,${cell}\n3,1\n`);
    const error = await failure(path, { weights: ['wgt'] });
    expect(error.code).toBe(ErrorCode.invalidInput);
    expect(error.message).toContain(`${path}:3:`);
    expect(error.message).toContain('"wgt"');
    expect(error.message).toContain(problem);
    if (cell !== '') expect(error.message).toContain(JSON.stringify(cell.replaceAll('"', '')));
    expect(error.details).toMatchObject({ file: path, line: 3, field: 'wgt' });
  });

  it('counts physical lines across quoted line breaks, LF or CRLF', async () => {
    const text = 'id,note,wt\n1,"line one\nline two\nline three",1\n2,plain,abc\n';
    for (const content of [text, text.replaceAll('\n', '\r\n')]) {
      const path = fixture(content);
      const error = await failure(path, { weights: ['wt'] });
      expect(error.message).toContain(`${path}:5:`);
    }
  });

  it('rejects an unknown exclude name as invalid_option, with suggestions', async () => {
    const path = fixture('Region,w\n1,1\n');
    const error = await failure(path, { weights: ['w'], exclude: ['region'] });
    expect(error.code).toBe(ErrorCode.invalidOption);
    expect(error.message).toContain('"region"');
    expect(error.message).toContain('did you mean "Region"?');
    expect(error.details.suggestions).toEqual(['Region']);
  });

  it.each([
    ['no weights', { weights: [] }],
    ['a repeated weight', { weights: ['w', 'w'] }],
    ['a weight also excluded', { weights: ['w'], exclude: ['w'] }],
  ])('rejects options with %s as invalid_option', async (_name, options) => {
    const error = await failure(fixture('a,w\n1,1\n'), options as ReadOptions);
    expect(error.code).toBe(ErrorCode.invalidOption);
  });

  it('rejects a truncated or corrupt gzip stream', async () => {
    const packed = gzipSync(Array.from({ length: 5_000 }, (_, i) => `${i},1`).join('\n'));
    const corrupt = Buffer.from(packed);
    corrupt.fill(0xff, 20, 60);
    for (const bytes of [packed.subarray(0, packed.length >> 1), corrupt]) {
      const path = fixture(bytes);
      const error = await failure(path, { weights: ['1'] });
      expect(error.code).toBe(ErrorCode.invalidInput);
      expect(error.message).toContain(path);
      expect(error.message).toContain('gzip stream is corrupt or truncated');
    }
  });

  it.skipIf(process.platform !== 'linux')('closes the file after a failed read', async () => {
    const openFiles = () => readdirSync('/proc/self/fd').length;
    const ragged = fixture('a,w\n1,2\n3\n');
    const truncated = fixture(gzipSync('a,w\n1,2\n'.repeat(20_000)).subarray(0, 2_000));
    const before = openFiles();
    for (let i = 0; i < 5; i++) {
      await failure(ragged, { weights: ['w'] });
      await failure(truncated, { weights: ['w'] });
      await failure(ragged, { weights: ['x'] });
    }
    expect(openFiles()).toBeLessThanOrEqual(before);
  });
});

describe('the table encoder every reader shares', () => {
  it('keeps every row across several 1,048,576-row chunks: skipped (blank) rows stay blank, ids widen past 255 values', () => {
    const rows = 2_500_000;
    const encoder = new TableEncoder('big.csv', 'header', [{ name: 'w' }, { name: 'code' }, { name: 'late' }], { weights: ['w'] });
    const [, code, late] = encoder.columns;
    const weight = encoder.weightAt[0]!;
    for (let row = 0; row < rows; row++) {
      weight.set(row, row % 7);
      // Every 10th row blank; 300 distinct values, so the ids widen to two bytes mid-way.
      code!.set(row, row % 10 === 0 ? '' : row < 1_500_000 ? String(row % 200) : String(row % 300));
      // A column written only in its last rows: the chunks before are never touched.
      if (row >= rows - 3) late!.set(row, 'x');
    }
    const table = encoder.finish(rows, '');
    const ids = table.columns[0]!.ids;
    const dictionary = table.columns[0]!.dictionary;
    expect(ids.length).toBe(rows);
    expect(ids.BYTES_PER_ELEMENT).toBe(2);
    for (const row of [0, 1, 9, 10, 1_048_575, 1_048_576, 1_048_577, 1_499_999, 1_500_001, 2_097_152, 2_499_999]) {
      const expected = row % 10 === 0 ? undefined : row < 1_500_000 ? String(row % 200) : String(row % 300);
      expect(ids[row] === 0 ? undefined : dictionary[ids[row]! - 1], `row ${row}`).toBe(expected);
    }
    expect(table.weights[0]!.values[2_100_003]).toBe(2_100_003 % 7);
    const lateIds = table.columns[1]!.ids;
    expect(lateIds.length).toBe(rows);
    expect([lateIds[rows - 4], lateIds[rows - 3], lateIds[rows - 1]]).toEqual([0, 1, 1]);
  });
});

describe('suggest', () => {
  it('ranks case-insensitive equals first, then near names, in candidate order', () => {
    expect(suggest('pwgtp', ['SERIALNO', 'PWGTP', 'AGEP'])).toEqual(['PWGTP']);
    expect(suggest('wtsps', ['wtssall', 'wtssps', 'WTSPS'])).toEqual(['WTSPS', 'wtssps']);
    expect(suggest('sex', ['age', 'race', 'sexx', 'sx', 'Sex'], 2)).toEqual(['Sex', 'sexx']);
    expect(suggest('zzz', ['age', 'race'])).toEqual([]);
    expect(suggest('', ['a'])).toEqual([]);
  });
});

describe('readCsv: GSS 1972-2024 subset', () => {
  const gss = gssCsv;

  it('reads 75,699 rows and matches the published 131 blanks of sex', async () => {
    const table = await readCsv(gss, { weights: ['wtssps'] });
    expect(table.rows).toBe(75_699);
    expect(table.columns).toHaveLength(19);
    const sex = column(table, 'sex');
    expect(sex.dictionary).toEqual(expect.arrayContaining(['1', '2']));
    expect(sex.ids.filter((id) => id === 0).length).toBe(131);
    const withoutWtssall = await readCsv(gss, { weights: ['wtssps'], exclude: ['wtssall'] });
    expect(withoutWtssall.columns).toHaveLength(18);
  });

  it('rejects wtssall as a weight: it is blank from 2021 on (line 64816)', async () => {
    const error = await failure(gss, { weights: ['wtssps', 'wtssall'] });
    expect(error.code).toBe(ErrorCode.invalidInput);
    expect(error.message).toContain(`${gss}:64816:`);
    expect(error.message).toContain('"wtssall" is blank');
    expect(error.details).toMatchObject({ line: 64816, field: 'wtssall' });
  });
});

const skipAcs = skipWithoutAcs('test/read-csv.test.ts (readCsv on the ACS PUMS file)');

describe.skipIf(skipAcs)('readCsv: ACS PUMS 2024 person file', () => {
  it('reads 2,736,891 rows; PWGTP sums to the Census state populations', { timeout: 300_000 }, async () => {
    const started = performance.now();
    let peakRss = process.memoryUsage.rss();
    const table = await readCsv(acsCsv, {
      weights: ['PWGTP'],
      onProgress: () => {
        peakRss = Math.max(peakRss, process.memoryUsage.rss());
      },
    });
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
    const seconds = (performance.now() - started) / 1000;
    console.info(`ACS read: ${seconds.toFixed(1)} s, peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB`);

    expect(table.rows).toBe(2_736_891);
    const state = column(table, 'STATE');
    expect(state.dictionary.every((code) => /^\d\d$/.test(code))).toBe(true);
    const weights = table.weights[0]!.values;
    const byState = new Float64Array(state.dictionary.length + 1);
    for (let row = 0; row < table.rows; row++) byState[state.ids[row]!]! += weights[row]!;
    expect(byState[state.dictionary.indexOf('36') + 1]).toBe(19_867_248);
    expect(byState[state.dictionary.indexOf('56') + 1]).toBe(587_618);
  });
});
