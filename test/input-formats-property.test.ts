// Every input format builds the dataset the CSV of the same table builds: small random tables
// of the shapes users write (odd column names: spaces, quotes, unicode, leading digits, names
// that differ only in case; integers, negatives, decimals, exponents, integers beyond 2^53, -0,
// values that collide as floats; text that looks like numbers; blanks, nulls and NaN;
// single-coded, multi-response, constant and boolean columns; weights with zeros and
// fractions) written as CSV, gzip'd CSV, Parquet (hyparquet-writer: snappy, gzip, zstd,
// brotli, uncompressed; several row groups and pages; dictionary, plain and delta pages, data
// page v2; and DuckDB: snappy, zstd, gzip, uncompressed, pages v1 and v2) and Arrow IPC
// (apache-arrow: file and stream, several record batches, dictionary columns). Each build must
// give the CSV build's fingerprint (metadata and every buffer), or refuse naming the column
// and the file; never another figure. The CSV build itself is checked against a row-by-row
// reference: every value `info` lists, written back as an expression, counts its respondents,
// and random expressions (long OR chains, NOT, ranges with exponents) count and weigh as the
// rows say. Seeded; INPUT_FORMATS_RUNS=N runs N cases (INPUT_FORMATS_SEED picks the seed).
import fc from 'fast-check';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync, brotliCompressSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { type Vector, Bool, Dictionary, Field, makeData, RecordBatch, Schema, Struct, Float64, Int32, Int64, RecordBatchStreamWriter, RecordBatchFileWriter, Table, Utf8, vectorFromArray, type DataType } from 'apache-arrow';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset, valueExpression, type Dataset } from '../src/index.js';
import type { Expr } from '../src/query/ast.js';
// @ts-expect-error: a plain-JavaScript bench helper without types
import { buildFingerprint } from '../bench/lib/build-fingerprint.js';
import { execFileSync } from 'node:child_process';
import { skipWithoutPspp } from './support/pspp.js';
import { readFile } from 'node:fs/promises';
import { RecordBatchReader } from 'apache-arrow';
import { toText } from './support/expression-text.js';
import { matches, type ReferenceTable } from './support/reference-engine.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-input-formats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const file = (name: string) => join(dir, `${serial++}-${name}`);

type Connection = Awaited<ReturnType<Awaited<ReturnType<typeof DuckDBInstance.create>>['connect']>>;
let duck: Connection;
let zstdCompress: (input: Uint8Array) => Uint8Array;
beforeAll(async () => {
  duck = await (await DuckDBInstance.create(':memory:')).connect();
  const zstd = await import('@bokuweb/zstd-wasm');
  await zstd.init();
  // compress() answers a view of the WebAssembly memory that its next call overwrites: copied.
  zstdCompress = (input) => zstd.compress(input, 3).slice();
});
afterAll(() => duck?.closeSync());

/** A cell of the generated table: a typed value, or null (blank). */
type Value = bigint | number | string | boolean | null;
type Kind = 'int' | 'double' | 'text' | 'bool' | 'multi' | 'decimal' | 'date' | 'timestamp';
interface Column {
  name: string;
  kind: Kind;
  values: Value[];
  /** An id column (spelled by hand like the others: id-like integers are told by their values, 12.0 is one). */
  id?: true;
}
interface Survey {
  columns: Column[];
  weights: number[];
}

// Names users give columns: spaces, quotes, backslashes, unicode (composed and not), leading
// digits, the grammar's keywords and NA, characters of bare names (. - : # $ @ +), and pairs
// that differ only in case.
const NAMES = [
  'age', 'Age', 'AGE', 'two words', ' lead', 'trail ', 'q"uote', "it's", 'back\\slash', 'a,b', 'a.b', 'x-1', 'e+5', '1st', '2024',
  'NOT', 'and', 'Or', 'NA', '@home', '#n', 'a:b', '$x', 'é', 'e\u0301', 'É', '日本', '😀', 'Ｆ', 'a..b', '(x)', 'x=y', '*', 'tab\there',
];
const INTS = [0n, 1n, 2n, -3n, 7n, 12n, 1000n, 9007199254740992n, 9007199254740993n, -9007199254740993n, 9223372036854775807n, -9223372036854775808n, 123456789012n];
const DOUBLES = [0, -0, 0.5, -2.5, 0.025, 1e21, 1e-7, 0.1, 0.30000000000000004, 0.3, 1e300, 5e-324, 3, 2, NaN, 123456789.125, -1e-300, 1.7976931348623157e308];
const TEXTS = ['a', 'A', 'b', '06', '6', '1e3', '2.0', '2', ' x', 'x ', 'q"t', 'a,b', 'NA', 'na', '日本', '😀', 'e\u0301', 'é', '1..2', 'true', 'NaN', 'Infinity', '-', 'x y', '(p)', '\\', '', '0x10', '+2', '.5', '1e400', '-0'];
const ANSWERS = ['b', 'a', 'c', 'z z', 'é', '1', '01', 'q"t'];
// DECIMAL(38,3) values as DuckDB takes them, dates and timestamps (microseconds): typed in
// DuckDB's Parquet, text in the other writers, each written in a CSV as the build reads it.
const DECIMALS = ['1.500', '-2.250', '0.001', '0.000', '-0.000', '123456789012345.678', '12345678901234567890123.000', '7.000'];
const DATES = ['2024-01-02', '1969-12-31', '2000-02-29', '0001-01-01'];
const TIMESTAMPS = ['2024-01-01 00:00:00', '2024-01-01 00:00:00.000001', '2024-01-01 00:00:00.5', '1969-12-31 23:59:59.999999'];

/** A decimal's text without trailing zeros (-0 as 0), a timestamp as ISO 8601 with its fraction in groups of three digits. */
function typedText(kind: Kind, given: string): string {
  if (kind === 'decimal') {
    const trimmed = given.replace(/\.?0+$/, '');
    return /^-0*$/.test(trimmed) || trimmed === '' ? '0' : trimmed;
  }
  if (kind === 'timestamp') {
    const [day, time] = given.split(' ');
    const [whole, fraction = ''] = time!.split('.');
    const digits = fraction.replace(/0+$/, '');
    return `${day}T${whole}${digits === '' ? '' : `.${digits.padEnd(Math.ceil(digits.length / 3) * 3, '0')}`}`;
  }
  return given;
}

/** How a typed value reads in a CSV of the same data (numbers as JavaScript writes them). */
function text(value: Value, kind?: Kind): string {
  if (value === null) return '';
  if (typeof value === 'number') return Number.isNaN(value) ? '' : String(value);
  if (typeof value === 'string' && kind !== undefined) return typedText(kind, value);
  return String(value);
}

/** Other spellings of the same number (2.0, 2e0, 20E-1, 0.0, -0.0), for the CSV a user writes by hand. */
function spelled(value: Value, pick: number): string {
  if (typeof value !== 'number' && typeof value !== 'bigint') return text(value);
  if (typeof value === 'number' && !Number.isFinite(value)) return text(value);
  if (typeof value === 'bigint' && (value > 9007199254740991n || value < -9007199254740991n)) return text(value);
  const number = Number(value);
  const options = [String(number), number.toExponential(), number.toExponential().toUpperCase(), Number.isInteger(number) && Math.abs(number) < 1e15 ? `${number}.0` : String(number)];
  if (Object.is(number, 0)) options.push('-0', '0.0');
  return options[pick % options.length]!;
}

const cell = (value: string) => (/[",\n\r\t]/.test(value) || value !== value.trim() ? `"${value.replace(/"/g, '""')}"` : value);

function csvText(survey: Survey, spell?: number): string {
  const lines = [[...survey.columns.map((column) => column.name), 'w'].map(cell).join(',')];
  for (let r = 0; r < survey.weights.length; r++) {
    const cells = survey.columns.map((column, c) => cell(spell === undefined || typeof column.values[r] === 'string' ? text(column.values[r]!, column.kind) : spelled(column.values[r]!, spell + r + c)));
    lines.push([...cells, cell(String(survey.weights[r]!))].join(','));
  }
  return `${lines.join('\n')}\n`;
}

const columnArb = (rows: number): fc.Arbitrary<Column> =>
  fc.record({ name: fc.constantFrom(...NAMES), kind: fc.constantFrom<Kind>('int', 'int', 'double', 'double', 'text', 'text', 'bool', 'multi', 'decimal', 'date', 'timestamp'), blanks: fc.boolean(), constant: fc.boolean() }).chain(({ name, kind, blanks, constant }) => {
    const pool: Record<Kind, fc.Arbitrary<Value>> = {
      int: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...INTS.slice(0, 7)) }, fc.constantFrom(...INTS), fc.bigInt({ min: -50n, max: 50n })),
      double: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...DOUBLES) }, fc.double({ noDefaultInfinity: true })),
      text: fc.constantFrom(...TEXTS),
      bool: fc.boolean(),
      multi: fc.subarray(ANSWERS, { maxLength: 3 }).map((answers) => answers.join(';')),
      decimal: fc.constantFrom(...DECIMALS),
      date: fc.constantFrom(...DATES),
      timestamp: fc.constantFrom(...TIMESTAMPS),
    };
    // A column draws from a few values of its pool (codes repeat, as in surveys), or is constant.
    return fc.array(pool[kind], { minLength: 1, maxLength: constant ? 1 : 6 }).chain((few) => {
      const one = blanks ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...few) }, fc.constant(null)) : fc.constantFrom(...few);
      return fc.array(one, { minLength: rows, maxLength: rows }).map((values) => ({ name, kind, values }));
    });
  });

const weightsArb = (rows: number) =>
  fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50 }), fc.double({ min: 0.001, max: 1000, noNaN: true }), fc.constantFrom(0.1, 1e-9, 2.5e3)), { minLength: rows, maxLength: rows });

/** An id-like column: integers, one per row (skipped from 1,000 rows), or texts (skipped past 5,000 distinct). */
const idArb = (rows: number): fc.Arbitrary<Column> =>
  fc.record({ name: fc.constantFrom('id', 'ID', 'serial no', '1d'), text: fc.boolean(), step: fc.integer({ min: 1, max: 1000 }), repeat: fc.boolean() }).map(({ name, text: asText, step, repeat }) => ({
    name,
    id: true as const,
    kind: asText ? ('text' as const) : ('int' as const),
    // One repeated id keeps the column a variable (integers) or one value fewer (text).
    values: Array.from({ length: rows }, (_, r): Value => {
      const id = BigInt((repeat && r === rows - 1 ? 0 : r) * step - 4000);
      return asText ? `${id}`.padStart(8, '0') : id;
    }),
  }));

const surveyArb: fc.Arbitrary<Survey> = fc.oneof(
  { weight: 7, arbitrary: fc.integer({ min: 2, max: 40 }) },
  { weight: 1, arbitrary: fc.constantFrom(1000, 1200, 5050) },
).chain((rows) =>
  fc.record({
    columns: fc.tuple(fc.uniqueArray(columnArb(rows), { minLength: 1, maxLength: rows > 40 ? 3 : 6, selector: (column) => column.name }), rows > 40 ? idArb(rows).map((id) => [id]) : fc.constant([])).map(([columns, ids]) =>
      [...columns, ...ids.filter((id) => !columns.some((column) => column.name === id.name))],
    ),
    weights: weightsArb(rows),
  }),
);

/** The options of every build of a survey. */
const buildOptions = (survey: Survey) => ({
  weights: ['w'],
  survey: 'T',
  rangeIndex: 'none' as const,
  multi: survey.columns.filter((column) => column.kind === 'multi').map((column) => ({ column: column.name, delimiter: ';' })),
});

// ---- the forms of one table -------------------------------------------------------------

type Writer = (survey: Survey, path: string, choice: number) => Promise<void> | void;

/** A column's values for a typed file: blank text sometimes null, sometimes ''. */
function textValues(column: Column, choice: number): Array<string | null> {
  return column.values.map((value, r) => (value === null ? ((choice + r) % 3 === 0 ? '' : null) : text(value, column.kind) === '' ? ((choice + r) % 2 === 0 ? '' : null) : text(value, column.kind)));
}
const fitsInt32 = (column: Column) => column.values.every((value) => value === null || (typeof value === 'bigint' && value >= -2147483648n && value <= 2147483647n));

const parquetHyparquet: Writer = (survey, path, choice) => {
  const codecs = ['SNAPPY', 'UNCOMPRESSED', 'GZIP', 'ZSTD', 'BROTLI'] as const;
  const codec = codecs[choice % codecs.length]!;
  const rows = survey.weights.length;
  const columnData = survey.columns.map((column, c) => {
    const pick = (choice >> 3) + c;
    if (column.kind === 'int') {
      const small = fitsInt32(column) && pick % 2 === 0;
      const encodings = [undefined, 'PLAIN', 'DELTA_BINARY_PACKED', 'RLE_DICTIONARY'] as const;
      return { name: column.name, type: small ? ('INT32' as const) : ('INT64' as const), data: column.values.map((value) => (value === null ? null : small ? Number(value) : value)), encoding: encodings[pick % 4] };
    }
    if (column.kind === 'double') {
      const encodings = [undefined, 'PLAIN', 'RLE_DICTIONARY', 'BYTE_STREAM_SPLIT'] as const;
      return { name: column.name, type: 'DOUBLE' as const, data: column.values, encoding: encodings[pick % 4] };
    }
    if (column.kind === 'bool') return { name: column.name, type: 'BOOLEAN' as const, data: column.values };
    const encodings = [undefined, 'PLAIN', 'RLE_DICTIONARY', 'DELTA_LENGTH_BYTE_ARRAY', 'DELTA_BYTE_ARRAY'] as const;
    return { name: column.name, type: 'STRING' as const, data: textValues(column, pick), encoding: encodings[pick % 5] };
  });
  columnData.push({ name: 'w', type: 'DOUBLE', data: survey.weights, encoding: undefined });
  const rowGroupSize = [rows, Math.max(1, Math.ceil(rows / 3)), 1, 7][(choice >> 1) % 4]!;
  const bytes = parquetWriteBuffer({
    columnData: columnData as Parameters<typeof parquetWriteBuffer>[0]['columnData'],
    codec,
    compressors: { GZIP: (input) => gzipSync(input), ZSTD: zstdCompress, BROTLI: (input) => brotliCompressSync(input) },
    rowGroupSize,
    pageSize: (choice >> 2) % 2 === 0 ? 1 << 20 : 40,
    statistics: choice % 2 === 0,
  });
  writeFileSync(path, Buffer.from(bytes));
};

/** DuckDB's identifiers ignore case: a survey with names equal but for case is not one DuckDB holds. */
const duckHolds = (survey: Survey) => new Set(['w', ...survey.columns.map((column) => column.name.toLowerCase())]).size === survey.columns.length + 1;
const sqlName = (name: string) => `"${name.replace(/"/g, '""')}"`;
const sqlText = (value: string) => `'${value.replace(/'/g, "''")}'`;
function sqlValue(column: Column, value: Value, r: number): string {
  if (value === null) return 'NULL';
  if (column.kind === 'int') return `'${value}'::BIGINT`;
  if (column.kind === 'double') return Number.isNaN(value) ? "'NaN'::DOUBLE" : `${sqlText(String(value))}::DOUBLE`;
  if (column.kind === 'bool') return value ? 'true' : 'false';
  if (column.kind === 'decimal') return `${sqlText(String(value))}::DECIMAL(38,3)`;
  if (column.kind === 'date') return `DATE ${sqlText(String(value))}`;
  if (column.kind === 'timestamp') return `TIMESTAMP ${sqlText(String(value))}`;
  const given = text(value);
  return given === '' && r % 2 === 0 ? 'NULL' : sqlText(given);
}

async function duckTable(survey: Survey): Promise<string> {
  const table = `t${serial++}`;
  const types: Record<Kind, string> = { int: 'BIGINT', double: 'DOUBLE', text: 'VARCHAR', bool: 'BOOLEAN', multi: 'VARCHAR', decimal: 'DECIMAL(38,3)', date: 'DATE', timestamp: 'TIMESTAMP' };
  await duck.run(`CREATE TABLE ${table} (${[...survey.columns.map((column) => `${sqlName(column.name)} ${types[column.kind]}`), 'w DOUBLE'].join(', ')})`);
  const rows = survey.weights.map((w, r) => `(${[...survey.columns.map((column) => sqlValue(column, column.values[r]!, r)), `${sqlText(String(w))}::DOUBLE`].join(', ')})`);
  await duck.run(`INSERT INTO ${table} VALUES ${rows.join(', ')}`);
  return table;
}

const parquetDuck: Writer = async (survey, path, choice) => {
  const table = await duckTable(survey);
  const codecs = ['snappy', 'zstd', 'gzip', 'uncompressed'];
  const version = choice % 2 === 0 ? "PARQUET_VERSION 'V2'" : "PARQUET_VERSION 'V1'";
  await duck.run(`COPY ${table} TO '${path}' (FORMAT parquet, COMPRESSION ${codecs[(choice >> 1) % 4]}, ROW_GROUP_SIZE ${(choice >> 3) % 2 === 0 ? 2048 : 1}, ${version})`);
  await duck.run(`DROP TABLE ${table}`);
};

/** The columns in the table's order (an object's keys would put integer-like names such as 2024 first). */
function arrowTable(survey: Survey, choice: number): Table {
  const vectors: Array<[string, Vector]> = [];
  survey.columns.forEach((column, c) => {
    const pick = (choice >> 2) + c;
    let type: DataType;
    let values: unknown[];
    if (column.kind === 'int') {
      const small = fitsInt32(column) && pick % 2 === 0;
      type = small ? new Int32() : new Int64();
      values = column.values.map((value) => (value === null ? null : small ? Number(value) : value));
    } else if (column.kind === 'double') {
      type = new Float64();
      values = column.values;
    } else if (column.kind === 'bool') {
      type = new Bool();
      values = column.values;
    } else {
      type = pick % 2 === 0 ? new Dictionary(new Utf8(), new Int32()) : new Utf8();
      values = textValues(column, pick);
    }
    vectors.push([column.name, vectorFromArray(values as never, type)]);
  });
  vectors.push(['w', vectorFromArray(survey.weights, new Float64())]);
  const schema = new Schema(vectors.map(([name, vector]) => new Field(name, vector.type, true)));
  const children = vectors.map(([, vector]) => vector.data[0]!);
  return new Table([new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: survey.weights.length, nullCount: 0, children }))]);
}

const arrowWriter = (stream: boolean): Writer => (survey, path, choice) => {
  const whole = arrowTable(survey, choice);
  const rows = survey.weights.length;
  // Cut into record batches: one, or at a few points (a batch of one row among them).
  const cuts = [...new Set([0, ...(choice % 2 === 0 ? [] : [1, Math.floor(rows / 2), rows - 1]), rows])].sort((a, b) => a - b);
  const batches = cuts.slice(1).flatMap((end, i) => (end > cuts[i]! ? whole.slice(cuts[i], end).batches : []));
  const writer = stream ? new RecordBatchStreamWriter() : new RecordBatchFileWriter();
  writer.reset(undefined, whole.schema);
  for (const batch of batches) writer.write(batch);
  writer.finish();
  writeFileSync(path, writer.toUint8Array(true));
};

const FORMATS: Record<string, { extension: string; write: Writer; holds?: (survey: Survey) => boolean }> = {
  'csv.gz': { extension: 'csv.gz', write: (survey, path) => writeFileSync(path, gzipSync(csvText(survey))) },
  'parquet (hyparquet-writer)': { extension: 'parquet', write: parquetHyparquet },
  'parquet (DuckDB)': { extension: 'parquet', write: parquetDuck, holds: duckHolds },
  'arrow file': { extension: 'arrow', write: arrowWriter(false) },
  'arrow stream': { extension: 'arrows', write: arrowWriter(true) },
};

// ---- the reference -----------------------------------------------------------------------

function referenceOf(survey: Survey, ds: Dataset): { table: ReferenceTable; answers: Map<string, string[][]> } {
  const columns: Record<string, string[]> = {};
  const answers = new Map<string, string[][]>();
  for (const column of survey.columns) {
    const texts = column.values.map((value) => text(value, column.kind));
    if (column.kind === 'multi') answers.set(column.name, texts.map((given) => (given === '' ? [] : [...new Set(given.split(';'))])));
    else columns[column.name] = texts;
  }
  const numeric = new Set(ds.info.variables.filter((variable) => variable.kind === 'numeric').map((variable) => variable.name));
  return { table: { columns, weights: survey.weights, numeric }, answers };
}

function holds(reference: ReturnType<typeof referenceOf>, expr: Expr, row: number): boolean {
  if ('and' in expr) return expr.and.every((item) => holds(reference, item, row));
  if ('or' in expr) return expr.or.some((item) => holds(reference, item, row));
  if ('not' in expr) return !holds(reference, expr.not, row);
  if (!('var' in expr) || !reference.answers.has(expr.var)) return matches(reference.table, expr, row);
  const given = reference.answers.get(expr.var)![row]!;
  if ('missing' in expr) return given.length === 0;
  if ('in' in expr) return expr.in.some((value) => given.includes(value));
  if ('every' in expr) return expr.every.every((value) => given.includes(value));
  if ('none' in expr) return given.length > 0 && !expr.none.some((value) => given.includes(value));
  throw new Error('no range on a multi-response variable');
}

function referenceCount(reference: ReturnType<typeof referenceOf>, base: Expr, target: Expr) {
  let respondents = 0;
  let weighted = 0;
  for (let row = 0; row < reference.table.weights.length; row++) {
    if (holds(reference, base, row) && holds(reference, target, row)) {
      respondents++;
      weighted += reference.table.weights[row]!;
    }
  }
  return { respondents, weighted };
}

/** Expressions over the variables the dataset has: value lists (long OR chains), ranges with exponents, NA, NOT, AND, OR. */
function exprArb(ds: Dataset): fc.Arbitrary<Expr> {
  const leaves: Array<fc.Arbitrary<Expr>> = [fc.constant({ all: true } as Expr)];
  for (const variable of ds.info.variables) {
    const values = (variable.values ?? []).map((value) => value.value);
    leaves.push(fc.constant({ var: variable.name, missing: true } as Expr));
    if (values.length === 0) continue;
    const some = fc.subarray(values, { minLength: 1, maxLength: Math.min(12, values.length) });
    leaves.push(some.map((list) => ({ var: variable.name, in: list }) as Expr));
    if (variable.kind === 'multi') {
      leaves.push(some.map((list) => ({ var: variable.name, every: list }) as Expr), some.map((list) => ({ var: variable.name, none: list }) as Expr));
    }
    if (variable.kind === 'numeric') {
      const bound = fc.option(fc.constantFrom(...values, '-3', '0', '2.5E-2', '1e3', '-1e-300', '1e21', '9007199254740993'), { nil: undefined });
      leaves.push(
        fc.tuple(bound, bound)
          .filter(([min, max]) => min !== undefined || max !== undefined)
          .map(([min, max]) => (min !== undefined && max !== undefined && Number(min) > Number(max) ? [max, min] : [min, max]))
          .map(([min, max]) => ({ var: variable.name, ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) }) as Expr),
      );
    }
  }
  return fc.letrec<{ expr: Expr }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small' },
      ...leaves,
      tie('expr').map((inner) => ({ not: inner }) as Expr),
      fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((items) => ({ and: items }) as Expr),
      fc.array(tie('expr'), { minLength: 2, maxLength: 8 }).map((items) => ({ or: items }) as Expr),
    ),
  })).expr;
}

const closeTo = (got: number, want: number) => expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(want)));

/** The CSV build against the rows: every listed value read back as an expression, and random expressions. */
async function checkAgainstRows(survey: Survey, ds: Dataset, seed: number): Promise<void> {
  const reference = referenceOf(survey, ds);
  for (const variable of ds.info.variables) {
    const blanks = referenceCount(reference, { all: true }, { var: variable.name, missing: true });
    expect(variable.missing, `${variable.name} blanks`).toBe(blanks.respondents);
    const listed = variable.values ?? [];
    const expressions = listed.map((value) => valueExpression(variable.name, value.value));
    if (expressions.length === 0) continue;
    const result = await ds.crosstab({ base: '*', targets: expressions });
    listed.forEach((value, i) => {
      expect(result.targets[i]!.respondents, `${expressions[i]} (info: ${value.respondents})`).toBe(value.respondents);
      const want = referenceCount(reference, { all: true }, variable.kind === 'multi' ? { var: variable.name, in: [value.value] } : { var: variable.name, in: [value.value] });
      expect(result.targets[i]!.respondents, `${expressions[i]} against the rows`).toBe(want.respondents);
      closeTo(result.targets[i]!.weighted, want.weighted);
    });
  }
  const queries = fc.sample(fc.tuple(exprArb(ds), fc.array(exprArb(ds), { minLength: 1, maxLength: 4 })), { numRuns: 6, seed });
  for (const [base, targets] of queries) {
    const query = { base: toText(base), targets: targets.map(toText) };
    const result = await ds.crosstab(query).catch((error: unknown) => {
      throw new Error(`${JSON.stringify(query)}: ${String(error)}`);
    });
    const cells = [result.base, ...result.targets];
    [{ all: true } as Expr, ...targets].forEach((target, i) => {
      const want = referenceCount(reference, base, target);
      expect(cells[i]!.respondents, `${query.base} AND ${i === 0 ? '*' : query.targets[i - 1]}`).toBe(want.respondents);
      closeTo(cells[i]!.weighted, want.weighted);
    });
  }
}

/** A refusal is allowed when it names the column and the file; anything else is a defect. */
function expectClearRefusal(error: unknown, survey: Survey, path: string): void {
  const message = String(error);
  expect((error as { code?: string }).code, message).toBe('invalid_input');
  expect(message, 'names the file').toContain(path.split('/').pop()!);
  const named = [...survey.columns.map((column) => column.name), 'w'].some((name) => message.includes(name));
  expect(named, `names a column: ${message}`).toBe(true);
}

/** What differs between two builds: the first metadata field, or the buffers (name, kind, count, hash). */
async function difference(path: string, expectedPath: string): Promise<string> {
  const contents = async (at: string) => {
    const reader = RecordBatchReader.from(await readFile(at));
    reader.open();
    const { source: _s, name: _n, createdAt: _c, ...meta } = JSON.parse(reader.schema.metadata.get('crosstab.meta')!) as Record<string, unknown>;
    const buffers: string[] = [];
    for (const batch of reader) {
      for (let row = 0; row < batch.numRows; row++) buffers.push(['name', 'kind', 'count', 'hash'].map((column) => String(batch.getChild(column)!.get(row))).join(' '));
    }
    return { meta, buffers };
  };
  const [got, want] = [await contents(path), await contents(expectedPath)];
  for (const key of new Set([...Object.keys(got.meta), ...Object.keys(want.meta)])) {
    const [a, b] = [JSON.stringify(got.meta[key]), JSON.stringify(want.meta[key])];
    if (a !== b) return `metadata ${key}: ${a?.slice(0, 1500)}\n  CSV build: ${b?.slice(0, 1500)}`;
  }
  const differing = got.buffers.filter((line, i) => line !== want.buffers[i]);
  return `buffers: ${differing.slice(0, 5).join('; ')} (CSV build: ${want.buffers.filter((line, i) => line !== got.buffers[i]).slice(0, 5).join('; ')})`;
}

const runs = Number(process.env.INPUT_FORMATS_RUNS ?? 16);
const seed = Number(process.env.INPUT_FORMATS_SEED ?? 20261129);

describe('every input format builds the CSV build of the same table', () => {
  it(`random tables (${runs} cases, seed ${seed})`, async () => {
    let built = 0;
    const tally = new Map<string, number>();
    const count = (what: string) => tally.set(what, (tally.get(what) ?? 0) + 1);
    await fc.assert(
      fc.asyncProperty(surveyArb, fc.nat(), async (survey, choice) => {
        const csv = file('table.csv');
        writeFileSync(csv, csvText(survey));
        const fromCsv = file('csv.arrow');
        const csvBuild = await buildDataset(csv, { ...buildOptions(survey), out: fromCsv }).catch((error: unknown) => error);
        if (csvBuild instanceof Error) {
          // Tables no build takes (every weight zero, every column blank): each form must refuse too.
          expect((csvBuild as { code?: string }).code, String(csvBuild)).toBe('invalid_input');
          return;
        }
        built++;
        const expected = await buildFingerprint(fromCsv);
        const ds = await openDataset(fromCsv, { cellCache: 0 });
        try {
          await checkAgainstRows(survey, ds, choice);
          // The same table with numbers spelled by hand (2.0, 2e0, 20E-1, -0.0): the same answers.
          const spelledCsv = file('spelled.csv');
          writeFileSync(spelledCsv, csvText(survey, choice));
          const fromSpelled = file('spelled.arrow');
          await buildDataset(spelledCsv, { ...buildOptions(survey), out: fromSpelled });
          const other = await openDataset(fromSpelled, { cellCache: 0 });
          try {
            expect(other.info.variables.map((variable) => [variable.name, variable.kind, variable.distinct, variable.missing])).toEqual(ds.info.variables.map((variable) => [variable.name, variable.kind, variable.distinct, variable.missing]));
            await checkAgainstRows(survey, other, choice);
          } finally {
            await other.close();
          }
        } finally {
          await ds.close();
        }
        for (const [format, { extension, write, holds: formatHolds }] of Object.entries(FORMATS)) {
          if (formatHolds && !formatHolds(survey)) continue;
          const input = file(`table.${extension}`);
          await write(survey, input, choice);
          const out = file(`${extension}.arrow`);
          // Worker threads too (given explicitly, a build of any size reads and compiles in them).
          const threads = [undefined, 2, 0][(choice + serial) % 3];
          const report = await buildDataset(input, { ...buildOptions(survey), out, ...(threads === undefined ? {} : { threads }) }).catch((error: unknown) => error);
          if (report instanceof Error) {
            expectClearRefusal(report, survey, input);
            count(`${format} refused: ${String(report).replace(/\/tmp\/\S+/g, 'FILE').slice(0, 160)}`);
            continue;
          }
          count(`${format} equal${threads ? ' (threads)' : ''}`);
          if ((await buildFingerprint(out)) !== expected) {
            if (process.env.INPUT_FORMATS_KEEP) copyFileSync(input, join(process.env.INPUT_FORMATS_KEEP, `${serial++}-${input.split('/').pop()}`));
            expect.fail(`${format} (choice ${choice}) differs from the CSV build: ${await difference(out, fromCsv)}`);
          }
        }
      }),
      { numRuns: runs, seed, endOnFailure: process.env.INPUT_FORMATS_SHRINK === undefined },
    );
    if (process.env.INPUT_FORMATS_RUNS) console.log([...tally].map(([what, times]) => `${times} x ${what}`).sort().join('\n'));
    expect(built).toBeGreaterThan(runs / 2);
  }, Math.max(600_000, runs * 10_000));
});

// SPSS system files as GNU PSPP writes them from the CSV (GET DATA, then SAVE): names SPSS
// allows, integers a double holds, decimals with few digits (PSPP reads text with its own
// parser), texts without edge spaces (SPSS pads strings), blanks as system-missing or empty.
const SAV_NUMBERS = [0, 1, 2, -3, 7, 12, 1000, 0.5, -2.5, 0.025, 123456.75, 1e15, -0];
const SAV_TEXTS = ['a', 'A', 'b', '06', '6', '1e3', '2.0', 'q"t', 'a,b', 'NA', '日本', 'é', 'x y', '-', '1..2'];
const savSurveyArb: fc.Arbitrary<Survey> = fc.integer({ min: 2, max: 30 }).chain((rows) =>
  fc.record({
    columns: fc.array(
      fc.record({ kind: fc.constantFrom<Kind>('double', 'text', 'multi'), blanks: fc.boolean(), few: fc.integer({ min: 1, max: 5 }) }).chain(({ kind, blanks, few }) => {
        const pool = kind === 'double' ? fc.constantFrom<Value>(...SAV_NUMBERS) : kind === 'text' ? fc.constantFrom<Value>(...SAV_TEXTS) : fc.subarray(ANSWERS, { maxLength: 3 }).map((answers): Value => answers.join(';'));
        return fc.array(pool, { minLength: few, maxLength: few }).chain((values) =>
          fc.array(blanks ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...values) }, fc.constant(null)) : fc.constantFrom(...values), { minLength: rows, maxLength: rows }).map((cells) => ({ name: '', kind, values: cells })),
        );
      }),
      { minLength: 1, maxLength: 5 },
    ).map((columns) => columns.map((column, c) => ({ ...column, name: ['age', 'Region', 'q1', 'Q1b', 'x_2'][c]! }))),
    weights: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50 }), fc.constantFrom(0.5, 0.25, 1.125, 2.5)), { minLength: rows, maxLength: rows }),
  }),
);

function writeSav(survey: Survey, csv: string, path: string): void {
  const widths = survey.columns.map((column) => Math.max(1, ...column.values.map((value) => Buffer.byteLength(text(value)))));
  const variables = survey.columns.map((column, c) => `${column.name} ${column.kind === 'double' ? 'F20.3' : `A${widths[c]}`}`);
  const syntax = join(dir, `${serial++}-save.sps`);
  writeFileSync(
    syntax,
    [
      "SET LOCALE='UTF-8'.",
      `GET DATA /TYPE=TXT /FILE='${csv}' /ENCODING='UTF-8' /ARRANGEMENT=DELIMITED /DELCASE=LINE /FIRSTCASE=2 /DELIMITERS="," /QUALIFIER='"' /VARIABLES= ${variables.join(' ')} w F20.3.`,
      `SAVE OUTFILE='${path}'.`,
    ].join('\n') + '\n',
  );
  execFileSync('pspp', ['-b', syntax], { stdio: 'pipe' });
}

describe.skipIf(skipWithoutPspp('the SPSS form of the input-format test'))('an SPSS file written by PSPP builds the CSV build of the same table', () => {
  it(`random tables (${Math.ceil(runs / 3)} cases, seed ${seed})`, async () => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(savSurveyArb, async (survey) => {
        const csv = file('table.csv');
        writeFileSync(csv, csvText(survey));
        const fromCsv = file('csv.arrow');
        const csvBuild = await buildDataset(csv, { ...buildOptions(survey), out: fromCsv }).catch((error: unknown) => error);
        if (csvBuild instanceof Error) return;
        const sav = file('table.sav');
        writeSav(survey, csv, sav);
        const out = file('sav.arrow');
        const report = await buildDataset(sav, { ...buildOptions(survey), out }).catch((error: unknown) => error);
        if (report instanceof Error) {
          expectClearRefusal(report, survey, sav);
          return;
        }
        if ((await buildFingerprint(out)) !== (await buildFingerprint(fromCsv))) expect.fail(`the SPSS file differs from the CSV build: ${await difference(out, fromCsv)}`);
        compared++;
      }),
      { numRuns: Math.ceil(runs / 3), seed },
    );
    expect(compared).toBeGreaterThan(runs / 6);
  }, Math.max(600_000, runs * 5_000));
});
