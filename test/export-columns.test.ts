// Weights back to the data they came from: `crosstab build --id COL` keeps a respondent id
// column as given (not a variable; unique and never blank, checked), and `crosstab export` /
// exportColumns() write the id, weights and variables in the input's row order, as CSV or
// Parquet. Respondents are stored in weight order, so an export in stored order would pair
// ids with other respondents' weights: the checks here read the files back with DuckDB and
// compare them with the input and with the engine's own weighted sums.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, exportColumns, openDataset, weightDataset, type CrosstabError } from '../src/index.js';
import { writeWithWeight } from '../src/dataset/file/add-weight.js';
import { loadDataset } from '../src/dataset/file/reader.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { cliPath } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-export-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let connection: Awaited<ReturnType<DuckDBInstance['connect']>> | undefined;
afterAll(() => connection?.closeSync());
async function duck(sql: string): Promise<Array<Record<string, unknown>>> {
  connection ??= await (await DuckDBInstance.create(':memory:')).connect();
  return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Array<Record<string, unknown>>;
}

async function refusal(promise: Promise<unknown>): Promise<CrosstabError> {
  return promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: CrosstabError) => error,
  );
}

const rows = 1500;
/** The input, row by row: ids not in any order, weights that repeat (so the stored order is not the input's), odd texts. */
const input = Array.from({ length: rows }, (_, row) => ({
  id: `R-${String((row * 7919) % 100003).padStart(6, '0')}`,
  serial: String(((row * 104729) % 499) + 1_000_000_000_000),
  w: String(1 + ((row * 37) % 23) / 4),
  sex: String(1 + (row % 2)),
  age: String(1 + ((Math.floor(row / 2) * 3) % 4)),
  score: row % 13 === 0 ? '' : ['0.33333333333333331', '2.5', '81528.772005999999', '7'][row % 4]!,
  city: ['Paris', 'Saint-Étienne, Loire', 'say "hi"', ' lead'][(row * 3) % 4]!,
}));
const csvField = (text: string) => (/[",]|^\s/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
const source = join(dir, 'source.csv');
writeFileSync(source, `${Object.keys(input[0]!).join(',')}\n${input.map((row) => Object.values(row).map(csvField).join(',')).join('\n')}\n`);
const targets = { margins: [{ variable: 'sex', proportions: { '1': 0.49, '2': 0.51 } }, { variable: 'age', proportions: { '1': 0.3, '2': 0.3, '3': 0.2, '4': 0.2 } }] };

describe('crosstab build --id and exportColumns', () => {
  const built = join(dir, 'built.arrow');
  const weighted = join(dir, 'weighted.arrow');
  beforeAll(async () => {
    await buildDataset(source, { weights: ['w'], survey: 'T', out: built, id: 'id' });
    await weightDataset(built, { targets, method: 'rake', name: 'wt_rake', out: weighted, epsilon: 1e-10, maxIterations: 100 });
  });

  it('keeps the id column out of the variables: never indexed or queried', async () => {
    const ds = await openDataset(weighted);
    try {
      expect(ds.info.variables.map((variable) => variable.name)).toEqual(['serial', 'sex', 'age', 'score', 'city']);
      // Named in the dataset's info, so a user learns what `crosstab export --columns` can write.
      expect(ds.info.idColumn).toBe('id');
      expect((await refusal(ds.crosstab({ base: '*', targets: ['id=R-000000'] }))).code).toBe('unknown_variable');
    } finally {
      ds.close();
    }
  });

  it('writes a CSV in the input order: ids and values as given, the weights the engine uses', async () => {
    const out = join(dir, 'weights.csv');
    const report = await exportColumns(weighted, { columns: ['id', 'wt_rake', 'w', 'sex', 'age', 'score', 'city', '_row'], out });
    expect(report).toMatchObject({ rows, format: 'csv' });
    const back = await duck(`SELECT * FROM read_csv('${out}', all_varchar = true, header = true)`);
    expect(back).toHaveLength(rows);
    back.forEach((row, i) => {
      const given = input[i]!;
      expect(row.id, `row ${i + 1}`).toBe(given.id);
      expect(row._row).toBe(String(i + 1));
      expect(Number(row.w)).toBe(Number(given.w));
      for (const name of ['sex', 'age', 'city'] as const) expect(row[name]).toBe(given[name]);
      expect(row.score ?? '').toBe(given.score);
    });
    // Raking scales every respondent of a cell (sex x age) by the same factor.
    const factors = new Map<string, number>();
    for (const row of back) {
      const cell = `${String(row.sex)}x${String(row.age)}`;
      const factor = Number(row.wt_rake) / Number(row.w);
      if (!factors.has(cell)) factors.set(cell, factor);
      expect(factor / factors.get(cell)!, cell).toBeCloseTo(1, 12);
    }
    expect(factors.size).toBe(8);
    // The exported weights summed by any variable are the engine's weighted totals under wt_rake.
    const ds = await openDataset(weighted);
    try {
      for (const name of ['city', 'score', 'serial'] as const) {
        const sums = await duck(`SELECT v, sum(wt_rake::DOUBLE) AS w, count(*)::INTEGER AS n FROM (SELECT e.wt_rake, s.${name} AS v FROM read_csv('${out}', all_varchar = true) e JOIN read_csv('${source}', all_varchar = true) s ON e.id = s.id) WHERE v IS NOT NULL AND v <> '' GROUP BY v ORDER BY n DESC LIMIT 40`);
        expect(sums.length).toBeGreaterThan(2);
        const cells = await ds.crosstab({ base: '*', targets: sums.map(({ v }) => `${name === 'city' ? 'city' : name}=${JSON.stringify(String(v))}`), weight: 'wt_rake' });
        cells.targets.forEach((cell, k) => {
          expect(cell.respondents, `${name}=${String(sums[k]!.v)}`).toBe(sums[k]!.n);
          expect(cell.weighted / Number(sums[k]!.w)).toBeCloseTo(1, 12);
        });
      }
    } finally {
      ds.close();
    }
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('writes Parquet that DuckDB reads: the same rows, numbers typed, blanks null', async () => {
    const csv = join(dir, 'p.csv');
    const parquet = join(dir, 'weights.parquet');
    await exportColumns(weighted, { columns: ['id', 'wt_rake', 'serial', 'age', 'score', 'city'], out: csv });
    const report = await exportColumns(weighted, { columns: ['id', 'wt_rake', 'serial', 'age', 'score', 'city'], out: parquet });
    expect(report.format).toBe('parquet');
    const types = Object.fromEntries((await duck(`DESCRIBE SELECT * FROM '${parquet}'`)).map(({ column_name, column_type }) => [column_name, column_type]));
    expect(types).toEqual({ id: 'VARCHAR', wt_rake: 'DOUBLE', serial: 'BIGINT', age: 'BIGINT', score: 'DOUBLE', city: 'VARCHAR' });
    const fromParquet = await duck(`SELECT id, wt_rake, serial::VARCHAR AS serial, age::VARCHAR AS age, score, city FROM '${parquet}'`);
    const fromCsv = await duck(`SELECT id, wt_rake::DOUBLE AS wt_rake, serial, age, score::DOUBLE AS score, city FROM read_csv('${csv}', all_varchar = true)`);
    expect(fromParquet).toEqual(fromCsv);
    expect(fromParquet.filter((row) => row.score === null)).toHaveLength(input.filter((row) => row.score === '').length);
    expect(fromParquet.map((row) => row.id)).toEqual(input.map((row) => row.id));
  });

  it('without --id, keys the rows by input row number', async () => {
    const plain = join(dir, 'plain.arrow');
    await buildDataset(source, { weights: ['w'], survey: 'T', out: plain });
    const ds = await openDataset(plain);
    try {
      // Without --id, the id column is a text column like any other.
      expect(ds.info.variables.find((variable) => variable.name === 'id')?.kind).toBe('text');
    } finally {
      ds.close();
    }
    const out = join(dir, 'plain.csv');
    await exportColumns(plain, { columns: ['_row', 'w', 'city'], out });
    const back = await duck(`SELECT * FROM read_csv('${out}', all_varchar = true)`);
    expect(back.map((row) => [Number(row._row), Number(row.w), row.city])).toEqual(input.map((row, i) => [i + 1, Number(row.w), row.city]));
    const unknown = await refusal(exportColumns(plain, { columns: ['nope'], out: join(dir, 'x.csv') }));
    expect(unknown.code).toBe('unknown_variable');
    expect(unknown.details.hint).toContain('built without --id');
  });

  it('refuses duplicate and blank ids, naming the rows, and bad export options; writes nothing', async () => {
    const twice = join(dir, 'twice.csv');
    writeFileSync(twice, 'id,w\na,1\nb,2\nc,1\nb,3\n');
    const duplicate = await refusal(buildDataset(twice, { weights: ['w'], survey: 'T', out: join(dir, 'twice.arrow'), id: 'id' }));
    expect(duplicate.code).toBe('invalid_option');
    expect(duplicate.message).toContain('"b" in data rows 2 and 4');
    const blank = join(dir, 'blank.csv');
    writeFileSync(blank, 'id,w\na,1\n,2\nc,1\n');
    expect((await refusal(buildDataset(blank, { weights: ['w'], survey: 'T', out: join(dir, 'blank.arrow'), id: 'id' }))).message).toContain('blank in data row 2');
    expect((await refusal(buildDataset(blank, { weights: ['w'], survey: 'T', out: join(dir, 'blank.arrow'), id: 'w' }))).message).toContain('is a weight column');
    expect(existsSync(join(dir, 'twice.arrow')) || existsSync(join(dir, 'blank.arrow'))).toBe(false);
    expect((await refusal(exportColumns(weighted, { columns: ['id'], out: join(dir, 'x.txt') }))).message).toContain('neither .csv nor .parquet');
    const misspelt = await refusal(exportColumns(weighted, { columns: ['id', 'wt_rak'], out: join(dir, 'x.csv') }));
    expect(misspelt.message).toContain('did you mean "wt_rake"');
    expect(existsSync(join(dir, 'x.csv'))).toBe(false);
  });

  it('works from the command line: crosstab build --id, crosstab export', () => {
    const out = join(dir, 'cli.arrow');
    const build = spawnSync(process.execPath, [cliPath, 'build', source, '--weight', 'w', '--survey', 'T', '--id', 'id', '--out', out, '--quiet'], { encoding: 'utf8' });
    expect(build.stderr).toBe('');
    expect(build.status).toBe(0);
    const info = spawnSync(process.execPath, [cliPath, 'info', out], { encoding: 'utf8' });
    expect(info.stdout).toContain('respondent ids: id (kept as given for `crosstab export`; not a variable)');
    const csv = join(dir, 'cli.csv');
    const run = spawnSync(process.execPath, [cliPath, 'export', out, '--columns', 'id,w', '--out', csv], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(/1,?500 rows x 2 columns/);
    const bad = spawnSync(process.execPath, [cliPath, 'export', out, '--columns', 'id,nope', '--out', csv], { encoding: 'utf8' });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('--columns');
    const dup = spawnSync(process.execPath, [cliPath, 'build', join(dir, 'twice.csv'), '--weight', 'w', '--survey', 'T', '--id', 'id', '--out', join(dir, 'cli-twice.arrow'), '--quiet'], { encoding: 'utf8' });
    expect(dup.status).not.toBe(0);
    expect(dup.stderr).toContain('--id');
  });

  it('refuses a dataset of an earlier build, which kept no input order, with a hint to rebuild', async () => {
    // The metadata such a build wrote: no inputRows.
    const kernel = mainThreadKernel();
    const loaded = await loadDataset(built, kernel);
    const old = join(dir, 'old.arrow');
    try {
      await writeWithWeight(loaded, kernel, 'w2', new Float64Array(rows).fill(1), old, { inputRows: undefined });
    } finally {
      loaded.close();
      for (const region of loaded.regions) kernel.memory.release(region.ptr, region.bytes);
    }
    const error = await refusal(exportColumns(old, { columns: ['w'], out: join(dir, 'old.csv') }));
    expect(error.code).toBe('unsupported_version');
    expect(error.details.hint).toContain('Build the dataset again');
  });
});
