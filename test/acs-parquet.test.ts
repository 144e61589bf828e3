// The ACS person file as Parquet (snappy, several row groups as DuckDB writes them) and
// as Arrow IPC reads column for column as the CSV.gz does: same dictionaries, same ids for
// every respondent, same weights. Columns are BIGINT where every value reads back as the
// same text, else text (STATE "01" stays "01"), as the Parquet bench makes them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Int64, Table, tableToIPC, Utf8, vectorFromArray, type Vector } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawTable } from '../src/dataset/input/raw-table.js';
import { readInput } from '../src/dataset/input/read-input.js';
import { acsCsv, skipWithoutAcs } from './support/paths.js';

const skipAcs = skipWithoutAcs('test/acs-parquet.test.ts (ACS as Parquet and Arrow)');

describe.skipIf(skipAcs)('ACS PUMS 2024 as Parquet and Arrow', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-acs-parquet-'));
  const parquet = join(dir, 'acs.parquet');
  const arrow = join(dir, 'acs.arrow');
  let csv: RawTable;

  beforeAll(async () => {
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    await duck.run(`CREATE TABLE raw AS SELECT * FROM read_csv('${acsCsv}', all_varchar = true, header = true)`);
    const names = (await duck.runAndReadAll('SELECT * FROM raw LIMIT 0')).columnNames();
    const checks = names.map((name) => `bool_and("${name}" IS NULL OR CAST(TRY_CAST("${name}" AS BIGINT) AS VARCHAR) = "${name}")`);
    const integer = (await duck.runAndReadAll(`SELECT ${checks.join(', ')} FROM raw`)).getRows()[0]!;
    expect(integer.some(Boolean) && !integer.every(Boolean)).toBe(true);
    const select = names.map((name, i) => (integer[i] ? `CAST("${name}" AS BIGINT) AS "${name}"` : `"${name}"`)).join(', ');
    await duck.run(`CREATE TABLE typed AS SELECT ${select} FROM raw`);
    await duck.run('DROP TABLE raw');
    await duck.run(`COPY typed TO '${parquet}' (FORMAT parquet, COMPRESSION snappy)`);
    // One column at a time: the JS values of all 38 at once (104M) leave the heap thrashing.
    // DuckDB keeps a table's insertion order, so every column lists the respondents alike.
    const vectors: Record<string, Vector> = {};
    for (const [i, name] of names.entries()) {
      const [values] = (await duck.runAndReadAll(`SELECT "${name}" FROM typed`)).getColumnsJS();
      vectors[name] = vectorFromArray(values as never[], integer[i] ? new Int64() : new Utf8());
    }
    writeFileSync(arrow, tableToIPC(new Table(vectors), 'file'));
    csv = await readInput(acsCsv, { weights: ['PWGTP'] });
  }, 900_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['Parquet', parquet],
    ['Arrow', arrow],
  ])('%s reads as the CSV.gz', async (_format, path) => {
    const table = await readInput(path, { weights: ['PWGTP'] });
    expect(table.rows).toBe(csv.rows);
    expect(table.columns.map((column) => column.name)).toEqual(csv.columns.map((column) => column.name));
    for (const [i, column] of table.columns.entries()) {
      const expected = csv.columns[i]!;
      expect(column.dictionary, column.name).toEqual(expected.dictionary);
      expect(Buffer.from(column.ids.buffer, column.ids.byteOffset, column.ids.byteLength).equals(Buffer.from(expected.ids.buffer, expected.ids.byteOffset, expected.ids.byteLength)), column.name).toBe(true);
    }
    expect(Buffer.from(table.weights[0]!.values.buffer).equals(Buffer.from(csv.weights[0]!.values.buffer))).toBe(true);
  }, 600_000);
});
