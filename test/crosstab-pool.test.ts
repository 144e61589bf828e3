// crosstab() on the worker pool: the same cells as the inline path to the last bit, on
// random data (odd variable names, exponent values, rare values kept as sparse lists) and
// random bases and targets (long OR chains, NOT, ranges), rejections included; calls racing
// close() on every execution mode; and an abort that stops the work on the workers.
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { CrosstabError, ErrorCode, openDataset, type CrosstabResult, type Dataset } from '../src/index.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import type { Expr } from '../src/query/ast.js';
import { toText } from './support/expression-text.js';
import { writeMadeDataset } from './support/make-dataset.js';
import { closeFaultPool, failNextPoolTask, useFaultPool } from './support/pool-faults.js';
import { programsRun, useCountingPool } from './support/pool-counts.js';
import { engineWeight, present } from './support/random-data.js';

/** Names the grammar must quote (spaces, a keyword, a quote, non-ASCII, a range-looking one). */
const NAMES = { number: 'n ümber', keyword: 'or', text: 'say "hi"', rare: '1..2', plain: 'p_2' } as const;
/** Numbers written with exponents, which must resolve to the same values as plain ones. */
const NUMBERS = ['1e3', '2.5E-2', '-4e-1', '1e+2', '0', '7', '3.25', '1000'];
const TEXTS = ['a', 'b', 'x y', 'NA ', 'é', '06', 'a,b'];

type Columns = Record<string, string[]>;

const dataArb = fc.integer({ min: 150, max: 2_500 }).chain((rows) => {
  const column = (values: fc.Arbitrary<string>) => fc.array(values, { minLength: rows, maxLength: rows });
  return fc.record({
    columns: fc.record({
      [NAMES.number]: column(fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 6, arbitrary: fc.constantFrom(...NUMBERS) })),
      [NAMES.keyword]: column(fc.integer({ min: 0, max: 40 }).map(String)),
      [NAMES.text]: column(fc.oneof(fc.constant(''), fc.constantFrom(...TEXTS))),
      // Mostly blank: its values have a few respondents each, stored as sparse lists.
      [NAMES.rare]: column(fc.oneof({ weight: 40, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('r1', 'r2', 'r3') })),
      [NAMES.plain]: column(fc.constantFrom('1', '2', '3')),
    }),
    weights: fc.array(fc.oneof(engineWeight(1e6, 5000), fc.double({ min: 1e-9, max: 1, noNaN: true })), { minLength: rows, maxLength: rows }),
  });
});

function leafArb(columns: Columns): fc.Arbitrary<Expr> {
  const leaves: Array<fc.Arbitrary<Expr>> = [fc.constant({ all: true } as Expr)];
  for (const [name, values] of Object.entries(columns)) {
    const seen = present(values);
    if (seen.length === 0) continue;
    leaves.push(fc.constant({ var: name, missing: true } as Expr));
    leaves.push(fc.subarray(seen, { minLength: 1, maxLength: Math.min(4, seen.length) }).map((list) => ({ var: name, in: list }) as Expr));
    leaves.push(fc.constantFrom(...seen).map((value) => ({ var: name, in: [value] }) as Expr));
  }
  const bound = fc.constantFrom('-1e1', '0', '2.5e-2', '1e2', '5', '1E3');
  leaves.push(
    fc.tuple(bound, bound).map(([a, b]) => (Number(a) <= Number(b) ? { var: NAMES.number, min: a, max: b } : { var: NAMES.number, min: b, max: a }) as Expr),
    fc.integer({ min: 0, max: 40 }).map((lo) => ({ var: NAMES.keyword, min: String(lo) }) as Expr),
  );
  // Now and then a misspelt name: the call rejects (unknown_variable), the same on both paths.
  return fc.oneof({ weight: leaves.length * 30, arbitrary: fc.oneof(...leaves) }, { weight: 1, arbitrary: fc.constant({ var: 'n ümbr', in: ['1e3'] } as Expr) });
}

function exprArb(columns: Columns): fc.Arbitrary<Expr> {
  const leaf = leafArb(columns);
  return fc.oneof(
    leaf,
    leaf.map((inner) => ({ not: inner }) as Expr),
    fc.array(leaf, { minLength: 2, maxLength: 3 }).map((items) => ({ and: items }) as Expr),
    // Long OR chains: many bitsets built and ORed into one.
    fc.array(leaf, { minLength: 5, maxLength: 40 }).map((items) => ({ or: items }) as Expr),
    fc.tuple(leaf, fc.array(leaf, { minLength: 2, maxLength: 12 })).map(([first, rest]) => ({ and: [first, { not: { or: rest } }] }) as Expr),
  );
}

const caseArb = dataArb.chain((data) =>
  fc.tuple(
    fc.constant(data),
    fc.array(fc.tuple(exprArb(data.columns), fc.array(exprArb(data.columns), { minLength: 1, maxLength: 150 })), { minLength: 1, maxLength: 4 }),
  ),
);

type Outcome = { value: CrosstabResult } | { code: string; message: string };

async function outcome(call: Promise<CrosstabResult>): Promise<Outcome> {
  try {
    return { value: await call };
  } catch (error) {
    expect(error, `not a CrosstabError: ${String((error as Error)?.stack ?? error)}`).toBeInstanceOf(CrosstabError);
    return { code: (error as CrosstabError).code, message: (error as CrosstabError).message };
  }
}

describe('crosstab() on the pool equals crosstab() inline', () => {
  it('cell for cell on random data and random bases and targets, rejections included', async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, async ([data, queries]) => {
        const path = await writeMadeDataset(data.columns, data.weights);
        const inline = await openDataset(path, { execution: 'inline', cellCache: 0 });
        const pool = await openDataset(path, { execution: 'pool', cellCache: 0 });
        try {
          for (const [base, targets] of queries) {
            const query = { base: toText(base), targets: targets.map(toText) };
            // Both at once on the pool dataset: its programs overlap on the workers.
            const [want, got, again] = await Promise.all([outcome(inline.crosstab(query)), outcome(pool.crosstab(query)), outcome(pool.crosstab(query))]);
            expect(got).toEqual(want);
            expect(again).toEqual(want);
            if ('value' in want) answered++;
          }
        } finally {
          await inline.close();
          await pool.close();
        }
      }),
      { numRuns: 40 },
    );
    expect(answered).toBeGreaterThan(0);
  });
});

const large = () => inject('testDatasets').large;
/** Targets of every kind: index ranges, values ANDed, a rare value's list OR a code. */
const targets = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? `mid=${i % 300}..${(i % 300) + 40}` : i % 3 === 1 ? `cat=${'ABCDE'[i % 5]} AND big=${i * 20}..` : `rare=${1 + (i % 3)}`));

describe.each(['inline', 'pool', 'auto'] as const)('%s: crosstab() calls racing close()', (execution) => {
  let reference: Dataset;
  beforeAll(async () => {
    reference = await openDataset(large(), { execution: 'inline', cellCache: 0 });
  });
  afterAll(() => reference.close());

  it.each([0, 1, 3, 10, 30])('closed after %i ms with 12 calls in flight: each exact or dataset_closed, and all kernel memory given back', async (delay) => {
    const queries = Array.from({ length: 12 }, (_, i) => ({ base: i % 2 ? `cat=${'ABCDE'[i % 5]}` : 'NOT rare=1', targets: targets.slice(i * 7, i * 7 + (i % 3 === 0 ? 200 : 3)) }));
    const want = await Promise.all(queries.map((query) => reference.crosstab(query)));
    const memory = mainThreadKernel().memory;
    const before = memory.allocatedBytes;
    const ds = await openDataset(large(), { execution, cellCache: 0 });
    const settled = queries.map((query) => outcome(ds.crosstab(query)));
    await new Promise((resolve) => setTimeout(resolve, delay));
    await ds.close();
    const results = await Promise.all(settled);
    results.forEach((result, i) => {
      if ('value' in result) expect(result.value).toEqual(want[i]);
      else expect(result.code).toBe(ErrorCode.closed);
    });
    expect(memory.allocatedBytes).toBe(before);
  });
});

describe('the pool path really runs on the workers', () => {
  afterEach(() => closeFaultPool());

  it.each(['pool', 'auto'] as const)('%s: a worker dying under a call rejects it with worker_failed (a CrosstabError), and the next call is exact', async (execution) => {
    await useFaultPool();
    const ds = await openDataset(large(), { execution, cellCache: 0 });
    const reference = await openDataset(large(), { execution: 'inline', cellCache: 0 });
    try {
      failNextPoolTask();
      // Eight at once: `auto` sends small calls to the pool while others are in flight.
      const query = (i: number) => ({ base: `cat=${'ABCDE'[i % 5]}`, targets: [`mid=${i}..${i + 30}`, 'rare=2'] });
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => outcome(ds.crosstab(query(i)))));
      // One worker exits; the call whose program it held rejects. Every call that resolved is exact.
      const shown = JSON.stringify(results.map((result) => ('code' in result ? { code: result.code, message: result.message } : 'answered')));
      const failed = results.filter((result) => 'code' in result);
      expect(failed.length, shown).toBeGreaterThanOrEqual(1);
      expect(new Set(failed.map((result) => ('code' in result ? result.code : ''))), shown).toEqual(new Set([ErrorCode.workerFailed]));
      for (let i = 0; i < 8; i++) {
        const result = results[i]!;
        if ('value' in result) expect(result.value, shown).toEqual(await reference.crosstab(query(i)));
      }
      for (let i = 0; i < 8; i++) expect(await ds.crosstab(query(i))).toEqual(await reference.crosstab(query(i)));
    } finally {
      await ds.close();
      await reference.close();
    }
  });

  it('an abort stops the call on the workers: the programs still to run do not run, and the call rejects with cancelled', async () => {
    await useCountingPool();
    const ds = await openDataset(large(), { execution: 'pool', cellCache: 0 });
    try {
      const many = Array.from({ length: 5_000 }, (_, i) => `big=${i % 6000}..${(i % 6000) + 500}`);
      const full = Math.ceil((many.length + 1) / 64);
      const controller = new AbortController();
      let settled = false;
      const call = outcome(ds.crosstab({ base: 'cat=A,B', targets: many, signal: controller.signal })).finally(() => (settled = true));
      // Abort once the first program has run on a worker.
      while (programsRun() === 0 && !settled) await new Promise((resolve) => setTimeout(resolve, 1));
      controller.abort();
      expect(await call).toMatchObject({ code: ErrorCode.cancelled });
      await ds.close();
      expect(programsRun()).toBeGreaterThan(0);
      expect(programsRun()).toBeLessThan(full);
    } finally {
      await ds.close();
    }
  });
});
