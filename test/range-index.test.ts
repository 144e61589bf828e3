// The range index (a stored bitset per value of a numeric variable: respondents of that
// value or more): every range, value list and blank answered from it must be the very
// respondents and sums of the same dataset built without it, and of the naive reference.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileDataset } from '../src/dataset/build/compile.js';
import { loadDataset } from '../src/dataset/file/reader.js';
import { openDataset, type Dataset } from '../src/facade/dataset.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { Evaluator } from '../src/query/evaluate.js';
import { Resolver } from '../src/query/resolve.js';
import type { Expr } from '../src/query/ast.js';
import { datasetArb, exprArb, present } from './support/random-data.js';
import { toText } from './support/expression-text.js';
import { rawTable, writeMadeDataset } from './support/make-dataset.js';
import { referenceTable, type ReferenceTable } from './support/reference-engine.js';
import { seededRandom } from './support/large-dataset.js';
import { cliPath, gssCsv } from './support/paths.js';

type Sums = { respondents: number; weighted: number; sumSqWeights: number };

function close(actual: Sums, want: Sums): void {
  expect(actual.respondents).toBe(want.respondents);
  expect(Math.abs(actual.weighted - want.weighted)).toBeLessThanOrEqual(1e-9 * Math.max(1, want.weighted));
  expect(Math.abs(actual.sumSqWeights - want.sumSqWeights)).toBeLessThanOrEqual(1e-9 * Math.max(1, want.sumSqWeights));
}

function same(a: Sums, b: Sums): void {
  expect([a.respondents, a.weighted, a.sumSqWeights]).toEqual([b.respondents, b.weighted, b.sumSqWeights]);
}

// 70,001 respondents (1,094 bitset words, the last one partly used): an age with blanks, some
// of its values written as exponents or with a decimal point ("1e1" and "10.0" are 10), hours
// with 99 values (more than are ORed value by value), a 3-valued variable.
const ROWS = 70_001;
function mediumData() {
  const next = seededRandom(7);
  const columns: Record<string, string[]> = { age: [], hours: [], kids: [] };
  const weights: number[] = [];
  for (let row = 0; row < ROWS; row++) {
    const age = Math.floor(next() * 100);
    const form = next();
    columns.age!.push(next() < 0.03 ? '' : form < 0.05 && age > 0 ? age.toExponential() : form < 0.1 ? `${age}.0` : String(age));
    columns.hours!.push(next() < 0.4 ? '' : String(Math.floor(next() * 99)));
    columns.kids!.push(String(Math.floor(next() * 3)));
    weights.push(next() < 0.5 ? Math.round(next() * 2300) : next() * 900);
  }
  return { columns, weights };
}

describe('range index: the same respondents as the index-column scan and the reference', () => {
  const data = mediumData();
  const table: ReferenceTable = { columns: data.columns, weights: data.weights, numeric: new Set(['age', 'hours', 'kids']) };
  const values = { age: ['0', '1', '17', '18', '1e1', '34.0', '65', '99'], hours: ['0', '35', '40', '98'], kids: present(data.columns.kids!) };
  const opened: Record<string, Dataset> = {};
  let indexedPath = '';

  beforeAll(async () => {
    indexedPath = await writeMadeDataset(data.columns, data.weights, undefined, { rangeIndex: ['age', 'hours', 'kids'] });
    const plainPath = await writeMadeDataset(data.columns, data.weights);
    for (const execution of ['inline', 'pool'] as const) {
      opened[`indexed-${execution}`] = await openDataset(indexedPath, { execution, cellCache: 0 });
      opened[`plain-${execution}`] = await openDataset(plainPath, { execution, cellCache: 0 });
    }
  });
  afterAll(() => Object.values(opened).forEach((ds) => ds.close()));

  it('builds a range from its stored bitsets: one bitset as it is, two by AND NOT, no scan', async () => {
    const kernel = mainThreadKernel();
    const loaded = await loadDataset(indexedPath, kernel);
    const evaluator = new Evaluator(kernel, loaded);
    try {
      const resolver = new Resolver(loaded.meta);
      const age = loaded.meta.variables.find((variable) => variable.name === 'age')!;
      expect(age.atLeast).toHaveLength(age.values.length);
      const open = resolver.resolve('age=18..').bound;
      expect(open.op).toBe('range');
      if (open.op !== 'range') return;
      expect(evaluator.rangeBuild(open)).toBe('index');
      const view = evaluator.dense(open);
      // The stored bitset of "18 or more", not a copy of it.
      expect(view).toEqual({ ptr: loaded.buffer(age.atLeast![open.lo - 1]!).ptr, owned: false });
      const band = resolver.resolve('age=18..34').bound;
      if (band.op !== 'range') throw new Error(`age=18..34 bound as ${band.op}`);
      expect(evaluator.rangeBuild(band)).toBe('index');
    } finally {
      evaluator.dispose();
      loaded.close();
    }
  });

  it('info names the indexed variables, and only those', () => {
    const info = opened['indexed-inline']!.info;
    expect(info.variables.filter((v) => v.rangeIndex === true).map((v) => v.name).sort()).toEqual(['age', 'hours', 'kids']);
    expect(opened['plain-inline']!.info.variables.some((v) => v.rangeIndex !== undefined)).toBe(false);
  });

  for (const execution of ['inline', 'pool'] as const) {
    it(`${execution}: crosstab cells equal the scan's to the last bit and the reference's`, async () => {
      const expr = exprArb(values, new Set(['age', 'hours', 'kids']));
      await fc.assert(
        fc.asyncProperty(expr, fc.array(expr, { minLength: 1, maxLength: 5 }), async (base, targets) => {
          const query = { base: toText(base), targets: targets.map(toText) };
          const indexed = await opened[`indexed-${execution}`]!.crosstab(query);
          const plain = await opened[`plain-${execution}`]!.crosstab(query);
          same(indexed.base, plain.base);
          indexed.targets.forEach((cell, i) => same(cell, plain.targets[i]!));
          const expected = referenceTable(table, base, [{ all: true }], targets);
          close(indexed.base, expected.total);
          indexed.targets.forEach((cell, i) => close(cell, expected.cells[i]!));
        }),
        { numRuns: 40 },
      );
    });

    it(`${execution}: tables of ranges and value lists equal the scan's to the last bit and the reference's`, async () => {
      const expr = exprArb(values, new Set(['age', 'hours', 'kids']));
      // Long value lists and bands of one variable, the shapes a banner of age groups has.
      const bands = fc.array(fc.tuple(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 40 })), { minLength: 1, maxLength: 6 }).map((pairs) =>
        pairs.map(([lo, width]) => (width % 3 === 0 ? ({ var: 'age', in: Array.from({ length: Math.min(width + 1, 30, 100 - lo) }, (_, i) => String(lo + i)) } as Expr) : ({ var: 'age', min: String(lo), max: String(lo + width) } as Expr))),
      );
      await fc.assert(
        fc.asyncProperty(expr, fc.oneof(bands, fc.array(expr, { minLength: 1, maxLength: 4 })), fc.array(expr, { minLength: 1, maxLength: 4 }), async (base, rows, columns) => {
          const query = { base: toText(base), rows: rows.map(toText), columns: columns.map(toText) };
          const indexed = await opened[`indexed-${execution}`]!.table(query);
          const plain = await opened[`plain-${execution}`]!.table(query);
          expect(indexed.execution).toBe(execution);
          const expected = referenceTable(table, base, rows, columns);
          rows.forEach((_, r) => {
            same(indexed.rowTotals[r]!, plain.rowTotals[r]!);
            close(indexed.rowTotals[r]!, expected.rowTotals[r]!);
            columns.forEach((_, c) => {
              same(indexed.cell(r, c), plain.cell(r, c));
              close(indexed.cell(r, c), expected.cells[r * columns.length + c]!);
            });
          });
          columns.forEach((_, c) => same(indexed.columnTotals[c]!, plain.columnTotals[c]!));
          same(indexed.total, plain.total);
        }),
        { numRuns: 25 },
      );
    });
  }
});

describe('range index on small random data', () => {
  it('every cell matches the reference, blanks and one-word datasets included', async () => {
    await fc.assert(
      fc.asyncProperty(
        datasetArb.chain((data) => {
          const columns = { num1: data.num1, num2: data.num2, txt: data.txt };
          return fc.tuple(fc.constant(data), exprArb(columns), fc.array(exprArb(columns), { minLength: 1, maxLength: 4 }));
        }),
        async ([data, base, targets]) => {
          const columns = { num1: data.num1, num2: data.num2, txt: data.txt };
          const indexed = ['num1', 'num2'].filter((name) => present(columns[name as 'num1' | 'num2']).length > 0);
          const ds = await openDataset(await writeMadeDataset(columns, data.weights, undefined, { rangeIndex: indexed }), { cellCache: 0 });
          try {
            expect(ds.info.variables.filter((v) => v.rangeIndex === true).map((v) => v.name)).toEqual(indexed);
            const result = await ds.crosstab({ base: toText(base), targets: targets.map(toText) });
            const expected = referenceTable({ columns, weights: data.weights, numeric: new Set(['num1', 'num2']) }, base, [{ all: true }], targets);
            close(result.base, expected.total);
            result.targets.forEach((cell, i) => close(cell, expected.cells[i]!));
          } finally {
            ds.close();
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('range index: refused where it cannot be built, naming the option and the column', () => {
  const columns = { age: ['1', '2', '3', ''], name: ['a', 'b', 'c', 'd'], id: ['1', '2', '3', '4'] };
  const compile = (rangeIndex: string[], extra: Record<string, string[]> = {}) => () => compileDataset(rawTable({ ...columns, ...extra }, [1, 1, 1, 1]), { survey: 'T', rangeIndex });

  it('a text column', () => {
    expect(compile(['name'])).toThrow(expect.objectContaining({ code: 'invalid_option', details: expect.objectContaining({ field: 'rangeIndex' }), message: expect.stringContaining('"name" holds text') }));
  });
  it('a name that is no column', () => {
    expect(compile(['agep'])).toThrow(expect.objectContaining({ code: 'invalid_option', details: expect.objectContaining({ field: 'rangeIndex' }), message: expect.stringContaining('"agep" is not a column of the input') }));
  });
  it('more values than a range index takes', () => {
    const wide = Array.from({ length: 300 }, (_, i) => String(i));
    const rows = wide.length;
    expect(() => compileDataset(rawTable({ wide }, new Array<number>(rows).fill(1)), { survey: 'T', rangeIndex: ['wide'] })).toThrow(
      expect.objectContaining({ code: 'invalid_option', details: expect.objectContaining({ field: 'rangeIndex' }), message: expect.stringContaining('"wide" has 300 distinct values, more than the 256') }),
    );
  });
});

describe('crosstab build --range-index', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-range-index-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = (...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', timeout: 60_000 });

  it('builds the index, and info lists it; the answers are those of the build without it', () => {
    const indexed = join(dir, 'gss-indexed.arrow');
    const plain = join(dir, 'gss-plain.arrow');
    const built = run('build', gssCsv, '--weight', 'wtssps', '--survey', 'GSS', '--range-index', 'age, year', '--quiet', '--out', indexed);
    expect(built.stderr).toBe('');
    expect(built.status).toBe(0);
    expect(run('build', gssCsv, '--weight', 'wtssps', '--survey', 'GSS', '--range-index', 'none', '--quiet', '--out', plain).status).toBe(0);
    const info = run('info', indexed);
    expect(info.stdout).toMatch(/^range index \(a range of values reads stored bitsets, no scan\): year, age$/m);
    expect(run('info', plain).stdout).not.toContain('range index');
    const targets = ['age=18..34', 'age=65..', 'year=2000..2010', 'age=NA', 'age=18,19,20,21,30,31,32', 'not age=..40'].flatMap((target) => ['--target', target]);
    const a = run('query', indexed, '--base', 'age=18..', ...targets, '--json');
    const b = run('query', plain, '--base', 'age=18..', ...targets, '--json');
    expect(a.stderr).toBe('');
    expect(JSON.parse(a.stdout)).toEqual(JSON.parse(b.stdout));
  });

  it('a text column is refused, naming the flag, and nothing is written', () => {
    const out = join(dir, 'refused.arrow');
    const result = run('build', gssCsv, '--weight', 'wtssps', '--survey', 'GSS', '--range-index', 'age,nosuch', '--out', out);
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('--range-index');
    expect(result.stderr).toContain('"nosuch" is not a column of the input');
    expect(existsSync(out)).toBe(false);
  });
});
