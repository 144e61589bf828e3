// SPSS .sav / .zsav, Parquet and Arrow IPC inputs through buildDataset, checked against the R
// reference figures, the CSV path and DuckDB.
//
// The .sav files are GNU PSPP's output from the bundled CSVs and codebooks, committed in
// test/fixtures/formats (regenerate with make-fixtures.sh there). Parquet and Arrow files are
// made here from the same CSVs: Parquet by DuckDB (several row groups, snappy and zstd), Arrow
// by apache-arrow from DuckDB's typed columns (several record batches, file and stream).
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, copyFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  type DataType,
  Bool,
  DateDay,
  Dictionary,
  Float64,
  Int32,
  Int64,
  Table,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RawTable, ReadOptions } from '../src/dataset/input/raw-table.js';
import { readCsv } from '../src/dataset/input/read-csv.js';
import { readInput, sniffFormat } from '../src/dataset/input/read-input.js';
import { buildDataset, CrosstabError, ErrorCode, openDataset, type Dataset } from '../src/index.js';
import { gssCsv, nhanesCsv, repoRoot } from './support/paths.js';
import { referenceQueries } from './support/reference-queries.js';


type Format = 'sav' | 'parquet' | 'arrow';
type Survey = 'gss' | 'nhanes' | 'gss2022' | 'edge';

const fixtures = join(repoRoot, 'test', 'fixtures', 'formats');
const dir = mkdtempSync(join(tmpdir(), 'read-formats-test-'));
const edgeCsv = join(fixtures, 'edge.csv');
const gssCodebook = JSON.parse(readFileSync(join(repoRoot, 'datasets', 'gss.codebook.json'), 'utf8')) as {
  variables: Record<string, { label?: string; values?: Record<string, string> }>;
};
const reference = {
  gss: referenceQueries('gss'),
  nhanes: referenceQueries('nhanes'),
};
const weightOf = { gss: 'wtssps', nhanes: 'WTMEC2YR', gss2022: 'wtssps', edge: 'w' } as const;

/** Input file per format and survey; Parquet and Arrow ones are written in beforeAll. */
const inputs: Record<Format, Record<Survey, string>> = {
  sav: {
    gss: join(fixtures, 'gss.zsav'),
    nhanes: join(fixtures, 'nhanes.sav'),
    gss2022: join(fixtures, 'gss-2022.sav'),
    edge: join(fixtures, 'edge-bytecode.sav'),
  },
  parquet: { gss: join(dir, 'gss.parquet'), nhanes: join(dir, 'nhanes.parquet'), gss2022: join(dir, 'gss-2022.parquet'), edge: join(dir, 'edge.parquet') },
  arrow: { gss: join(dir, 'gss.arrow'), nhanes: join(dir, 'nhanes.arrows'), gss2022: join(dir, 'gss-2022.arrow'), edge: join(dir, 'edge.arrow') },
};
/** GSS 2022 only, as CSV text taken line by line from the bundled file: the CSV path's input. */
const gss2022Csv = join(dir, 'gss-2022.csv');
/** What DuckDB reads each CSV as: zero-padded codes stay text, dates are dates. */
const sources: Record<Survey, string> = {
  gss: `read_csv('${gssCsv}', header = true, sample_size = -1)`,
  nhanes: `read_csv('${nhanesCsv}', header = true, sample_size = -1)`,
  gss2022: `read_csv('${gssCsv}', header = true, sample_size = -1) WHERE year = 2022`,
  edge: `read_csv('${edgeCsv}', header = true, sample_size = -1, types = {'state': 'VARCHAR', 'born': 'DATE'})`,
};

let duck: Awaited<ReturnType<Awaited<ReturnType<typeof DuckDBInstance.create>>['connect']>>;

beforeAll(async () => {
  const lines = gunzipSync(readFileSync(gssCsv)).toString('utf8').split('\n');
  writeFileSync(gss2022Csv, [lines[0], ...lines.filter((line) => line.startsWith('2022,'))].join('\n') + '\n');
  duck = await (await DuckDBInstance.create(':memory:')).connect();
  const parquet = { gss: 'SNAPPY', nhanes: 'ZSTD', gss2022: 'SNAPPY', edge: 'UNCOMPRESSED' } as const;
  for (const survey of Object.keys(sources) as Survey[]) {
    const options = `FORMAT parquet, ROW_GROUP_SIZE 20000, COMPRESSION ${parquet[survey]}`;
    await duck.run(`COPY (SELECT * FROM ${sources[survey]}) TO '${inputs.parquet[survey]}' (${options})`);
    const table = await arrowTable(`SELECT * FROM ${sources[survey]}`);
    writeFileSync(inputs.arrow[survey], tableToIPC(table, inputs.arrow[survey].endsWith('.arrows') ? 'stream' : 'file'));
  }
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** DuckDB's typed columns as an Arrow table of 20,000-row record batches. */
async function arrowTable(sql: string): Promise<Table> {
  const result = await duck.runAndReadAll(sql);
  const names = result.columnNames();
  const types = result.columnTypes().map(String);
  const columns = result.getColumnsJS();
  const rows = columns[0]!.length;
  const arrowType = (type: string, index: number): DataType => {
    if (type === 'BIGINT') return index === 0 ? new Int64() : new Int32(); // both integer paths
    if (type === 'DOUBLE') return new Float64();
    if (type === 'DATE') return new DateDay();
    if (type === 'BOOLEAN') return new Bool();
    return index % 2 === 0 ? new Utf8() : new Dictionary(new Utf8(), new Int32());
  };
  const batches: Table[] = [];
  for (let start = 0; start < rows; start += 20_000) {
    const vectors = Object.fromEntries(
      names.map((name, i) => {
        const type = arrowType(types[i]!, i);
        const values = columns[i]!.slice(start, start + 20_000).map((value) => (typeof value === 'bigint' && !(type instanceof Int64) ? Number(value) : value));
        return [name, vectorFromArray(values, type)];
      }),
    );
    batches.push(new Table(vectors));
  }
  return batches.reduce((all, batch) => all.concat(batch));
}

let builds = 0;
async function build(input: string, weights: string[], extra: { codebook?: string } = {}): Promise<Dataset> {
  const out = join(dir, `build-${++builds}.arrow`);
  await buildDataset(input, { weights, survey: 'TEST', out, ...extra });
  return openDataset(out, { execution: 'inline' });
}

function expectClose(actual: number, expected: number, tolerance = 1e-9) {
  if (expected === 0) expect(actual).toBe(0);
  else expect(Math.abs(actual - expected) / Math.abs(expected)).toBeLessThan(tolerance);
}

async function failure(promise: Promise<unknown>): Promise<CrosstabError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(CrosstabError);
  return error as CrosstabError;
}

/** The value of `column` in each row, '' for blank. */
function texts(table: RawTable, column: string): string[] {
  const found = table.columns.find((candidate) => candidate.name === column);
  if (!found) throw new Error(`no column ${column}`);
  return [...found.ids].map((id) => (id === 0 ? '' : found.dictionary[id - 1]!));
}

describe.each(['sav', 'parquet', 'arrow'] as const)('%s input', (format) => {
  const datasets: Partial<Record<'gss' | 'nhanes', Dataset>> = {};

  beforeAll(async () => {
    datasets.gss = await build(inputs[format].gss, [weightOf.gss]);
    datasets.nhanes = await build(inputs[format].nhanes, [weightOf.nhanes]);
  }, 120_000);

  afterAll(() => {
    datasets.gss?.close();
    datasets.nhanes?.close();
  });

  it('is recognised by its first bytes', async () => {
    expect(await sniffFormat(inputs[format].gss)).toBe(format);
    expect(await sniffFormat(inputs[format].nhanes)).toBe(format);
  });

  describe.each(['gss', 'nhanes'] as const)('%s: every R reference query', (survey) => {
    it.each(reference[survey].map((q) => [q.id, q] as const))('%s', async (_id, q) => {
      const result = await datasets[survey]!.crosstab({ base: q.base, targets: [q.target] });
      expect(result.targets[0]!.respondents).toBe(q.respondents);
      expectClose(result.targets[0]!.weighted, q.weightedSum);
      expect(result.base.respondents).toBe(q.baseRespondents);
      expectClose(result.base.weighted, q.baseWeightedSum);
    });
  });

  it('renders values as the CSV has them: integers without ".0", numeric kinds, same distinct values', async () => {
    const csv = await openDataset(inject('testDatasets').gss, { execution: 'inline' });
    try {
      const mine = new Map(datasets.gss!.info.variables.map((v) => [v.name, v]));
      for (const variable of csv.info.variables) {
        expect(mine.get(variable.name)?.kind, variable.name).toBe(variable.kind);
        expect(mine.get(variable.name)?.values?.map((v) => [v.value, v.respondents]), variable.name).toEqual(variable.values?.map((v) => [v.value, v.respondents]));
        expect(mine.get(variable.name)?.missing, variable.name).toBe(variable.missing);
      }
      expect(mine.get('sex')!.values!.map((v) => v.value)).toEqual(['1', '2']);
    } finally {
      csv.close();
    }
  });

  it('reads several weights; each query may choose any of them (GSS 2022: wtssps and formwt)', async () => {
    const ds = await build(inputs[format].gss2022, ['wtssps', 'formwt']);
    const viaCsv = await build(gss2022Csv, ['wtssps', 'formwt']);
    try {
      expect(ds.info.weights).toEqual(['wtssps', 'formwt']);
      expect(ds.info.respondents).toBe(3544);
      const targets = ['*', 'sex=2', 'degree=3,4', 'polviews=1,2,3', 'relig=4', 'age=65..', 'sex=NA', 'NOT relig=1,2', 'degree=4 OR padeg=4'];
      for (const weight of [undefined, 'wtssps', 'formwt', null] as const) {
        for (const base of ['*', 'sex=1', 'age=18..29']) {
          const options = weight === undefined ? {} : { weight };
          const mine = await ds.crosstab({ base, targets, ...options });
          const expected = await viaCsv.crosstab({ base, targets, ...options });
          expect(mine.weight).toBe(weight === undefined ? 'wtssps' : weight);
          expect(mine.base).toEqual(expected.base);
          expect(mine.targets).toEqual(expected.targets);
        }
      }
      // And against DuckDB summing the CSV directly.
      for (const [where, target] of [
        ['sex = 2', 'sex=2'],
        ['degree IN (3, 4)', 'degree=3,4'],
        ['age >= 65', 'age=65..'],
      ] as const) {
        const rows = await duck.runAndReadAll(`SELECT SUM(formwt)::DOUBLE, COUNT(*)::DOUBLE FROM ${sources.gss2022} AND ${where}`);
        const [sum, count] = rows.getRows()[0] as [number, number];
        const result = await ds.crosstab({ base: '*', targets: [target], weight: 'formwt' });
        expect(result.targets[0]!.respondents).toBe(count);
        expectClose(result.targets[0]!.weighted, sum);
      }
    } finally {
      ds.close();
      viaCsv.close();
    }
  });

  it('reads the edge cases: zero-padded text, UTF-8, long strings, decimals, dates, a mixed-case name', async () => {
    const options: ReadOptions = { weights: ['w', 'w2'] };
    const csv = await readCsv(edgeCsv, options);
    const table = await readInput(inputs[format].edge, options);
    expect(table.rows).toBe(csv.rows);
    expect(table.columns.map((c) => c.name)).toEqual(csv.columns.map((c) => c.name));
    expect(table.weights).toEqual(csv.weights);
    // PSPP blanks user-missing values (q1 9, q2 90 and up, state "99"): the CSV has them.
    const userMissing: Record<string, string[]> = format === 'sav' ? { q1: ['9'], q2: ['95', '100'], state: ['99'] } : {};
    for (const column of csv.columns) {
      const expected = texts(csv, column.name).map((value) => (userMissing[column.name]?.includes(value) ? '' : value));
      expect(texts(table, column.name), column.name).toEqual(expected);
    }
    expect(texts(table, 'state')[0]).toBe('06');
  });

  it('names a missing weight column with near matches', async () => {
    for (const survey of ['gss', 'nhanes'] as const) {
      const typo = survey === 'gss' ? 'wtsps' : 'WTMEC2Y';
      const error = await failure(readInput(inputs[format][survey], { weights: [typo] }));
      expect(error.code).toBe(ErrorCode.invalidInput);
      expect(error.details.file).toBe(inputs[format][survey]);
      expect(error.details.field).toBe(typo);
      expect(error.details.suggestions).toEqual([weightOf[survey]]);
      expect(error.message).toContain(`"${typo}"`);
      expect(error.message).toContain(`did you mean "${weightOf[survey]}"?`);
    }
    const exclude = await failure(readInput(inputs[format].gss, { weights: ['wtssps'], exclude: ['sexx'] }));
    expect(exclude.code).toBe(ErrorCode.invalidOption);
    expect(exclude.details.suggestions).toEqual(['sex']);
  });

  it('names the row and column of a blank, non-numeric or negative weight', async () => {
    // formwt is blank before 1978: the first row already.
    const blank = await failure(readInput(inputs[format].gss, { weights: ['wtssps', 'formwt'] }));
    expect(blank.code).toBe(ErrorCode.invalidInput);
    expect(blank.details).toMatchObject({ file: inputs[format].gss, row: 1, field: 'formwt' });
    expect(blank.message).toContain('row 1');
    expect(blank.message).toContain('"formwt" is blank');

    const text = await failure(readInput(inputs[format].edge, { weights: ['city'] }));
    expect(text.details).toMatchObject({ file: inputs[format].edge, row: 1, field: 'city' });
    expect(text.message).toContain('"São Paulo", which is not a number');

    const negative = await failure(readInput(inputs[format].edge, { weights: ['score'] }));
    expect(negative.details).toMatchObject({ row: 3, field: 'score' });
    expect(negative.message).toContain('-3.25, which is a negative number');
  });

  it('refuses a truncated file with a clear invalid_input naming it', async () => {
    for (const survey of ['gss', 'nhanes', 'gss2022'] as const) {
      const original = inputs[format][survey];
      const size = statSync(original).size;
      for (const keep of [0.5, 0.999]) {
        const cut = join(dir, `cut-${Math.round(keep * 1000)}-${original.split('/').pop()}`);
        copyFileSync(original, cut);
        truncateSync(cut, Math.floor(size * keep));
        const error = await failure(readInput(cut, { weights: [weightOf[survey]] }));
        expect(error.code, `${cut}: ${error.message}`).toBe(ErrorCode.invalidInput);
        expect(error.details.file).toBe(cut);
        expect(error.message.startsWith(`${cut}: `)).toBe(true);
      }
    }
  });
});

describe('SPSS specifics', () => {
  it('variables carry the .sav variable labels and value labels (built without a codebook)', async () => {
    const ds = await build(inputs.sav.gss, ['wtssps']);
    try {
      const variables = new Map(ds.info.variables.map((v) => [v.name, v]));
      for (const [name, described] of Object.entries(gssCodebook.variables)) {
        const variable = variables.get(name)!;
        expect(variable.label, name).toBe(described.label);
        for (const value of variable.values ?? []) expect(value.label, `${name}=${value.value}`).toBe(described.values?.[value.value]);
      }
      expect(variables.get('sex')!.values).toEqual([
        { value: '1', label: 'Male', respondents: 33_444 },
        { value: '2', label: 'Female', respondents: 42_124 },
      ]);
      expect(variables.get('degree')!.values!.find((v) => v.value === '3')!.label).toBe("Bachelor's");
    } finally {
      ds.close();
    }
  });

  it('a codebook still overrides the .sav labels', async () => {
    const codebook = join(dir, 'override.codebook.json');
    writeFileSync(codebook, JSON.stringify({ variables: { sex: { label: 'Gender', values: { '2': 'Woman' } } } }));
    const ds = await build(inputs.sav.nhanes, ['WTMEC2YR']);
    const gss = await build(inputs.sav.gss2022, ['wtssps'], { codebook });
    try {
      const sex = gss.info.variables.find((v) => v.name === 'sex')!;
      expect(sex.label).toBe('Gender');
      expect(sex.values!.map((v) => v.label)).toEqual(['Male', 'Woman']);
      const race = ds.info.variables.find((v) => v.name === 'race')!;
      expect(race.label).toBe('Race/ethnicity');
      expect(race.values!.map((v) => v.label)).toEqual(['Hispanic', 'Non-Hispanic white', 'Non-Hispanic black', 'Other']);
    } finally {
      ds.close();
      gss.close();
    }
  });

  it('reads all three data layouts alike: uncompressed, bytecode and ZLIB (.zsav)', async () => {
    const options: ReadOptions = { weights: ['w', 'w2'] };
    const [plain, bytecode, zlib] = await Promise.all(
      ['edge-uncompressed.sav', 'edge-bytecode.sav', 'edge.zsav'].map((name) => readInput(join(fixtures, name), options)),
    );
    expect(bytecode).toEqual({ ...plain, source: bytecode!.source });
    expect(zlib).toEqual({ ...plain, source: zlib!.source });
  });

  it('keeps labels of strings and long strings, blanks user-missing values, writes dates as ISO text', async () => {
    const table = await readInput(join(fixtures, 'edge.zsav'), { weights: ['w'] });
    const column = (name: string) => table.columns.find((c) => c.name === name)!;
    expect(column('state').valueLabels).toEqual({ '06': 'California', '48': 'Texas', '99': 'Unknown' });
    expect(column('city').valueLabels).toEqual({ Paris: 'Capital of France', 'São Paulo': 'Largest city of Brazil' });
    expect(column('q1').valueLabels).toEqual({ '1': 'Yes', '2': 'No', '9': 'Refused' });
    expect(column('LongName_Mixed').label).toBe('A long, mixed-case variable name');
    expect(texts(table, 'q1')).toEqual(['1', '', '2', '1', '', '2']);
    expect(texts(table, 'q2')).toEqual(['5', '', '', '', '-1', '89']);
    expect(texts(table, 'born')).toEqual(['1980-01-31', '1999-12-01', '', '2001-07-04', '1970-01-01', '2024-02-29']);
    expect(texts(table, 'note')[0]).toHaveLength(300);
    expect(texts(table, 'w2')).toEqual(['2', '1', '0', '3', '0.25', '1']);
  });

  it('names the file and the case when the data stop inside a case', async () => {
    const cut = join(dir, 'cut-case.sav');
    copyFileSync(inputs.sav.gss2022, cut);
    truncateSync(cut, statSync(cut).size - 3);
    const error = await failure(readInput(cut, { weights: ['wtssps'] }));
    expect(error.code).toBe(ErrorCode.invalidInput);
    expect(error.message).toMatch(/: the file ends inside case \d+ .*truncated/);
  });
});

describe('choosing the reader', () => {
  it('reads CSV and gzip CSV as before, whatever the name', async () => {
    const renamed = join(dir, 'survey.dat');
    copyFileSync(nhanesCsv, renamed);
    expect(await sniffFormat(renamed)).toBe('csv');
    expect(await sniffFormat(edgeCsv)).toBe('csv');
    expect((await readInput(renamed, { weights: ['WTMEC2YR'] })).rows).toBe(8591);
  });

  it('refuses a file named like a binary format whose bytes are something else', async () => {
    for (const name of ['x.sav', 'x.parquet', 'x.arrow']) {
      const path = join(dir, name);
      copyFileSync(edgeCsv, path);
      const error = await failure(readInput(path, { weights: ['w'] }));
      expect(error.code).toBe(ErrorCode.invalidInput);
      expect(error.details.file).toBe(path);
      expect(error.message).toContain('the name says');
    }
    const empty = join(dir, 'empty.sav');
    writeFileSync(empty, '');
    expect((await failure(readInput(empty, { weights: ['w'] }))).message).toContain('the file is empty');
  });

  it('reports a missing file as file_not_found', async () => {
    const error = await failure(readInput(join(dir, 'nope.sav'), { weights: ['w'] }));
    expect(error.code).toBe(ErrorCode.fileNotFound);
  });
});
