// The Parquet reader with its columns dealt out to worker threads (the built CLI: the worker
// is bundled, so this runs dist/cli/main.js; `npm run build:ts` first) builds the same
// dataset as on one thread and as the CSV export of the same table: dictionary columns with
// nulls across pages and row groups, text with a dictionary, an id column of PLAIN pages,
// whole numbers of PLAIN pages, doubles and a date column left to hyparquet.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadata } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain-JavaScript bench helper without types
import { buildFingerprint } from '../bench/lib/build-fingerprint.js';
import { cliPath } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-parquet-workers-'));
const parquet = join(dir, 'survey.parquet');
const csv = join(dir, 'survey.csv');

type Connection = Awaited<ReturnType<Awaited<ReturnType<typeof DuckDBInstance.create>>['connect']>>;
let duck: Connection;

beforeAll(async () => {
  duck = await (await DuckDBInstance.create(':memory:')).connect();
  await duck.run(`CREATE TABLE t AS SELECT
      CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 37) % 101 - 50 END AS small,
      CASE WHEN i % 11 < 3 THEN NULL ELSE (i * i) % 70001 END AS wide,
      CASE WHEN i % 6 = 0 THEN NULL ELSE 'région ' || (i % 13) END AS region,
      'id-' || lpad(i::VARCHAR, 8, '0') AS serial,
      -- Never whole: DuckDB writes a whole double as "2.0" in CSV, JavaScript (and a Parquet read) as "2".
      CASE WHEN i % 5 = 0 THEN NULL ELSE ((i % 23) + 0.5) / 4.0 END::DOUBLE AS ratio,
      (i % 4)::BIGINT AS kind,
      CASE WHEN i > 30000 THEN NULL ELSE i % 3 END AS late_nulls,
      DATE '2024-01-01' + (i % 30)::INTEGER AS day,
      (1 + (i % 10) / 4.0)::DOUBLE AS w
    FROM range(40000) r(i)`);
  await duck.run(`COPY t TO '${parquet}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 6000)`);
  await duck.run(`COPY t TO '${csv}' (FORMAT csv, HEADER true)`);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function build(input: string, out: string, threads: number): string {
  const run = spawnSync(process.execPath, [cliPath, 'build', input, '--weight', 'w', '--survey', 'T', '--out', out, '--threads', String(threads)], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stderr;
}

describe('Parquet columns read in worker threads', () => {
  it('build the same dataset as one thread and as the CSV', async () => {
    const one = join(dir, 'one.arrow');
    const three = join(dir, 'three.arrow');
    const fromCsv = join(dir, 'csv.arrow');
    build(csv, fromCsv, 0);
    build(parquet, one, 0);
    const notes = build(parquet, three, 3);
    expect(notes).toContain('note: column day read by the general Parquet reader');
    const expected = await buildFingerprint(fromCsv);
    expect(await buildFingerprint(one)).toBe(expected);
    expect(await buildFingerprint(three)).toBe(expected);
  }, 120_000);

  it('refuse a damaged column chunk a worker reads as one thread does, naming the column and row group', async () => {
    const path = join(dir, 'damaged.parquet');
    await duck.run(`COPY (SELECT (i % 50)::BIGINT AS small, i % 3 AS other, 1.5::DOUBLE AS w FROM range(20000) r(i)) TO '${path}' (FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE 5000)`);
    const bytes = readFileSync(path);
    const meta = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)).row_groups[1]!.columns[0]!.meta_data!;
    // The header of the second row group's first data page of "small", made unreadable.
    bytes.fill(0xff, Number(meta.data_page_offset), Number(meta.data_page_offset) + 12);
    writeFileSync(path, bytes);
    const out = join(dir, 'damaged.arrow');
    const errors = [0, 2].map((threads) => {
      const run = spawnSync(process.execPath, [cliPath, 'build', path, '--weight', 'w', '--survey', 'T', '--out', out, '--threads', String(threads)], { encoding: 'utf8' });
      expect(run.status).toBe(1);
      expect(existsSync(out)).toBe(false);
      return run.stderr;
    });
    expect(errors[1]).toContain('error [invalid_input]');
    expect(errors[1]).toContain('column "small", row group 2:');
    expect(errors[1]).toBe(errors[0]);
  }, 120_000);
});
