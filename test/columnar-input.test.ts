// Parquet and Arrow inputs are read a column chunk at a time (decoded pages, value buffers
// with validity bitmaps, dictionaries with their indices): every column must come out as
// the CSV of the same data reads, across row groups and record batches, with nulls,
// all-null columns, dictionary-encoded and plain pages, and int, float, string and boolean
// columns; bad weights are still named by row.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Bool, Float64, Int32, Int64, Table, tableToIPC, Utf8, vectorFromArray, Dictionary } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawTable } from '../src/dataset/input/raw-table.js';
import { readInput } from '../src/dataset/input/read-input.js';
import { CrosstabError } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'columnar-input-test-'));
const rows = 5000;
/** Row i's values: nulls every few rows, a column that is all null, one that is unique per row (plain pages). */
const data = Array.from({ length: rows }, (_, i) => ({
  w: (i % 7) + 0.5,
  small: i % 5 === 0 ? null : i % 3,
  big: i % 11 === 0 ? null : BigInt((i - 2500) * 1_000_003),
  huge: i % 17 === 0 ? null : 2n ** 53n + BigInt(i % 40) - 20n,
  real: i % 13 === 0 ? null : (i % 9) / 4,
  text: i % 6 === 0 ? null : `0${i % 4}`,
  unique: `id-${i}`,
  // Plain text with nulls, empty strings (blank), multi-byte and longer values.
  words: i % 7 === 0 ? null : i % 10 === 0 ? '' : i % 3 === 0 ? `é long text over sixteen bytes ${i % 5}` : `v${i % 8}`,
  flag: i % 4 === 0 ? null : i % 2 === 0,
  empty: null as number | null,
}));
const names = Object.keys(data[0]!) as Array<keyof (typeof data)[0]>;
const paths = { csv: join(dir, 'data.csv'), snappy: join(dir, 'snappy.parquet'), zstd: join(dir, 'zstd.parquet'), arrow: join(dir, 'data.arrow'), badWeight: join(dir, 'bad.parquet') };

beforeAll(async () => {
  const text = (value: unknown) => (value === null ? '' : String(value));
  writeFileSync(paths.csv, [names.join(','), ...data.map((row) => names.map((name) => text(row[name])).join(','))].join('\n') + '\n');
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const types = `{'w': 'DOUBLE', 'small': 'INTEGER', 'big': 'BIGINT', 'huge': 'BIGINT', 'real': 'DOUBLE', 'text': 'VARCHAR', 'unique': 'VARCHAR', 'words': 'VARCHAR', 'flag': 'BOOLEAN', 'empty': 'INTEGER'}`;
  const source = `read_csv('${paths.csv}', header = true, types = ${types})`;
  for (const codec of ['snappy', 'zstd'] as const) await duck.run(`COPY (SELECT * FROM ${source}) TO '${paths[codec]}' (FORMAT parquet, ROW_GROUP_SIZE 1000, COMPRESSION ${codec})`);
  await duck.run(`COPY (SELECT * REPLACE (CASE WHEN small = 2 AND big > 1000000000 THEN -1 ELSE w END AS w) FROM ${source}) TO '${paths.badWeight}' (FORMAT parquet, ROW_GROUP_SIZE 1000)`);
  const column = <T>(name: keyof (typeof data)[0]) => data.map((row) => row[name]) as T[];
  const whole = new Table({
    w: vectorFromArray(column<number>('w'), new Float64()),
    small: vectorFromArray(column<number | null>('small'), new Int32()),
    big: vectorFromArray(column<bigint | null>('big'), new Int64()),
    huge: vectorFromArray(column<bigint | null>('huge'), new Int64()),
    real: vectorFromArray(column<number | null>('real'), new Float64()),
    text: vectorFromArray(column<string | null>('text'), new Dictionary(new Utf8(), new Int32())),
    unique: vectorFromArray(column<string>('unique'), new Utf8()),
    words: vectorFromArray(column<string | null>('words'), new Utf8()),
    flag: vectorFromArray(column<boolean | null>('flag'), new Bool()),
    empty: vectorFromArray(column<number | null>('empty'), new Int32()),
  });
  // Several record batches (3, 1200 and 3797 rows), nulls in each.
  const batches = [whole.slice(0, 3), whole.slice(3, 1203), whole.slice(1203)].flatMap((part) => part.batches);
  writeFileSync(paths.arrow, tableToIPC(new Table(batches), 'file'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each column as its values row by row (text, or undefined for blank), and the weights. */
function rowsOf(table: RawTable): Record<string, Array<string | undefined> | number[]> {
  const out: Record<string, Array<string | undefined> | number[]> = {};
  for (const column of table.columns) out[column.name] = Array.from(column.ids, (id) => (id === 0 ? undefined : column.dictionary[id - 1]));
  for (const weight of table.weights) out[weight.name] = Array.from(weight.values);
  return out;
}

describe('Parquet and Arrow read column-wise', () => {
  it.each(['snappy', 'zstd', 'arrow'] as const)('%s reads as the CSV of the same data', async (format) => {
    const csv = await readInput(paths.csv, { weights: ['w'] });
    const table = await readInput(paths[format], { weights: ['w'] });
    expect(table.rows).toBe(rows);
    expect(rowsOf(table)).toEqual(rowsOf(csv));
    expect(table.columns.map((column) => [column.name, column.dictionary, Array.from(column.counts ?? [])])).toEqual(
      csv.columns.map((column) => [column.name, column.dictionary, Array.from(column.counts ?? [])]),
    );
    expect(table.columns.find((column) => column.name === 'empty')!.dictionary).toEqual([]);
  });

  it('names the first bad weight by row, past the first row group', async () => {
    const first = data.findIndex((row) => row.small === 2 && row.big !== null && row.big > 1_000_000_000n);
    expect(first).toBeGreaterThan(1000);
    const error = await readInput(paths.badWeight, { weights: ['w'] }).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrosstabError);
    expect((error as CrosstabError).details).toMatchObject({ row: first + 1, field: 'w' });
    expect((error as CrosstabError).message).toContain(`row ${first + 1}`);
  });
});
