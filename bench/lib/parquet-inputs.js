// The ACS CSV as Parquet (snappy, zstd) and Arrow IPC, made once with DuckDB and cached in
// the temp folder. Each column keeps the CSV's text exactly: a column becomes BIGINT only
// when every value reads back as the same text (so STATE "01" and PUMA "02500" stay
// strings), else VARCHAR; blanks are nulls. A build from any of them must equal the CSV build.
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableToIPC, vectorFromArray, Int64, Utf8, Table } from 'apache-arrow';

/** Paths of acs-snappy.parquet, acs-zstd.parquet and acs.arrow under `cache`, made if missing. */
export async function parquetInputs(csv, cache) {
  mkdirSync(cache, { recursive: true });
  const paths = { snappy: join(cache, 'acs-snappy.parquet'), zstd: join(cache, 'acs-zstd.parquet'), arrow: join(cache, 'acs.arrow') };
  if (Object.values(paths).every((path) => existsSync(path))) return paths;
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  const quoted = csv.replaceAll("'", "''");
  await connection.run(`CREATE TABLE raw AS SELECT * FROM read_csv('${quoted}', all_varchar = true, header = true)`);
  const names = (await connection.runAndReadAll('SELECT * FROM raw LIMIT 0')).columnNames();
  const checks = names.map((name) => `bool_and(v IS NULL OR CAST(TRY_CAST(v AS BIGINT) AS VARCHAR) = v)`.replaceAll('v', `"${name}"`));
  const integer = (await connection.runAndReadAll(`SELECT ${checks.join(', ')} FROM raw`)).getRows()[0];
  const select = names.map((name, i) => (integer[i] ? `CAST("${name}" AS BIGINT) AS "${name}"` : `"${name}"`)).join(', ');
  await connection.run(`CREATE TABLE typed AS SELECT ${select} FROM raw`);
  await connection.run('DROP TABLE raw');
  for (const codec of ['snappy', 'zstd']) {
    await connection.run(`COPY typed TO '${paths[codec]}.tmp' (FORMAT parquet, COMPRESSION ${codec})`);
    renameSync(`${paths[codec]}.tmp`, paths[codec]);
  }
  const columns = (await connection.runAndReadAll('SELECT * FROM typed')).getColumnsJS();
  const vectors = Object.fromEntries(names.map((name, i) => [name, vectorFromArray(columns[i], integer[i] ? new Int64() : new Utf8())]));
  writeFileSync(`${paths.arrow}.tmp`, tableToIPC(new Table(vectors), 'file'));
  renameSync(`${paths.arrow}.tmp`, paths.arrow);
  connection.closeSync?.();
  return paths;
}
