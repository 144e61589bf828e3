// The Parquet reader's own page decoder against hyparquet reading the same files: DuckDB
// writes one table (ints with nulls and values beyond 2^53, doubles with NaN, floats, text
// with non-ASCII, empty and long values, an all-null column, a NOT NULL column, a date and a
// boolean column that hyparquet converts) with every codec, small and large row groups and
// data pages v1 and v2; every column must read as a reference made from hyparquet's rows.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readParquet } from '../src/dataset/input/read-parquet.js';
import { ErrorCode } from '../src/errors.js';

type Connection = Awaited<ReturnType<Awaited<ReturnType<typeof DuckDBInstance.create>>['connect']>>;

const dir = mkdtempSync(join(tmpdir(), 'crosstab-parquet-decoder-'));
let duck: Connection;

beforeAll(async () => {
  duck = await (await DuckDBInstance.create(':memory:')).connect();
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A table of `rows` rows with every column type and null pattern survey files have. */
async function makeTable(rows: number): Promise<void> {
  await duck.run('DROP TABLE IF EXISTS t');
  await duck.run(`CREATE TABLE t (i32 INTEGER, i64 BIGINT, dbl DOUBLE, flt FLOAT, txt VARCHAR, ids VARCHAR, empty INTEGER, req BIGINT NOT NULL, day DATE, flag BOOLEAN, w DOUBLE NOT NULL)`);
  await duck.run(`INSERT INTO t SELECT
      CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 37) % 101 - 50 END,
      CASE WHEN i % 11 = 0 THEN NULL WHEN i % 13 = 0 THEN 9007199254740993 + i ELSE i * i - 3 END,
      CASE WHEN i % 5 = 0 THEN NULL WHEN i % 17 = 0 THEN 'NaN'::DOUBLE ELSE (i % 23) / 10.0 END,
      (i % 9) / 4.0,
      CASE WHEN i % 6 = 0 THEN NULL WHEN i % 10 = 0 THEN '' WHEN i % 4 = 0 THEN 'héllo ' || (i % 3) ELSE lpad((i % 50)::VARCHAR, 3, '0') END,
      'respondent-number-' || i,
      NULL,
      i % 4,
      DATE '2024-01-01' + (i % 30)::INTEGER,
      CASE WHEN i % 3 = 0 THEN NULL ELSE i % 2 = 0 END,
      1 + (i % 10) / 4.0
    FROM range(${rows}) r(i)`);
}

async function write(name: string, options: string): Promise<string> {
  const path = join(dir, `${name}.parquet`);
  await duck.run(`COPY t TO '${path}' (FORMAT parquet, ${options})`);
  return path;
}

/** Each column's dictionary (first-seen order) and ids, from hyparquet's rows as a CSV export would write them. */
async function reference(path: string): Promise<Map<string, { dictionary: string[]; ids: number[] }>> {
  const bytes = readFileSync(path);
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const names = parquetMetadata(file).schema.slice(1).map((element) => element.name);
  const rows = (await parquetReadObjects({ file, compressors })) as Array<Record<string, unknown>>;
  const out = new Map<string, { dictionary: string[]; ids: number[] }>();
  for (const name of names) {
    if (name === 'w') continue;
    const dictionary: string[] = [];
    const ids = rows.map((row) => {
      const text = textOf(row[name]);
      if (text === undefined) return 0;
      const at = dictionary.indexOf(text);
      return at >= 0 ? at + 1 : dictionary.push(text);
    });
    out.set(name, { dictionary, ids });
  }
  return out;
}

function textOf(value: unknown): string | undefined {
  if (value === null || value === undefined || value === '' || (typeof value === 'number' && Number.isNaN(value))) return undefined;
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return String(value);
}

async function expectSameAsReference(path: string): Promise<void> {
  const table = await readParquet(path, { weights: ['w'] });
  const expected = await reference(path);
  expect(table.columns.map((column) => column.name)).toEqual([...expected.keys()]);
  for (const column of table.columns) {
    const want = expected.get(column.name)!;
    expect(column.dictionary, column.name).toEqual(want.dictionary);
    expect(Array.from(column.ids), column.name).toEqual(want.ids);
    expect(Array.from(column.counts!).slice(1), column.name).toEqual(want.dictionary.map((_, i) => want.ids.filter((id) => id === i + 1).length));
  }
  const bytes = readFileSync(path);
  const rows = (await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), columns: ['w'], compressors })) as Array<{ w: number }>;
  expect(Array.from(table.weights[0]!.values)).toEqual(rows.map((row) => row.w));
}

describe('Parquet page decoder', () => {
  const cases = ['UNCOMPRESSED', 'SNAPPY', 'ZSTD', 'GZIP'].flatMap((codec) =>
    ['V1', 'V2'].flatMap((version) => [
      [`${codec} ${version} small row groups`, `COMPRESSION ${codec}, PARQUET_VERSION ${version}, ROW_GROUP_SIZE 2048`],
      [`${codec} ${version} one row group`, `COMPRESSION ${codec}, PARQUET_VERSION ${version}`],
    ]),
  );

  it.each(cases)('reads %s as hyparquet does', async (name, options) => {
    await makeTable(9000);
    await expectSameAsReference(await write(name.replaceAll(' ', '-'), options));
  }, 120_000);

  // The decoders of these codecs load only for a file that uses them (codecsReady).
  it.each([
    ['BROTLI V1', 'COMPRESSION BROTLI, PARQUET_VERSION V1'],
    ['LZ4_RAW V2', 'COMPRESSION LZ4_RAW, PARQUET_VERSION V2'],
  ])('reads %s pages as hyparquet does', async (name, options) => {
    await makeTable(9000);
    await expectSameAsReference(await write(name.replaceAll(' ', '-'), options));
  }, 120_000);

  it('reads a file of one row', async () => {
    await makeTable(1);
    await expectSameAsReference(await write('one-row', 'COMPRESSION SNAPPY'));
  }, 60_000);

  it('reads a file of one row as data page v2', async () => {
    await makeTable(1);
    await expectSameAsReference(await write('one-row-v2', 'COMPRESSION ZSTD, PARQUET_VERSION V2'));
  }, 60_000);

  it('reads plain pages where the writer keeps no dictionary', async () => {
    await makeTable(5000);
    await expectSameAsReference(await write('no-dictionary', 'COMPRESSION SNAPPY, DICTIONARY_COMPRESSION_RATIO_THRESHOLD -1'));
  }, 60_000);

  it('says which columns it leaves to the slower general reader, and why', async () => {
    await duck.run('DROP TABLE IF EXISTS t');
    await duck.run(`CREATE TABLE t AS SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE i * i END AS big, (i % 50)::INTEGER AS small, 'r-' || i AS ids, DATE '2024-01-01' + (i % 30)::INTEGER AS day, 1.0::DOUBLE AS w FROM range(9000) r(i)`);
    const v2 = await readParquet(await write('notes-v2', 'PARQUET_VERSION V2'), { weights: ['w'] });
    expect(v2.notes).toEqual([
      'column day read by the general Parquet reader (several times slower): its type (INT32 DATE) needs converting',
      'column big read by the general Parquet reader (several times slower): DELTA_BINARY_PACKED pages',
      'column ids read by the general Parquet reader (several times slower): DELTA_LENGTH_BYTE_ARRAY pages',
    ]);
    const v1 = await readParquet(await write('notes-v1', 'PARQUET_VERSION V1'), { weights: ['w'] });
    expect(v1.notes).toEqual(['column day read by the general Parquet reader (several times slower): its type (INT32 DATE) needs converting']);
    await duck.run(`COPY (SELECT small, w FROM t) TO '${join(dir, 'no-notes.parquet')}' (FORMAT parquet)`);
    expect((await readParquet(join(dir, 'no-notes.parquet'), { weights: ['w'] })).notes).toBeUndefined();
  }, 60_000);

  it('refuses a list column, naming it', async () => {
    const path = join(dir, 'nested.parquet');
    await duck.run(`COPY (SELECT i AS id, [i, i + 1] AS answers, 1.0 AS w FROM range(10) r(i)) TO '${path}' (FORMAT parquet)`);
    const failure = await readParquet(path, { weights: ['w'] }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: ErrorCode.invalidInput, details: { field: 'answers' } });
    expect(String((failure as Error).message)).toContain('"answers"');
  }, 60_000);
});
