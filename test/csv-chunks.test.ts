// The CSV reader's worker path (WebAssembly encoder, src/dataset/input/csv-chunks.ts) against the
// same reader on one thread, on the real survey files and on large generated files whose
// problems come late: the same table (ids, dictionaries in first-seen order, weights to the
// bit) or the same error at the same line. test/csv-records.test.ts runs random CSVs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { readCsvTuned, type CsvTuning } from '../src/dataset/input/read-csv.js';
import type { RawTable } from '../src/dataset/input/raw-table.js';
import { CrosstabError } from '../src/errors.js';
import { gssCsv, nhanesCsv } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'csv-chunks-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Tokenizer = CsvTuning;

async function read(path: string, weights: string[], tokenizer: Tokenizer): Promise<RawTable | { code: string; message: string; details: unknown }> {
  try {
    return await readCsvTuned(path, { weights }, tokenizer);
  } catch (error) {
    if (!(error instanceof CrosstabError)) throw error;
    return { code: error.code, message: error.message, details: error.details };
  }
}

/**
 * A table as its reader's caller sees it: a column whose values the workers kept as bytes
 * (RawColumn.deferred) reads as the same dictionary, its `deferred` saying how many values
 * and the first, as it must; compared without it.
 */
function settled(outcome: RawTable | { code: string; message: string; details: unknown }): unknown {
  if (!('columns' in outcome)) return outcome;
  const columns = outcome.columns.map(({ deferred, ...column }) => {
    const dictionary = column.dictionary;
    if (deferred !== undefined) expect(deferred).toEqual({ count: dictionary.length, first: dictionary[0] });
    return { ...column, dictionary };
  });
  return { ...outcome, columns };
}

type View = Uint8Array | Uint16Array | Uint32Array | Float64Array;

/**
 * `value` with each typed array (row ids, counts, weights) replaced by its type and length,
 * the arrays themselves listed by where they were.
 */
function withoutViews(value: unknown, at: string, views: Map<string, View>): unknown {
  if (ArrayBuffer.isView(value)) {
    const view = value as View;
    views.set(at, view);
    return { [view.constructor.name]: view.length };
  }
  if (Array.isArray(value)) return value.map((item, i) => withoutViews(item, `${at}[${i}]`, views));
  if (value === null || typeof value !== 'object' || ![Object.prototype, null].includes(Object.getPrototypeOf(value))) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withoutViews(item, `${at}.${key}`, views)]));
}

/**
 * expect(settled(actual)).toEqual(settled(expected)), with the typed arrays compared byte for
 * byte (weights to the bit). Vitest's toEqual walks a typed array one element at a time: the
 * GSS table's 1.4 million row ids took it 15 s a comparison under load 11, three per test,
 * against about a second for each read compared: under heavier load the test ran past its 60 s.
 */
function expectSameTable(actual: unknown, expected: unknown): void {
  const actualViews = new Map<string, View>();
  const expectedViews = new Map<string, View>();
  expect(withoutViews(actual, 'table', actualViews)).toEqual(withoutViews(expected, 'table', expectedViews));
  for (const [at, view] of actualViews) {
    const reference = expectedViews.get(at)!;
    const bytes = (array: View) => Buffer.from(array.buffer, array.byteOffset, array.byteLength);
    const [got, want] = [bytes(view), bytes(reference)];
    if (got.equals(want)) continue;
    const row = Math.floor(got.findIndex((byte, i) => byte !== want[i]) / view.BYTES_PER_ELEMENT);
    const element = (all: Buffer, array: View) => ({ value: array[row], bits: all.subarray(row * array.BYTES_PER_ELEMENT, (row + 1) * array.BYTES_PER_ELEMENT).toString('hex') });
    expect({ at, row, ...element(got, view) }).toEqual({ at, row, ...element(want, reference) });
  }
}

/**
 * One thread splitting lines as text, then the encoder on that thread and 1, 2 and 3 workers
 * with small chunks: all equal. Returns the outcome and the rows the encoder encoded (each
 * run the same).
 */
async function expectSameEverywhere(path: string, weights: string[]): Promise<{ outcome: RawTable | { message: string }; encodedRows: number }> {
  const reference = await read(path, weights, { threads: 0, inline: false });
  const encoded: number[] = [];
  for (const tuning of [{ threads: 0, inline: true }, { threads: 1 }, { threads: 2 }, { threads: 3 }]) {
    const report = { encodedRows: 0 };
    expectSameTable(settled(await read(path, weights, { ...tuning, encoderChunkBytes: 64 * 1024, report })), settled(reference));
    encoded.push(report.encodedRows);
  }
  expect(new Set(encoded).size).toBe(1);
  return { outcome: reference as RawTable | { message: string }, encodedRows: encoded[0]! };
}

describe('CSV encoder path (workers, or on the reading thread) = lines split as text', () => {
  it('GSS: the same table', async () => {
    const { outcome, encodedRows } = await expectSameEverywhere(gssCsv, ['wtssps']);
    expect((outcome as RawTable).rows).toBeGreaterThan(70_000);
    expect(encodedRows).toBe((outcome as RawTable).rows);
  });

  it('NHANES: the same table', async () => {
    const { outcome, encodedRows } = await expectSameEverywhere(nhanesCsv, ['WTMEC2YR']);
    expect((outcome as RawTable).rows).toBeGreaterThan(1000);
    expect(encodedRows).toBe((outcome as RawTable).rows);
  });

  const rows = 40_000;
  const lines = (row: (i: number) => string) => ['id,w,state,x', ...Array.from({ length: rows }, (_, i) => row(i))].join('\n');
  const plain = (i: number) => `${i},${(i % 97) / 8},${String(i % 53).padStart(2, '0')},${i % 7 === 0 ? '' : `v${i % 1000}`}`;

  it('a gzip file: the same table, every row encoded by the workers', async () => {
    const path = join(dir, 'large.csv.gz');
    writeFileSync(path, gzipSync(`${lines(plain)}\n`));
    const { outcome, encodedRows } = await expectSameEverywhere(path, ['w']);
    expect((outcome as RawTable).rows).toBe(rows);
    expect(encodedRows).toBe(rows);
  });

  it('takes the worker path by default for a file of 4 MiB (gzip: 1 MiB) or more', async () => {
    const report = { encodedRows: 0 };
    const table = (await read(gssCsv, ['wtssps'], { report })) as RawTable;
    expect(report.encodedRows).toBe(table.rows);
  });

  it('on one thread, the encoder by default from 256 KiB of text (gzip: 64 KiB); lines split as text below', async () => {
    const text = (bytes: number) => {
      let csv = 'w,a\n';
      for (let i = 0; csv.length < bytes; i++) csv += `${(i % 9) + 1},v${(i * 7919) % 104729}\n`;
      return csv;
    };
    const cases: Array<[string, string | Buffer, boolean]> = [
      ['large.csv', text(256 * 1024), true],
      ['small.csv', text(256 * 1024 - 64), false],
      // Stored gzip blocks: the file is as large as its text.
      ['large.csv.gz', gzipSync(text(64 * 1024), { level: 0 }), true],
      ['small.csv.gz', gzipSync(text(60 * 1024), { level: 0 }), false],
    ];
    for (const [name, contents, encoder] of cases) {
      const path = join(dir, `default-${name}`);
      writeFileSync(path, contents);
      const report = { encodedRows: 0 };
      const table = (await read(path, ['w'], { threads: 0, report })) as RawTable;
      expect({ name, encodedRows: report.encodedRows }).toEqual({ name, encodedRows: encoder ? table.rows : 0 });
    }
    const small = { encodedRows: 0 };
    const nhanes = (await read(nhanesCsv, ['WTMEC2YR'], { report: small })) as RawTable;
    expect(small.encodedRows).toBe(nhanes.rows);
  });

  it('a quote, CRLF, a bad weight or a ragged row late in the file: the same table or error, same line', async () => {
    const late = 31_234;
    const cases: Array<[string, (i: number) => string]> = [
      ['quote', (i) => (i === late ? `${i},1,"0,6",x` : plain(i))],
      ['crlf', (i) => (i >= late ? `${plain(i)}\r` : plain(i))],
      ['weight', (i) => (i === late ? `${i},-3,06,x` : plain(i))],
      ['blank weight', (i) => (i === late ? `${i},,06,x` : plain(i))],
      ['ragged', (i) => (i === late ? `${i},1,06` : plain(i))],
    ];
    for (const [name, row] of cases) {
      const path = join(dir, `late-${name}.csv`);
      writeFileSync(path, `${lines(row)}\n`);
      const { outcome, encodedRows } = await expectSameEverywhere(path, ['w']);
      if ('message' in outcome) expect(outcome.message).toContain(`:${late + 2}:`);
      // The lines before the problem's chunk were encoded by the workers.
      expect(encodedRows).toBeGreaterThan(late - 8000);
      expect(encodedRows).toBeLessThanOrEqual(late);
    }
  });

  it('weights the encoder does not convert itself (many digits, large exponents) stay on the worker path, converted as Number() does', async () => {
    const path = join(dir, 'long-weights.csv');
    const weights = ['0.12345678901234567890123', '1e23', '123456789012345678901', '4.9e-324', '1.7976931348623157e308', '0.1e-30'];
    writeFileSync(path, `${lines((i) => (i % 1000 === 0 ? `${i},${weights[(i / 1000) % weights.length]},06,x` : plain(i)))}\n`);
    const { outcome, encodedRows } = await expectSameEverywhere(path, ['w']);
    expect(encodedRows).toBe(rows);
    expect((outcome as RawTable).weights[0]!.values[1000]).toBe(Number(weights[1]));
  });

  it("keeps a column's values as bytes until they are read: an id-like column the build skips never becomes strings", async () => {
    const path = join(dir, 'ids.csv.gz');
    writeFileSync(path, gzipSync(`${lines((i) => `id${i},${(i % 97) / 8},${String(i % 53).padStart(2, '0')},v${i % 10}`)}\n`));
    const reference = (await read(path, ['w'], { threads: 0 })) as RawTable;
    const table = (await read(path, ['w'], { threads: 2, encoderChunkBytes: 64 * 1024 })) as RawTable;
    const id = table.columns.find((column) => column.name === 'id')!;
    expect(id.deferred).toEqual({ count: rows, first: 'id0' });
    expect(table.columns.find((column) => column.name === 'state')!.deferred).toEqual({ count: 53, first: '00' });
    expectSameTable(settled(table), settled(reference));
  });

  it('bytes that are not UTF-8: one value per text, as on one thread', async () => {
    const header = Buffer.from('w,a\n');
    const body = Array.from({ length: 5000 }, (_, i) => Buffer.concat([Buffer.from('1,'), Buffer.from(i % 2 === 0 ? [0xff] : [0xfe]), Buffer.from('\n')]));
    const path = join(dir, 'latin.csv');
    writeFileSync(path, Buffer.concat([header, ...body]));
    const { outcome } = await expectSameEverywhere(path, ['w']);
    expect((outcome as RawTable).columns[0]!.dictionary).toEqual(['\ufffd']);
  });
});

describe('an internal failure of the encoder names the encoder, where it ran and the file', () => {
  // A module of another encoder ABI (the bundle and build/csv.wasm of different builds):
  // (module (func (export "csvAbi") (result i32) i32.const 999)), and no other export.
  const otherAbi = new WebAssembly.Module(
    Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, 0x03, 0x02, 0x01, 0x00, 0x07, 0x0a, 0x01, 0x06, ...Buffer.from('csvAbi'), 0x00, 0x00, 0x0a, 0x07, 0x01, 0x05, 0x00, 0x41, 0xe7, 0x07, 0x0b]),
  );
  const path = join(dir, 'encoded.csv');
  writeFileSync(path, `w,a\n${Array.from({ length: 20_000 }, (_, i) => `${(i % 9) + 1},v${i % 300}`).join('\n')}\n`);

  it('on the reading thread: "the CSV encoder on the reading thread", not a build worker', async () => {
    const outcome = (await read(path, ['w'], { threads: 0, inline: true, encoderModule: otherAbi })) as { code: string; message: string };
    expect(outcome.code).toBe('internal');
    expect(outcome.message).toContain(`${path}: the CSV encoder on the reading thread (no build worker) failed (encoding the lines from 2): build/csv.wasm has CSV encoder ABI 999`);
    expect(outcome.message).not.toContain('a CSV build worker');
  });

  it('in build workers: the worker, of how many', async () => {
    const outcome = (await read(path, ['w'], { threads: 2, encoderChunkBytes: 64 * 1024, encoderModule: otherAbi })) as { code: string; message: string };
    expect(outcome.code).toBe('internal');
    expect(outcome.message).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: CSV build worker [12] of 2 failed \\(encoding the lines from 2\\): build/csv.wasm has CSV encoder ABI 999`));
  });
});
