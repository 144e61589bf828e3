// Two different numbers of one column that read as the same 64-bit float are never both read
// as floats: 9007199254740993 reads as the float of 9007199254740992 and 0.10000000000000001
// as that of 0.1, so a numeric variable holding both answered `big=9007199254740993` with the
// respondents of both values (and 1e-400 with those of 0). Such a column is text, its values
// exact as written, with a note naming both values; so is one with a value beyond the float
// range (1e400); and a dataset that an earlier build stored that way is refused at open.
// Numbers as R (%.17g), numpy (savetxt's %.18e) and SAS write them, with more digits than a
// float holds but no two reading as one float, are numeric: each value and a query number are
// compared as the floats they read as, as DuckDB compares them. Parquet DECIMAL values are
// read as exact decimals (hyparquet's floats turned 0.47 into 0.47000000000000003 and rounded
// 17+ digits). Counts are checked against DuckDB on the same files.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Decimal, Dictionary, Float64, Int32, makeData, makeVector, Table, tableToIPC, TimeMicrosecond, TimeMillisecond, TimestampMicrosecond, TimestampNanosecond, TimestampSecond, vectorFromArray } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset, valueExpression, type CrosstabError, type Dataset } from '../src/index.js';
import type { StoredVariable } from '../src/dataset/format.js';
import { Resolver } from '../src/query/resolve.js';
import { decimalText, fitsFloat64 } from '../src/text/decimal-text.js';
import { numberText } from '../src/text/expression-text.js';
import fc from 'fast-check';
import { floatExact } from './support/float-exact.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-inexact-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let connection: Awaited<ReturnType<DuckDBInstance['connect']>> | undefined;
afterAll(() => connection?.closeSync());

async function duck(sql: string): Promise<Array<Record<string, unknown>>> {
  connection ??= await (await DuckDBInstance.create(':memory:')).connect();
  return (await connection.runAndReadAll(sql)).getRowObjectsJson() as Array<Record<string, unknown>>;
}

async function count(ds: Dataset, expr: string): Promise<{ respondents: number; weighted: number }> {
  const cell = (await ds.crosstab({ base: '*', targets: [expr] })).targets[0]!;
  return { respondents: cell.respondents, weighted: cell.weighted };
}

async function refusal(promise: Promise<unknown>): Promise<CrosstabError> {
  return promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: CrosstabError) => error,
  );
}

describe('a CSV column of numbers a float does not hold exactly', () => {
  const csv = join(dir, 'inexact.csv');
  let ds: Dataset;
  let notes: string[];
  // Each value with its rows: values equal as floats, different as numbers.
  const columns = {
    big: ['9007199254740992', '9007199254740993', '9007199254740994', '12'],
    long: ['0.1', '0.10000000000000001', '0.3', '0.30000000000000004'],
    tiny: ['0', '1e-400', '2', '3'],
    fine: ['1', '1.0', '2.5', '1e3'],
  };
  beforeAll(async () => {
    const lines = ['big,long,tiny,fine,w'];
    for (let row = 0; row < 400; row++) {
      const pick = (values: string[]) => values[(row * 7 + Math.floor(row / 5)) % values.length]!;
      lines.push(`${columns.big[row % 4]},${pick(columns.long)},${columns.tiny[(row * 3) % 4]},${columns.fine[(row >> 1) % 4]},${1 + (row % 9) / 4}`);
    }
    writeFileSync(csv, `${lines.join('\n')}\n`);
    const report = await buildDataset(csv, { weights: ['w'], survey: 'T', out: join(dir, 'inexact.arrow') });
    notes = report.notes;
    ds = await openDataset(join(dir, 'inexact.arrow'));
  });
  afterAll(() => ds?.close());

  it('is text, with a note naming the column and both values', () => {
    const kind = Object.fromEntries(ds.info.variables.map((variable) => [variable.name, variable.kind]));
    expect(kind).toEqual({ big: 'text', long: 'text', tiny: 'text', fine: 'numeric' });
    expect(notes.find((note) => note.startsWith('column big '))).toContain('its values 9007199254740992 and 9007199254740993 are different numbers');
    expect(notes.find((note) => note.startsWith('column long '))).toMatch(/its values (0\.1 and 0\.10000000000000001|0\.10000000000000001 and 0\.1) /);
    expect(notes.find((note) => note.startsWith('column tiny '))).toMatch(/its values (0 and 1e-400|1e-400 and 0) /);
    expect(notes.some((note) => note.startsWith('column fine '))).toBe(false);
  });

  it('answers each value for its own respondents, as DuckDB counts the texts', async () => {
    for (const variable of ['big', 'long', 'tiny'] as const) {
      const expected = await duck(`SELECT "${variable}" AS v, count(*)::INTEGER AS n, sum(w::DOUBLE) AS w FROM read_csv('${csv}', all_varchar = true) GROUP BY 1`);
      expect(expected).toHaveLength(4);
      for (const { v, n, w } of expected) {
        const cell = await count(ds, valueExpression(variable, String(v)));
        expect(cell.respondents, `${variable}=${String(v)}`).toBe(n);
        expect(cell.weighted).toBeCloseTo(Number(w), 9);
      }
    }
  });

  it('keeps 1 and 1.0 one value of a numeric column, and ranges there exact', async () => {
    const expected = await duck(`SELECT count(*)::INTEGER AS n FROM read_csv('${csv}', all_varchar = true) WHERE fine::DOUBLE = 1`);
    expect((await count(ds, 'fine=1')).respondents).toBe(expected[0]!.n);
    expect((await count(ds, 'fine=1.0')).respondents).toBe(expected[0]!.n);
    const range = await duck(`SELECT count(*)::INTEGER AS n FROM read_csv('${csv}', all_varchar = true) WHERE fine::DOUBLE BETWEEN 1 AND 2.5`);
    expect((await count(ds, 'fine=1..2.5')).respondents).toBe(range[0]!.n);
  });

  it('refuses a range on such a column, and a query number beyond the float range', async () => {
    expect((await refusal(count(ds, 'big=1..'))).code).toBe('invalid_expression');
    const error = await refusal(count(ds, 'fine=1e400..'));
    expect(error.code).toBe('invalid_expression');
    expect(error.message).toContain('beyond the 64-bit float range');
  });

  it('compares a query number with more digits than a float holds as its float, as DuckDB does', async () => {
    for (const [expr, where] of [
      ['fine=1.0000000000000000001', "fine::DOUBLE = '1.0000000000000000001'::DOUBLE"],
      ['fine=..2.50000000000000000001', "fine::DOUBLE <= '2.50000000000000000001'::DOUBLE"],
      ['fine=0.99999999999999999999..1', "fine::DOUBLE BETWEEN '0.99999999999999999999'::DOUBLE AND 1"],
    ] as const) {
      const [expected] = await duck(`SELECT count(*)::INTEGER AS n FROM read_csv('${csv}', all_varchar = true) WHERE ${where}`);
      expect(expected!.n).toBeGreaterThan(0);
      expect((await count(ds, expr)).respondents, expr).toBe(expected!.n);
    }
  });
});

describe('numbers as R, numpy and SAS write them', () => {
  const csv = join(dir, 'written.csv');
  let ds: Dataset;
  let notes: string[];
  // As the tools print them: R's write.csv/format(digits = 17) and sprintf("%.17g"), numpy's
  // savetxt (%.18e), SAS's BEST32. and 20-digit identifiers; more digits than a float holds,
  // but no two values of a column read as the same float.
  const columns = {
    r17: ['0.33333333333333331', '0.66666666666666663', '0.10000000000000001', '0.69999999999999996', '0.14285714285714285', '1'],
    numpy: ['8.152877200599999924e+04', '3.333333333333333148e-01', '1.000000000000000056e-01', '1.000000000000000000e+20', '2.500000000000000000e+00', '-7.000000000000000000e+00'],
    long: ['81528.772005999999', '81528.5', '12345678901234567890', '98765432109876543210', '-3.5', '0'],
    fpc: ['0.20000000000000001', '0.15384615384615385', '0.125', '0.090909090909090912', '0.076923076923076927', '0.066666666666666666'],
  };
  const collision = ['0.1', '0.10000000000000001', '0.3', '0.30000000000000004', '0.5', '0.7'];
  beforeAll(async () => {
    const lines = [`${Object.keys(columns).join(',')},collide,w`];
    for (let row = 0; row < 600; row++) {
      const cells = Object.values(columns).map((values, k) => (row % 17 === k ? '' : values[(row * (k + 3) + Math.floor(row / 7)) % values.length]!));
      lines.push(`${cells.join(',')},${collision[(row * 5) % collision.length]},${1 + (row % 11) / 8}`);
    }
    writeFileSync(csv, `${lines.join('\n')}\n`);
    const report = await buildDataset(csv, { weights: ['w'], survey: 'T', out: join(dir, 'written.arrow') });
    notes = report.notes;
    ds = await openDataset(join(dir, 'written.arrow'));
  });
  afterAll(() => ds?.close());

  it('builds numeric columns, without a note; a collision stays text and its note names both values', () => {
    const kind = Object.fromEntries(ds.info.variables.map((variable) => [variable.name, variable.kind]));
    expect(kind).toEqual({ r17: 'numeric', numpy: 'numeric', long: 'numeric', fpc: 'numeric', collide: 'text' });
    for (const name of Object.keys(columns)) expect(notes.some((note) => note.startsWith(`column ${name} `)), name).toBe(false);
    expect(notes.find((note) => note.startsWith('column collide '))).toMatch(/its values (0\.1 and 0\.10000000000000001|0\.10000000000000001 and 0\.1|0\.3 and 0\.30000000000000004|0\.30000000000000004 and 0\.3) are different numbers that read as the same 64-bit float/);
  });

  it('answers every listed value for the respondents DuckDB finds for its float', async () => {
    for (const name of Object.keys(columns)) {
      const values = ds.info.variables.find((variable) => variable.name === name)!.values!;
      const expected = await duck(`SELECT count(*)::INTEGER AS n FROM read_csv('${csv}', all_varchar = true) WHERE ${name} <> '' GROUP BY ${name}::DOUBLE ORDER BY ${name}::DOUBLE`);
      expect(values.map(({ respondents }) => respondents), name).toEqual(expected.map(({ n }) => n));
      for (const { value, respondents } of values) {
        const [duckdb] = await duck(`SELECT count(*)::INTEGER AS n, sum(w::DOUBLE) AS w FROM read_csv('${csv}', all_varchar = true) WHERE ${name} <> '' AND ${name}::DOUBLE = '${value}'::DOUBLE`);
        const cell = await count(ds, valueExpression(name, value));
        expect(cell.respondents, `${name}=${value}`).toBe(duckdb!.n);
        expect(cell.respondents).toBe(respondents);
        expect(cell.weighted).toBeCloseTo(Number(duckdb!.w), 9);
      }
    }
  });

  it('answers ranges written with 17 and 20 digits as DuckDB does', async () => {
    for (const [name, lo, hi] of [
      ['r17', '0.14285714285714285', '0.66666666666666663'],
      ['r17', '0.10000000000000001', '0.10000000000000001'],
      ['numpy', '1.000000000000000056e-01', '8.152877200599999924e+04'],
      ['long', '81528.772005999999', '12345678901234567890'],
      ['long', '12345678901234567889', '98765432109876543210'],
      ['fpc', '0.066666666666666666', '0.15384615384615385'],
      ['fpc', undefined, '0.090909090909090912'],
    ] as const) {
      const where = [lo === undefined ? [] : [`${name}::DOUBLE >= '${lo}'::DOUBLE`], [`${name}::DOUBLE <= '${hi}'::DOUBLE`]].flat().join(' AND ');
      const [expected] = await duck(`SELECT count(*)::INTEGER AS n, coalesce(sum(w::DOUBLE), 0) AS w FROM read_csv('${csv}', all_varchar = true) WHERE ${name} <> '' AND ${where}`);
      expect(expected!.n, `${name} ${where}`).toBeGreaterThan(0);
      const cell = await count(ds, `${name}=${lo ?? ''}..${hi}`);
      expect(cell.respondents, `${name}=${lo ?? ''}..${hi}`).toBe(expected!.n);
      expect(cell.weighted).toBeCloseTo(Number(expected!.w), 9);
    }
  });

  it('keeps each value of the collision column its own, as DuckDB counts the texts', async () => {
    const expected = await duck(`SELECT collide AS v, count(*)::INTEGER AS n FROM read_csv('${csv}', all_varchar = true) GROUP BY 1`);
    expect(expected).toHaveLength(collision.length);
    for (const { v, n } of expected) expect((await count(ds, valueExpression('collide', String(v)))).respondents, String(v)).toBe(n);
  });
});

describe('a multi-response column of such numbers', () => {
  it('keeps each code its own value', async () => {
    const csv = join(dir, 'multi.csv');
    const sets = ['9007199254740992;9007199254740993', '9007199254740993', '9007199254740992;12', '', '12'];
    writeFileSync(csv, `codes,w\n${Array.from({ length: 100 }, (_, row) => `"${sets[row % sets.length]}",1`).join('\n')}\n`);
    await buildDataset(csv, { weights: ['w'], survey: 'T', out: join(dir, 'multi.arrow'), multi: [{ column: 'codes', delimiter: ';' }] });
    const ds = await openDataset(join(dir, 'multi.arrow'));
    try {
      const holding = (code: string) => sets.filter((set) => set.split(';').includes(code)).length * 20;
      for (const code of ['9007199254740992', '9007199254740993', '12']) expect((await count(ds, `codes=${code}`)).respondents, code).toBe(holding(code));
      expect((await count(ds, 'codes=all(9007199254740992,9007199254740993)')).respondents).toBe(20);
    } finally {
      ds.close();
    }
  });
});

describe('Parquet DECIMAL, BIGINT and UBIGINT columns', () => {
  const parquet = join(dir, 'decimals.parquet');
  let ds: Dataset;
  beforeAll(async () => {
    await duck(`CREATE TABLE t AS SELECT
        (((i % 100) - 50) / 100)::DECIMAL(4,2) AS d4,
        CASE WHEN i % 13 = 0 THEN NULL ELSE ((i % 997) - 400)::DECIMAL(18,2) / 7 END::DECIMAL(18,2) AS d18,
        (((i % 100) - 50) / 100)::DECIMAL(38,18) AS d38,
        ((i % 3) * 12345678901234567)::DECIMAL(38,0) AS big38,
        (CASE WHEN i % 2 = 0 THEN 9007199254740993 ELSE 9007199254740992 END)::BIGINT AS bigint53,
        ((i % 3)::UBIGINT + 18446744073709551000) AS ubig,
        ((i % 40) * 25)::DECIMAL(9,2) / 100 AS w
      FROM range(5000) r(i)`);
    await duck(`COPY t TO '${parquet}' (FORMAT parquet)`);
    await buildDataset(parquet, { weights: ['w'], survey: 'T', out: join(dir, 'decimals.arrow') });
    ds = await openDataset(join(dir, 'decimals.arrow'));
  });
  afterAll(() => ds?.close());

  it('keeps every value as DuckDB has it, each answering for DuckDB\'s respondents', async () => {
    const kinds = Object.fromEntries(ds.info.variables.map((variable) => [variable.name, variable.kind]));
    // d38's 18-digit fractions and big38's 17-digit integers are numbers no two of which read
    // as one float; bigint53 and ubig each hold such a pair.
    expect(kinds).toEqual({ d4: 'numeric', d18: 'numeric', d38: 'numeric', big38: 'numeric', bigint53: 'text', ubig: 'text' });
    for (const variable of ds.info.variables) {
      const type = variable.name === 'bigint53' ? 'BIGINT' : variable.name === 'ubig' ? 'UBIGINT' : (await duck(`SELECT typeof(${variable.name}) AS t FROM '${parquet}' LIMIT 1`))[0]!.t;
      const values = variable.values!;
      expect(values.length).toBeGreaterThan(1);
      for (const { value } of values) {
        // DuckDB reads the engine's value text as its own column type: the same number, or no row.
        const [expected] = await duck(`SELECT count(*)::INTEGER AS n, sum(w)::DOUBLE AS w FROM '${parquet}' WHERE ${variable.name} = '${value}'::${String(type)}`);
        const cell = await count(ds, valueExpression(variable.name, value));
        expect(cell.respondents, `${variable.name}=${value}`).toBe(expected!.n);
        expect(cell.weighted).toBeCloseTo(Number(expected!.w), 9);
      }
    }
  });

  it('shows decimal values with the digits the file has (0.47, not 0.47000000000000003)', async () => {
    for (const name of ['d4', 'd18', 'd38']) {
      const distinct = await duck(`SELECT DISTINCT ${name}::VARCHAR AS v FROM '${parquet}' WHERE ${name} IS NOT NULL`);
      const written = distinct.map(({ v }) => String(v).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '').replace(/^-0$/, '0'));
      const shown = ds.info.variables.find((variable) => variable.name === name)!.values!.map(({ value }) => value);
      expect(new Set(shown), name).toEqual(new Set(written));
    }
    const [expected] = await duck(`SELECT count(*)::INTEGER AS n FROM '${parquet}' WHERE d4 = 0.47`);
    expect((await count(ds, 'd4=0.47')).respondents).toBe(expected!.n);
  });

  it('answers ranges over decimal columns as DuckDB does', async () => {
    for (const [variable, lo, hi] of [['d4', '-0.13', '0.29'], ['d18', '-12.57', '31.43'], ['d18', '0.01', '0.15'], ['d4', '0.07', '0.07']] as const) {
      const [expected] = await duck(`SELECT count(*)::INTEGER AS n, coalesce(sum(w), 0)::DOUBLE AS w FROM '${parquet}' WHERE ${variable} BETWEEN ${lo} AND ${hi}`);
      const cell = await count(ds, `${variable}=${numberText(Number(lo))}..${numberText(Number(hi))}`);
      expect(cell.respondents, `${variable}=${lo}..${hi}`).toBe(expected!.n);
      expect(cell.weighted).toBeCloseTo(Number(expected!.w), 9);
    }
  });
});

describe('Arrow IPC decimals', () => {
  it('are read as their exact digits: numeric when a float holds them, else text', async () => {
    const rows = 400;
    const words = (values: Array<bigint | null>, bits: number) => {
      const out = new Uint32Array(values.length * (bits / 32));
      values.forEach((value, i) => {
        let word = BigInt.asUintN(bits, value ?? 0n);
        for (let k = 0; k < bits / 32; k++, word >>= 32n) out[i * (bits / 32) + k] = Number(word & 0xffffffffn);
      });
      return out;
    };
    const decimal = (scale: number, bits: number, values: Array<bigint | null>) =>
      makeVector(makeData({ type: new Decimal(scale, 38, bits), length: values.length, nullCount: values.filter((value) => value === null).length, nullBitmap: Uint8Array.from({ length: Math.ceil(values.length / 8) }, (_, byte) => values.slice(byte * 8, byte * 8 + 8).reduce<number>((bits, value, k) => (value === null ? bits : bits | (1 << k)), 0)), data: words(values, bits) } as never));
    const cents = Array.from({ length: rows }, (_, i) => (i % 9 === 0 ? null : BigInt((i % 7) * 19 - 60)));
    const huge = Array.from({ length: rows }, (_, i) => 12345678901234567890123n + BigInt(i % 2));
    const wide = Array.from({ length: rows }, (_, i) => -(10n ** 60n) * BigInt(i % 3) - 25n);
    const table = new Table({ cents: decimal(2, 128, cents), huge: decimal(0, 128, huge), wide: decimal(1, 256, wide), w: vectorFromArray(Array.from({ length: rows }, (_, i) => 1 + (i % 4)), new Float64()) });
    const file = join(dir, 'decimals-arrow.arrow');
    writeFileSync(file, tableToIPC(table, 'file'));
    const report = await buildDataset(file, { weights: ['w'], survey: 'T', out: join(dir, 'decimals-arrow.built.arrow') });
    const ds = await openDataset(join(dir, 'decimals-arrow.built.arrow'));
    try {
      const variable = (name: string) => ds.info.variables.find((candidate) => candidate.name === name)!;
      expect(variable('cents').kind).toBe('numeric');
      expect(variable('cents').values!.map(({ value }) => value)).toEqual(['-0.6', '-0.41', '-0.22', '-0.03', '0.16', '0.35', '0.54']);
      expect(variable('huge').kind).toBe('text');
      expect(variable('huge').values!.map(({ value }) => value)).toEqual(['12345678901234567890123', '12345678901234567890124']);
      expect(variable('wide').values!.map(({ value }) => value).sort()).toEqual(['-100000000000000000000000000000000000000000000000000000000002.5', '-200000000000000000000000000000000000000000000000000000000002.5', '-2.5'].sort());
      expect(report.notes.some((note) => note.startsWith('column huge is text'))).toBe(true);
      for (const [name, values] of [['cents', cents], ['huge', huge]] as const) {
        for (const { value, respondents } of variable(name).values!) {
          const scale = name === 'cents' ? 2 : 0;
          expect(respondents).toBe(values.filter((stored) => stored !== null && decimalText(stored, scale) === value).length);
          expect((await count(ds, valueExpression(name, value))).respondents).toBe(respondents);
        }
      }
      const [expected] = [cents.filter((value) => value !== null && value >= -22n && value <= 35n).length];
      expect((await count(ds, 'cents=-0.22..0.35')).respondents).toBe(expected);
    } finally {
      ds.close();
    }
  });
});

describe('times and timestamps a microsecond or a nanosecond apart', () => {
  it('stay distinct values in Parquet, as DuckDB counts them', async () => {
    const parquet = join(dir, 'instants.parquet');
    await duck(`COPY (SELECT
        CASE WHEN i % 11 = 0 THEN NULL ELSE TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (i % 4) MICROSECOND END AS us,
        TIMESTAMP_NS '1969-12-31 23:59:59.999999' + INTERVAL (i % 3) MICROSECOND AS ns,
        TIME '10:00:00' + INTERVAL (i % 3) MICROSECOND AS tm,
        1.0 + (i % 5) AS w FROM range(600) r(i)) TO '${parquet}' (FORMAT parquet)`);
    await buildDataset(parquet, { weights: ['w'], survey: 'T', out: join(dir, 'instants.arrow') });
    const ds = await openDataset(join(dir, 'instants.arrow'));
    try {
      for (const name of ['us', 'ns']) {
        const expected = await duck(`SELECT count(*)::INTEGER AS n FROM '${parquet}' WHERE ${name} IS NOT NULL GROUP BY ${name} ORDER BY ${name}`);
        const values = ds.info.variables.find((variable) => variable.name === name)!.values!;
        expect(values.map(({ respondents }) => respondents), name).toEqual(expected.map(({ n }) => n));
        for (const { value, respondents } of values) {
          const [duckdb] = await duck(`SELECT count(*)::INTEGER AS n FROM '${parquet}' WHERE ${name} = '${value}'::TIMESTAMP_NS`);
          expect(duckdb!.n, `${name}=${value}`).toBe(respondents);
          expect((await count(ds, valueExpression(name, value))).respondents).toBe(respondents);
        }
      }
      expect(ds.info.variables.find((variable) => variable.name === 'ns')!.values!.map(({ value }) => value)).toEqual(['1969-12-31T23:59:59.999999', '1970-01-01T00:00:00', '1970-01-01T00:00:00.000001']);
      // A time of day as a CSV export writes it, not a count of microseconds.
      const times = await duck(`SELECT tm::VARCHAR AS v, count(*)::INTEGER AS n FROM '${parquet}' GROUP BY 1 ORDER BY 1`);
      expect(ds.info.variables.find((variable) => variable.name === 'tm')!.values).toEqual(times.map(({ v, n }) => ({ value: v, respondents: n })));
    } finally {
      ds.close();
    }
  });

  it('stay distinct values in Arrow IPC, plain and dictionary-encoded, with nulls', async () => {
    const rows = 900;
    const counts = (values: Array<bigint | null>) => [...values.reduce((map, value) => (value === null ? map : map.set(value, (map.get(value) ?? 0) + 1)), new Map<bigint, number>())].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, n]) => n);
    const nanos = Array.from({ length: rows }, (_, i) => (i % 7 === 0 ? null : 1_700_000_000_000_000_000n + BigInt(i % 5) - 2n));
    const micros = Array.from({ length: rows }, (_, i) => -1n - BigInt(i % 3) * 1_000_001n);
    const seconds = Array.from({ length: rows }, (_, i) => 1_700_000_000n + BigInt(i % 2));
    const picks = Array.from({ length: rows }, (_, i) => (i % 10 === 3 ? null : i % 4));
    const dictionary = [5n, 6n, 1_000_000_007n, -3n];
    const column = (type: TimestampNanosecond | TimestampMicrosecond | TimestampSecond, values: Array<bigint | null>) =>
      makeVector(makeData({ type, length: values.length, nullCount: values.filter((value) => value === null).length, nullBitmap: Uint8Array.from({ length: Math.ceil(values.length / 8) }, (_, byte) => values.slice(byte * 8, byte * 8 + 8).reduce<number>((bits, value, k) => (value === null ? bits : bits | (1 << k)), 0)), data: BigInt64Array.from(values, (value) => value ?? 0n) }));
    const dictionaryType = new Dictionary(new TimestampNanosecond(), new Int32());
    // apache-arrow types a dictionary's data as its value type's array; it holds the Int32 indices.
    const encoded = makeVector(makeData<typeof dictionaryType>({ type: dictionaryType, length: rows, nullCount: picks.filter((pick) => pick === null).length, nullBitmap: Uint8Array.from({ length: Math.ceil(rows / 8) }, (_, byte) => picks.slice(byte * 8, byte * 8 + 8).reduce<number>((bits, pick, k) => (pick === null ? bits : bits | (1 << k)), 0)), data: Int32Array.from(picks, (pick) => pick ?? 0), dictionary: column(new TimestampNanosecond(), dictionary) } as never));
    const clock = makeVector(makeData({ type: new TimeMicrosecond(), length: rows, nullCount: 0, data: BigInt64Array.from({ length: rows }, (_, i) => 36_000_000_000n + BigInt(i % 3)) }));
    const millis = makeVector(makeData({ type: new TimeMillisecond(), length: rows, nullCount: 0, data: Int32Array.from({ length: rows }, (_, i) => 86_399_000 + (i % 2) * 999) }));
    const table = new Table({ clock, millis, nanos: column(new TimestampNanosecond(), nanos), micros: column(new TimestampMicrosecond(), micros), seconds: column(new TimestampSecond(), seconds), picked: encoded, w: vectorFromArray(Array.from({ length: rows }, (_, i) => 1 + (i % 3)), new Float64()) });
    const file = join(dir, 'instants-arrow.arrow');
    writeFileSync(file, tableToIPC(table, 'file'));
    await buildDataset(file, { weights: ['w'], survey: 'T', out: join(dir, 'instants-arrow.built.arrow') });
    const ds = await openDataset(join(dir, 'instants-arrow.built.arrow'));
    try {
      const shown = (name: string) => ds.info.variables.find((variable) => variable.name === name)!.values!;
      expect(shown('nanos').map(({ respondents }) => respondents)).toEqual(counts(nanos));
      expect(shown('nanos').map(({ value }) => value)).toEqual(['2023-11-14T22:13:19.999999998', '2023-11-14T22:13:19.999999999', '2023-11-14T22:13:20', '2023-11-14T22:13:20.000000001', '2023-11-14T22:13:20.000000002']);
      expect(shown('micros').map(({ value }) => value)).toEqual(['1969-12-31T23:59:57.999997', '1969-12-31T23:59:58.999998', '1969-12-31T23:59:59.999999']);
      expect(shown('micros').map(({ respondents }) => respondents)).toEqual(counts(micros));
      expect(shown('seconds').map(({ value }) => value)).toEqual(['2023-11-14T22:13:20', '2023-11-14T22:13:21']);
      expect(shown('clock').map(({ value }) => value)).toEqual(['10:00:00', '10:00:00.000001', '10:00:00.000002']);
      expect(shown('millis').map(({ value }) => value)).toEqual(['23:59:59', '23:59:59.999']);
      expect(shown('picked').map(({ value }) => value)).toEqual(['1969-12-31T23:59:59.999999997', '1970-01-01T00:00:00.000000005', '1970-01-01T00:00:00.000000006', '1970-01-01T00:00:01.000000007']);
      expect(shown('picked').map(({ respondents }) => respondents)).toEqual(counts(picks.map((pick) => (pick === null ? null : dictionary[pick]!))));
      for (const name of ['nanos', 'micros', 'picked']) {
        for (const { value, respondents } of shown(name)) expect((await count(ds, valueExpression(name, value))).respondents).toBe(respondents);
      }
    } finally {
      ds.close();
    }
  });
});

describe('a dataset an earlier build made with such a numeric variable', () => {
  it('is refused when opened, with a hint to build it again; a build under the collision rule opens', () => {
    const variable: StoredVariable = { name: 'big', kind: 'numeric', group: '_ALL_', values: ['12', '9007199254740993'], counts: [1, 2], missing: 0, index: 0 };
    let error: CrosstabError | undefined;
    try {
      new Resolver({ variables: [variable], codes: [] });
    } catch (caught) {
      error = caught as CrosstabError;
    }
    expect(error?.code).toBe('unsupported_version');
    expect(error?.message).toContain('9007199254740993');
    expect(error?.details.hint).toContain('Build the dataset again');
    expect(() => new Resolver({ variables: [{ ...variable, values: ['12', '9007199254740992'] }], codes: [] })).not.toThrow();
    // Recorded by the build: each value stands for its float alone.
    expect(() => new Resolver({ variables: [variable], codes: [], numberRule: 'float-collisions' })).not.toThrow();
  });
});

describe('decimal text', () => {
  it('writes unscaled integers at a scale as the exact decimal (checked in BigInt arithmetic)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), fc.integer({ min: 0, max: 38 }), (unscaled, scale) => {
        const text = decimalText(unscaled, scale);
        expect(text).toMatch(/^-?(0|[1-9]\d*)(\.\d*[1-9])?$/);
        const [whole, fraction = ''] = text.replace('-', '').split('.');
        const magnitude = BigInt(whole! + fraction) * 10n ** BigInt(scale - fraction.length);
        expect(text.startsWith('-') ? -magnitude : magnitude).toBe(unscaled);
      }),
      { numRuns: 500, seed: 26 },
    );
  });

  it('says a float holds a number exactly when the BigInt check says so', () => {
    const texts = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
      fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }).map(String),
      fc.tuple(fc.bigInt({ min: -(10n ** 19n), max: 10n ** 19n }), fc.integer({ min: -340, max: 330 })).map(([digits, power]) => `${digits}e${power}`),
      fc.tuple(fc.nat(99999), fc.stringMatching(/^\d{1,22}$/)).map(([whole, fraction]) => `${whole}.${fraction}`),
    );
    fc.assert(
      fc.property(texts, (text) => {
        expect(fitsFloat64(text), text).toBe(floatExact(text));
      }),
      { numRuns: 2000, seed: 26 },
    );
  });
});
