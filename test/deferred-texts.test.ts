// Text columns numbered over their bytes (Parquet PLAIN pages, Arrow Utf8) keep their distinct
// values as bytes and make strings only when the dictionary is read: an id-like column is
// skipped without one string made, a kept column reads exactly the texts of a decoder that
// makes them as it goes (invalid UTF-8 and U+FFFD included: values that decode the same are
// one value), and a column whose pages mix both ways numbers its values the same.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Float64, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyColumn, idLikeTextValues } from '../src/dataset/build/classify.js';
import { PlainTextColumn } from '../src/dataset/input/parquet-texts.js';
import { readParquet } from '../src/dataset/input/read-parquet.js';
import { readArrow } from '../src/dataset/input/read-arrow.js';
import { ColumnEncoder, TableEncoder } from '../src/dataset/input/table-encoder.js';
import { buildDataset, openDataset } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-deferred-texts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Length-prefixed values as a PLAIN BYTE_ARRAY page holds them. */
function page(values: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(values.reduce((sum, value) => sum + 4 + value.length, 0));
  let at = 0;
  for (const value of values) {
    new DataView(out.buffer).setUint32(at, value.length, true);
    out.set(value, at + 4);
    at += 4 + value.length;
  }
  return out;
}

/** First-seen numbering of the values as TextDecoder reads them (malformed bytes as U+FFFD); empty is blank (0). */
function reference(pages: Uint8Array[][]): { dictionary: string[]; ids: number[] } {
  const decoder = new TextDecoder();
  const dictionary: string[] = [];
  const ids = pages.flat().map((bytes) => {
    const text = decoder.decode(bytes);
    if (text === '') return 0;
    const at = dictionary.indexOf(text);
    return at >= 0 ? at + 1 : dictionary.push(text);
  });
  return { dictionary, ids };
}

function encodePages(pages: Uint8Array[][]): { encoder: ColumnEncoder; ids: number[] } {
  const table = new TableEncoder('t', 'test', [{ name: 'x' }, { name: 'w' }], { weights: ['w'] });
  const encoder = table.columns[0]!;
  const texts = new PlainTextColumn(encoder);
  let row = 0;
  for (const values of pages) {
    const { ids } = texts.encode(page(values), 0, values.length);
    encoder.setIds(row, ids);
    row += values.length;
  }
  return { encoder, ids: Array.from(encoder.take(row)) };
}

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('deferred text dictionaries', () => {
  it('keep valid UTF-8 as bytes and read back as the texts', () => {
    const pages = [[utf8('héllo'), utf8('a'), utf8(''), utf8('a'), utf8('日本')], [utf8('b'), utf8('héllo'), utf8('c')]];
    const { encoder, ids } = encodePages(pages);
    expect(encoder.deferredTexts?.count).toBe(5);
    expect(encoder.dictionary).toEqual([]);
    encoder.makeTexts();
    const want = reference(pages);
    expect(encoder.dictionary).toEqual(want.dictionary);
    expect(ids).toEqual(want.ids);
  });

  it('turn to strings at the first page with malformed UTF-8 or U+FFFD, numbering as a decoder does', () => {
    // 0xff and 0xfe both read as U+FFFD, as does the literal U+FFFD: one value.
    const pages = [
      [utf8('a'), utf8('b')],
      [utf8('c'), Uint8Array.of(0xff), utf8('a'), Uint8Array.of(0xfe)],
      [utf8('\uFFFD'), utf8('d'), Uint8Array.of(0x61, 0xff)],
    ];
    const { encoder, ids } = encodePages(pages);
    expect(encoder.deferredTexts).toBeUndefined();
    const want = reference(pages);
    expect(want.dictionary).toEqual(['a', 'b', 'c', '\uFFFD', 'd', 'a\uFFFD']);
    expect(encoder.dictionary).toEqual(want.dictionary);
    expect(ids).toEqual(want.ids);
  });

  it('make the strings when another value comes to the column another way', () => {
    const encoder = new TableEncoder('t', 'test', [{ name: 'x' }, { name: 'w' }], { weights: ['w'] }).columns[0]!;
    encoder.setIds(0, new PlainTextColumn(encoder).encode(page([utf8('x1'), utf8('x2')]), 0, 2).ids);
    expect(encoder.deferredTexts?.count).toBe(2);
    encoder.set(2, 'x3');
    expect(encoder.deferredTexts).toBeUndefined();
    expect(encoder.dictionary).toEqual(['x1', 'x2', 'x3']);
    expect(Array.from(encoder.take(3))).toEqual([1, 2, 3]);
  });

  it('skip an id-like Parquet text column without making its strings; a kept one reads as before', async () => {
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    const path = join(dir, 'ids.parquet');
    await duck.run(`COPY (SELECT 'HU' || lpad((i // 2)::VARCHAR, 9, '0') AS serial, (i % 3)::VARCHAR || 'x' AS few, 1.0::DOUBLE AS w FROM range(50000) r(i))
      TO '${path}' (FORMAT parquet, DICTIONARY_COMPRESSION_RATIO_THRESHOLD -1, ROW_GROUP_SIZE 20000)`);
    const table = await readParquet(path, { weights: ['w'], threads: 0 });
    const [serial, few] = table.columns;
    expect(serial!.deferred).toEqual({ count: 25000, first: 'HU000000000' });
    expect(classifyColumn(serial!, table.rows)).toEqual({ kind: 'skip', reason: 'id-like: more than 5000 distinct text values in 50000 rows', textValues: { count: 10001, atLeast: true } });
    // Deciding to skip it made no strings.
    expect(serial!.deferred).toBeDefined();
    expect(classifyColumn(few!, table.rows)).toEqual({ kind: 'text' });
    expect(few!.dictionary).toEqual(['0x', '1x', '2x']);
    const dictionary = serial!.dictionary;
    expect(dictionary.length).toBe(25000);
    expect(dictionary[12345]).toBe(`HU${String(12345).padStart(9, '0')}`);
    expect(Array.from(serial!.ids.subarray(0, 5))).toEqual([1, 1, 2, 2, 3]);
    // A write replaces the dictionary (the build lets a skipped column go so).
    serial!.dictionary = [];
    expect(serial!.deferred).toBeUndefined();
    expect(serial!.dictionary).toEqual([]);
  }, 60_000);
  it('stop numbering an id-like text column past the bound when the build asks (skipIdLike), the columns it excepts read whole', async () => {
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    const path = join(dir, 'ids-stop.parquet');
    await duck.run(`COPY (SELECT 'HU' || lpad((i // 2)::VARCHAR, 9, '0') AS serial, 'U' || i::VARCHAR AS uid, (i % 3)::VARCHAR || 'x' AS few, 1.0::DOUBLE AS w FROM range(50000) r(i))
      TO '${path}' (FORMAT parquet, DICTIONARY_COMPRESSION_RATIO_THRESHOLD -1, ROW_GROUP_SIZE 20000)`);
    const whole = await readParquet(path, { weights: ['w'], threads: 0 });
    const cut = await readParquet(path, { weights: ['w'], threads: 0, skipIdLike: { except: ['uid'] } });
    const [serial, uid, few] = cut.columns;
    // Past 10,000 values (the id-like bound of twice the rows, max(5,000, 2 * rows / 10)) with a first value that is not a number, the page ends the numbering.
    expect(serial!.partly).toBe(true);
    expect(serial!.deferred!.count).toBeGreaterThan(10000);
    expect(serial!.deferred!.count).toBeLessThan(25000);
    const numbered = serial!.deferred!.count * 2;
    expect(Array.from(serial!.ids.subarray(0, numbered))).toEqual(Array.from(whole.columns[0]!.ids.subarray(0, numbered)));
    expect(serial!.ids.subarray(numbered).every((id) => id === 0)).toBe(true);
    // The note is the same as for the column read whole: it states the bound, and the count stops past twice it.
    expect(classifyColumn(serial!, cut.rows)).toEqual(classifyColumn(whole.columns[0]!, whole.rows));
    expect(uid!.partly).toBeUndefined();
    expect(uid!.deferred!.count).toBe(50000);
    expect(few!.partly).toBeUndefined();
    expect(few!.dictionary).toEqual(['0x', '1x', '2x']);
    // A build skips the cut column, and keeps the id column (an id-like text column too) whole.
    const out = join(dir, 'ids-stop.arrow');
    const report = await buildDataset(path, { weights: ['w'], survey: 'T', out, id: 'uid', threads: 0 });
    expect(report.skipped).toEqual([{ column: 'serial', reason: 'id-like: more than 5000 distinct text values in 50000 rows' }]);
    const dataset = await openDataset(out, { execution: 'inline' });
    try {
      expect(dataset.info.idColumn).toBe('uid');
      expect(dataset.info.variables.map((variable) => variable.name)).toEqual(['few']);
    } finally {
      await dataset.close();
    }
  }, 60_000);
  it('stop numbering an id-like Arrow text column within a record batch, the columns it excepts read whole', async () => {
    const rows = 200_000;
    const serial = Array.from({ length: rows }, (_, i) => `HU${String(i >> 1).padStart(9, '0')}`);
    const table = new Table({
      serial: vectorFromArray(serial, new Utf8()),
      uid: vectorFromArray(Array.from({ length: rows }, (_, i) => `U${i}`), new Utf8()),
      few: vectorFromArray(Array.from({ length: rows }, (_, i) => `${i % 3}x`), new Utf8()),
      w: vectorFromArray(new Array(rows).fill(1), new Float64()),
    });
    const path = join(dir, 'ids-stop.arrow');
    writeFileSync(path, tableToIPC(table, 'file'));
    const whole = await readArrow(path, { weights: ['w'], threads: 0 });
    const cut = await readArrow(path, { weights: ['w'], threads: 0, skipIdLike: { except: ['uid'] } });
    const [cutSerial, uid, few] = cut.columns;
    // One batch of 200,000 rows: numbering stops after the block of values that passes 40,000 (2 * rows / 10).
    expect(cutSerial!.partly).toBe(true);
    expect(cutSerial!.deferred!.count).toBeGreaterThan(40000);
    expect(cutSerial!.deferred!.count).toBeLessThan(100000);
    const numbered = cutSerial!.deferred!.count * 2;
    expect(Array.from(cutSerial!.ids.subarray(0, numbered))).toEqual(Array.from(whole.columns[0]!.ids.subarray(0, numbered)));
    expect(cutSerial!.ids.subarray(numbered).every((id) => id === 0)).toBe(true);
    expect(classifyColumn(cutSerial!, cut.rows)).toEqual({ kind: 'skip', reason: 'id-like: more than 20000 distinct text values in 200000 rows', textValues: { count: 40001, atLeast: true } });
    expect(classifyColumn(whole.columns[0]!, whole.rows)).toEqual(classifyColumn(cutSerial!, cut.rows));
    expect(uid!.partly).toBeUndefined();
    expect(uid!.deferred!.count).toBe(rows);
    expect(few!.dictionary).toEqual(['0x', '1x', '2x']);
    expect(Array.from(few!.ids)).toEqual(Array.from(whole.columns[2]!.ids));
  }, 60_000);
  it('an id-like note states the bound; the count an append reads is kept up to the bound of twice the rows, then as at least one more', () => {
    const column = (distinct: number) => ({ name: 'x', dictionary: Array.from({ length: distinct }, (_, k) => `x${k}`), ids: new Uint32Array(0) });
    const reason = 'id-like: more than 5000 distinct text values in 50000 rows';
    expect(classifyColumn(column(7000), 50000)).toEqual({ kind: 'skip', reason, textValues: { count: 7000 } });
    expect(classifyColumn(column(10000), 50000)).toEqual({ kind: 'skip', reason, textValues: { count: 10000 } });
    expect(classifyColumn(column(10001), 50000)).toEqual({ kind: 'skip', reason, textValues: { count: 10001, atLeast: true } });
    expect(classifyColumn(column(30000), 50000)).toEqual({ kind: 'skip', reason, textValues: { count: 10001, atLeast: true } });
    expect(classifyColumn(column(5000), 50000)).toEqual({ kind: 'text' });
    // Reasons of earlier builds: an exact count, or a bound (at least one more).
    expect(idLikeTextValues('id-like: 7000 distinct text values in 50000 rows')).toBe(7000);
    expect(idLikeTextValues(reason)).toBe(5001);
    expect(idLikeTextValues('every value is blank')).toBeUndefined();
  });
});
