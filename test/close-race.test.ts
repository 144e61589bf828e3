// close() while calls are in flight: a closed dataset's calls reject with dataset_closed (or
// resolve exactly right), and nothing the closed dataset still had running touches the kernel
// memory another dataset, opened afterwards in the same process, now computes in.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { closePool, CrosstabError, ErrorCode, openDataset, type CrosstabResult, type Dataset, type TableQuery, type TableResult } from '../src/index.js';

/** An expression table: `mid=a,b` rows by `big=lo..hi` ranges (the bitset plan, in many tasks). */
function expressionTable(rows: number, columns: number, base = '*'): TableQuery {
  return {
    base,
    rows: Array.from({ length: rows }, (_, i) => `mid=${i % 300},${(i * 7 + 3) % 300}`),
    columns: Array.from({ length: columns }, (_, i) => `big=${i * 100}..${i * 100 + 300}`),
  };
}

/** The figures of a table, without its functions, for toEqual. */
function figures(table: TableResult) {
  return {
    weighted: [...table.weighted],
    respondents: [...table.respondents],
    sumSqWeights: [...table.sumSqWeights],
    rowTotals: table.rowTotals,
    columnTotals: table.columnTotals,
    total: table.total,
  };
}

async function outcome<T>(promise: Promise<T>): Promise<{ value: T } | { error: unknown }> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

function expectClosed(error: unknown): void {
  expect(error).toBeInstanceOf(CrosstabError);
  expect((error as CrosstabError).code).toBe(ErrorCode.closed);
}

let reference: Dataset;
const large = () => inject('testDatasets').large;

beforeAll(async () => {
  reference = await openDataset(large(), { execution: 'inline', cellCache: 0 });
});
afterAll(() => reference.close());

describe('a dataset closed while its pool table() runs', () => {
  it.each([0, 5, 20, 50, 100])('does not change a table computed meanwhile on a dataset opened afterwards (close after %i ms)', async (delay) => {
    const query = expressionTable(100, 60, 'cat=B');
    const expected = figures(await reference.table(query));

    const closing = await openDataset(large(), { execution: 'pool' });
    const running = outcome(closing.table(expressionTable(400, 60)));
    await new Promise((resolve) => setTimeout(resolve, delay));
    void closing.close();
    const opened = await openDataset(large(), { execution: 'pool' });
    try {
      const [late, table] = await Promise.all([running, opened.table(query)]);
      expect(figures(table)).toEqual(expected);
      if ('error' in late) expectClosed(late.error);
      else expect(figures(late.value)).toEqual(figures(await reference.table(expressionTable(400, 60))));
    } finally {
      await opened.close();
    }
  });
});

/** The calls a host makes, each with the query that a fresh inline dataset answers too. */
const targets = Array.from({ length: 120 }, (_, i) => (i % 3 === 0 ? `mid=${i}..${i + 40}` : i % 3 === 1 ? `cat=${'ABCDE'[i % 5]} AND big=${i * 50}..` : `rare=${1 + (i % 3)} OR zip=${String(i % 40).padStart(5, '0')}`));
const calls = {
  crosstab: { run: (ds: Dataset, extra = {}) => ds.crosstab({ base: 'cat=A,C', targets, ...extra }), check: (r: CrosstabResult) => r },
  'expression table': { run: (ds: Dataset, extra = {}) => ds.table({ ...expressionTable(160, 40, 'big=100..'), ...extra }), check: figures },
  'group-by table': { run: (ds: Dataset, extra = {}) => ds.table({ base: 'NOT cat=E', rows: [{ variable: 'mid' }], columns: [{ variable: 'cat' }, { variable: 'rare' }], ...extra }), check: figures },
} as const;
type Kind = keyof typeof calls;

/** When close() comes, relative to the call. */
const moments = ['before', 'same tick', 'microtask', 'setImmediate', 'first progress', '1 ms', '10 ms', '40 ms', 'after'] as const;
type Moment = (typeof moments)[number];

const expectedOf = new Map<Kind, unknown>();
async function expected(kind: Kind): Promise<unknown> {
  if (!expectedOf.has(kind)) {
    const call = calls[kind];
    expectedOf.set(kind, (call.check as (r: unknown) => unknown)(await call.run(reference)));
  }
  return expectedOf.get(kind);
}

/** Runs `kind` on a dataset closed at `moment`; returns what the call settled with. */
async function raceClose(ds: Dataset, kind: Kind, moment: Moment): Promise<{ value: unknown } | { error: unknown }> {
  const call = calls[kind];
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= ds.close());
  if (moment === 'before') close();
  const onProgress = () => {
    if (moment === 'first progress') close();
  };
  const settled = outcome<unknown>(call.run(ds, kind === 'crosstab' ? {} : { onProgress }));
  if (moment === 'same tick') close();
  else if (moment === 'microtask') await Promise.resolve().then(close);
  else if (moment === 'setImmediate') await new Promise((resolve) => setImmediate(resolve)).then(close);
  else if (moment.endsWith(' ms')) await new Promise((resolve) => setTimeout(resolve, Number.parseInt(moment, 10))).then(close);
  const result = await settled;
  close();
  await closing;
  return 'value' in result ? { value: (call.check as (r: unknown) => unknown)(result.value) } : result;
}

describe.each(['inline', 'pool'] as const)('%s: close() racing calls in flight', (execution) => {
  it.each(moments.flatMap((moment) => (Object.keys(calls) as Kind[]).map((kind) => [kind, moment] as const)))(
    '%s, close %s: the answer is exact or the call rejects with dataset_closed; a dataset opened meanwhile is exact',
    async (kind, moment) => {
      const want = await expected(kind);
      const other = await expected('expression table');
      const ds = await openDataset(large(), { execution, cellCache: 0 });
      const race = raceClose(ds, kind, moment);
      // Opened while the closed dataset's work may still run, computing at the same time.
      const opened = await openDataset(large(), { execution });
      try {
        const [result, meanwhile] = await Promise.all([race, calls['expression table'].run(opened)]);
        expect(figures(meanwhile)).toEqual(other);
        if ('value' in result) expect(result.value).toEqual(want);
        else expectClosed(result.error);
        if (moment === 'before' || moment === 'same tick') expect('error' in result).toBe(true);
        if (moment === 'after') expect('value' in result).toBe(true);
      } finally {
        await opened.close();
      }
    },
  );

  it('every kind of call in flight at once, closed mid-way: each exact or dataset_closed, and calls after close() reject', async () => {
    const ds = await openDataset(large(), { execution, cellCache: 0 });
    const kinds = Object.keys(calls) as Kind[];
    const running = kinds.flatMap((kind) => [0, 1].map(() => ({ kind, settled: outcome(calls[kind].run(ds) as Promise<unknown>) })));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const closed = ds.close();
    const after = kinds.map((kind) => outcome(calls[kind].run(ds) as Promise<unknown>));
    for (const { kind, settled } of running) {
      const result = await settled;
      if ('value' in result) expect((calls[kind].check as (r: unknown) => unknown)(result.value)).toEqual(await expected(kind));
      else expectClosed(result.error);
    }
    for (const result of await Promise.all(after)) expectClosed('error' in result ? result.error : undefined);
    expect(() => ds.verify()).toThrow(expect.objectContaining({ code: ErrorCode.closed }));
    expect(() => ds.groupsOf('cat=A')).toThrow(expect.objectContaining({ code: ErrorCode.closed }));
    // info is plain data, read at open: it stays readable.
    expect(ds.info.respondents).toBe(reference.info.respondents);
    await closed;
    expect(ds.close()).toBe(closed);
  });

  it('close() resolves once the work of its calls has stopped, and gives back all the kernel memory they and the dataset used', async () => {
    await calls.crosstab.run(reference);
    const memory = mainThreadKernel().memory;
    const before = memory.allocatedBytes;
    const ds = await openDataset(large(), { execution, cellCache: 0 });
    const running = [outcome(calls['expression table'].run(ds)), outcome(calls['group-by table'].run(ds)), outcome(calls.crosstab.run(ds))];
    await new Promise((resolve) => setTimeout(resolve, 10));
    await ds.close();
    await Promise.all(running);
    expect(memory.allocatedBytes).toBe(before);
  });

  it('a call whose signal aborts rejects with cancelled, not dataset_closed, and leaves the dataset usable', async () => {
    const ds = await openDataset(large(), { execution, cellCache: 0 });
    try {
      const controller = new AbortController();
      const settled = outcome(calls['expression table'].run(ds, { signal: controller.signal }));
      await new Promise((resolve) => setTimeout(resolve, 5));
      controller.abort();
      const result = await settled;
      if ('error' in result) expect((result.error as CrosstabError).code).toBe(ErrorCode.cancelled);
      expect(figures(await calls['expression table'].run(ds))).toEqual(await expected('expression table'));
    } finally {
      await ds.close();
    }
  });
});

describe('closePool() while pool tables run', () => {
  it('fails them with a CrosstabError, and a table computed meanwhile on another dataset is exact', async () => {
    const query = expressionTable(100, 60, 'cat=B');
    const expected = figures(await reference.table(query));
    const first = await openDataset(large(), { execution: 'pool' });
    const second = await openDataset(large(), { execution: 'pool' });
    try {
      const running = outcome(first.table(expressionTable(400, 60)));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const stopped = closePool();
      // A new pool starts for the next table while the old one's threads stop.
      const table = await second.table(query);
      await stopped;
      expect(figures(table)).toEqual(expected);
      const late = await running;
      if ('error' in late) expect(late.error).toBeInstanceOf(CrosstabError);
      else expect(figures(late.value)).toEqual(figures(await reference.table(expressionTable(400, 60))));
    } finally {
      await first.close();
      await second.close();
    }
  });
});
