// The cell cache of crosstab(): a repeated query (or a query repeating some cells) is answered
// from memory. The answers must be the kernel's to the last bit, the authorization checks must
// still run for every call, and the cache must actually be used (counted at the engine).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../src/facade/dataset.js';
import { ErrorCode } from '../src/errors.js';
import { SLICE_MS } from '../src/query/executor.js';
import { seededRandom } from './support/large-dataset.js';

const EXPRESSIONS = ['*', 'big=100..2000', 'cat=A', 'big=3500', 'mid=1..299', 'NOT big=NA', 'big=NA', 'mid=7', 'rare=2', 'rare=1,3', 'cat=B,C OR mid=..20', 'zip=00007,00011', 'NOT (cat=E AND mid=150..)'];

/** After the event loop's next check phase: a new slice of the calling thread begins (checkpoint()). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Counts the engine's cells() calls of a dataset: the real engine still answers. */
function countEngineCalls(dataset: Dataset): { calls: number } {
  const engine = (dataset as unknown as { engine: { cells: (...args: unknown[]) => Promise<unknown> } }).engine;
  const counter = { calls: 0 };
  const cells = engine.cells.bind(engine);
  engine.cells = (...args: unknown[]) => {
    counter.calls++;
    return cells(...args);
  };
  return counter;
}

describe('crosstab() cell cache', () => {
  let cached: Dataset;
  let uncached: Dataset;
  let small: Dataset;
  beforeAll(async () => {
    const path = inject('testDatasets').large;
    [cached, uncached, small] = await Promise.all([openDataset(path), openDataset(path, { cellCache: 0 }), openDataset(path, { cellCache: 3 })]);
  });
  afterAll(() => {
    for (const dataset of [cached, uncached, small]) dataset?.close();
  });

  it('answers repeated and overlapping queries exactly as the kernel does', async () => {
    const random = seededRandom(20261123);
    const pick = () => EXPRESSIONS[Math.floor(random() * EXPRESSIONS.length)]!;
    const counter = countEngineCalls(cached);
    let calls = 0;
    for (let i = 0; i < 400; i++) {
      const query = { base: pick(), targets: Array.from({ length: 1 + Math.floor(random() * 3) }, pick) };
      const expected = await uncached.crosstab(query);
      // Every query twice: the second is a whole hit.
      expect(await cached.crosstab(query)).toEqual(expected);
      expect(await cached.crosstab(query)).toEqual(expected);
      expect(await small.crosstab(query)).toEqual(expected);
      calls += 2;
    }
    // 13 bases x 13 targets: after the first few hundred queries most cells are known.
    expect(counter.calls).toBeLessThan(calls / 2);
  });

  it('computes only when a cell is missing, and keeps at most cellCache cells', async () => {
    const dataset = await openDataset(inject('testDatasets').large, { cellCache: 4 });
    try {
      const counter = countEngineCalls(dataset);
      await dataset.crosstab({ base: 'cat=A', targets: ['mid=7'] });
      await dataset.crosstab({ base: 'cat=A', targets: ['mid=7'] });
      expect(counter.calls).toBe(1);
      // A new target on a known base: computed; then both targets are known, in either order.
      await dataset.crosstab({ base: 'cat=A', targets: ['mid=7', 'rare=2'] });
      await dataset.crosstab({ base: 'cat=A', targets: ['rare=2', 'mid=7'] });
      expect(counter.calls).toBe(2);
      // The same target text under another weight or base is another cell.
      await dataset.crosstab({ base: 'cat=B', targets: ['mid=7'] });
      expect(counter.calls).toBe(3);
      // Four cells at most: cat=B's two cells pushed cat=A's three out.
      await dataset.crosstab({ base: 'cat=A', targets: ['mid=7'] });
      expect(counter.calls).toBe(4);
    } finally {
      dataset.close();
    }
  });

  it('still refuses an expression outside allowedGroups after the same text was answered', async () => {
    const gss = await openDataset(inject('testDatasets').gss);
    try {
      const variable = gss.info.variables.find((v) => v.name === 'degree')!;
      const others = gss.info.groups.filter((group) => group !== variable.group);
      expect(others.length).toBeGreaterThan(0);
      const query = { base: '*', targets: ['degree=3..4'] };
      const answer = await gss.crosstab(query);
      expect(await gss.crosstab({ ...query, allowedGroups: [variable.group] })).toEqual(answer);
      await expect(gss.crosstab({ ...query, allowedGroups: others })).rejects.toMatchObject({ code: ErrorCode.unknownVariable, details: { field: 'targets[0]' } });
    } finally {
      gss.close();
    }
  });

  it('crosstabNow() answers a whole hit at once, without a promise, and anything else as crosstab() does', async () => {
    const dataset = await openDataset(inject('testDatasets').large);
    try {
      const counter = countEngineCalls(dataset);
      const query = { base: 'cat=A', targets: ['mid=7', 'rare=2'] };
      const expected = await uncached.crosstab(query);
      // A miss: the engine's promise.
      const missed = dataset.crosstabNow(query);
      expect(missed).toBeInstanceOf(Promise);
      expect(await missed).toEqual(expected);
      expect(dataset.cacheStats()).toMatchObject({ hits: 0, misses: 1 });
      // A whole hit: the result itself, the kernel's to the last bit, counted as a hit (in a
      // slice of its own: the miss's work may have spent the one it ran in).
      await nextTurn();
      const hit = dataset.crosstabNow(query);
      expect(hit).not.toBeInstanceOf(Promise);
      expect(hit).toEqual(expected);
      expect(dataset.cacheStats()).toMatchObject({ hits: 1, misses: 1 });
      // crosstab() of a hit is the same answer as a promise.
      const promised = dataset.crosstab(query);
      expect(promised).toBeInstanceOf(Promise);
      expect(await promised).toEqual(expected);
      // A target not cached yet: a promise again.
      const partly = dataset.crosstabNow({ base: 'cat=A', targets: ['mid=7', 'big=3500'] });
      expect(partly).toBeInstanceOf(Promise);
      await partly;
      expect(counter.calls).toBe(2);
      // Failures are rejections, never throws: an expression outside allowedGroups, a bad query.
      const refused = dataset.crosstabNow({ ...query, allowedGroups: ['no such group'] });
      expect(refused).toBeInstanceOf(Promise);
      await expect(refused).rejects.toMatchObject({ code: ErrorCode.unknownVariable });
      await expect(dataset.crosstabNow({ base: 'cat=A' } as never)).rejects.toMatchObject({ code: ErrorCode.invalidOption });
      const aborted = new AbortController();
      aborted.abort();
      await expect(dataset.crosstabNow({ ...query, signal: aborted.signal })).rejects.toMatchObject({ code: ErrorCode.cancelled });
      // Past the calling thread's slice, a hit waits for the event loop's turn like any other piece of work.
      const until = performance.now() + SLICE_MS * 2;
      while (performance.now() < until);
      const late = dataset.crosstabNow(query);
      expect(late).toBeInstanceOf(Promise);
      expect(await late).toEqual(expected);
      // A closed dataset: rejected with dataset_closed.
      await dataset.close();
      await expect(dataset.crosstabNow(query)).rejects.toMatchObject({ code: ErrorCode.closed });
    } finally {
      dataset.close();
    }
  });

  it('rejects a cellCache that is not a whole number of cells', async () => {
    for (const cellCache of [-1, 1.5, Number.NaN, '10' as unknown as number]) {
      await expect(openDataset(inject('testDatasets').large, { cellCache })).rejects.toMatchObject({ code: ErrorCode.invalidOption, details: { field: 'cellCache' } });
    }
  });
});
