// close({ drain: true }): the calls in flight finish on the dataset they started on, new
// calls are refused, and a service that swaps datasets in-process (open the new file, switch
// its reference, drain the old one) fails no call. Bounded by its timeout.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { CrosstabError, ErrorCode, openDataset, type Dataset, type TableQuery, type TableResult } from '../src/index.js';

const large = () => inject('testDatasets').large;

/** A table big enough to be running (on the pool, in many tasks) when close() comes. */
const bigTable: TableQuery = {
  base: '*',
  rows: Array.from({ length: 300 }, (_, i) => `mid=${i % 300},${(i * 7 + 3) % 300}`),
  columns: Array.from({ length: 60 }, (_, i) => `big=${i * 100}..${i * 100 + 300}`),
};
const targets = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? `mid=${i}..${i + 40}` : `cat=${'ABCDE'[i % 5]} AND big=${i * 50}..`));

function figures(table: TableResult) {
  return { weighted: [...table.weighted], respondents: [...table.respondents], total: table.total };
}

async function outcome<T>(promise: Promise<T>): Promise<{ value: T } | { error: unknown }> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

let reference: Dataset;
let expectedTable: ReturnType<typeof figures>;
let expectedCrosstab: Awaited<ReturnType<Dataset['crosstab']>>;

beforeAll(async () => {
  reference = await openDataset(large(), { execution: 'inline', cellCache: 0 });
  expectedTable = figures(await reference.table(bigTable));
  expectedCrosstab = await reference.crosstab({ base: 'cat=A,C', targets });
});
afterAll(() => reference.close());

describe.each(['inline', 'pool'] as const)('%s: close({ drain: true })', (execution) => {
  it('lets every call in flight finish with its exact answer, refuses new calls, then gives back all the kernel memory', async () => {
    await reference.crosstab({ base: '*', targets: ['cat=A'] });
    const memory = mainThreadKernel().memory;
    const before = memory.allocatedBytes;
    const ds = await openDataset(large(), { execution, cellCache: 0 });
    const running = [outcome(ds.table(bigTable)), outcome(ds.crosstab({ base: 'cat=A,C', targets })), outcome(ds.table(bigTable))] as const;
    await new Promise((resolve) => setTimeout(resolve, 2));
    expect(ds.pendingCalls).toBeGreaterThan(0);
    const closed = ds.close({ drain: true });
    const late = await outcome(ds.crosstab({ base: '*', targets: ['cat=A'] }));
    expect('error' in late && (late.error as CrosstabError).code).toBe(ErrorCode.closed);
    const [first, crosstab, second] = await Promise.all(running);
    if (!('value' in first && 'value' in crosstab && 'value' in second)) throw new Error('a drained call failed');
    expect(figures(first.value)).toEqual(expectedTable);
    expect(crosstab.value).toEqual(expectedCrosstab);
    expect(figures(second.value)).toEqual(expectedTable);
    await closed;
    expect(ds.pendingCalls).toBe(0);
    expect(memory.allocatedBytes).toBe(before);
    expect(ds.close()).toBe(closed);
  });

  it('stops the calls still running when its timeout passes: they reject with dataset_closed, and it resolves', async () => {
    const ds = await openDataset(large(), { execution, cellCache: 0 });
    const running = outcome(ds.table({ ...bigTable, rows: [...bigTable.rows, ...bigTable.rows, ...bigTable.rows] }));
    await new Promise((resolve) => setTimeout(resolve, 1));
    await ds.close({ drain: true, timeoutMs: 0 });
    const result = await running;
    expect('error' in result && (result.error as CrosstabError).code).toBe(ErrorCode.closed);
  });

  it('hold(): a draining close waits for the work it holds and takes its calls, gives the memory back once it is released; holds nothing once closed', async () => {
    const memory = mainThreadKernel().memory;
    const before = memory.allocatedBytes;
    const ds = await openDataset(large(), { execution, cellCache: 0 });
    const release = ds.hold();
    let closed = false;
    const closing = ds.close({ drain: true }).then(() => (closed = true));
    // Work begun before the close goes on: its next call is taken, with its exact answer.
    expect(await ds.crosstab({ base: 'cat=A,C', targets })).toEqual(expectedCrosstab);
    expect(figures(await ds.table(bigTable))).toEqual(expectedTable);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    release();
    release();
    await closing;
    expect(memory.allocatedBytes).toBe(before);
    const late = ds.hold();
    expect((await outcome(ds.crosstab({ base: '*', targets: ['cat=A'] })) as { error: CrosstabError }).error.code).toBe(ErrorCode.closed);
    late();
  });

  it('hold(): past the drain\'s time limit the held work\'s calls are refused and the dataset closes without its release', async () => {
    const ds = await openDataset(large(), { execution, cellCache: 0 });
    ds.hold();
    await ds.close({ drain: true, timeoutMs: 10 });
    expect((await outcome(ds.crosstab({ base: '*', targets: ['cat=A'] })) as { error: CrosstabError }).error.code).toBe(ErrorCode.closed);
  });

  it('a close() without drain during a drain stops the calls in flight at once', async () => {
    const ds = await openDataset(large(), { execution, cellCache: 0 });
    const running = outcome(ds.table({ ...bigTable, rows: [...bigTable.rows, ...bigTable.rows, ...bigTable.rows] }));
    await new Promise((resolve) => setTimeout(resolve, 1));
    const draining = ds.close({ drain: true, timeoutMs: 600_000 });
    expect(ds.close()).toBe(draining);
    const result = await running;
    expect('error' in result && (result.error as CrosstabError).code).toBe(ErrorCode.closed);
    await draining;
  });

  it('soak: callers looping on the current dataset while it is swapped for a new one and the old one drained: no call fails', async () => {
    let current = await openDataset(large(), { execution, cellCache: 0 });
    const datasets = [current];
    let stop = false;
    let answered = 0;
    const failures: unknown[] = [];
    // Eight callers, each a bounded loop of calls on whatever dataset is current when it starts one.
    const callers = Array.from({ length: 8 }, async (_, caller) => {
      for (let call = 0; call < 400 && !stop; call++) {
        const dataset = current;
        try {
          if ((call + caller) % 5 === 0) expect(figures(await dataset.table(bigTable))).toEqual(expectedTable);
          else expect(await dataset.crosstab({ base: 'cat=A,C', targets })).toEqual(expectedCrosstab);
          answered++;
        } catch (error) {
          failures.push(error);
        }
      }
    });
    const drains: Promise<void>[] = [];
    for (let swap = 0; swap < 6; swap++) {
      await new Promise((resolve) => setTimeout(resolve, 15));
      const next = await openDataset(large(), { execution, cellCache: 0 });
      datasets.push(next);
      const old = current;
      current = next;
      drains.push(old.close({ drain: true }));
    }
    stop = true;
    await Promise.all(callers);
    await Promise.all(drains);
    await current.close({ drain: true });
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(0);
    for (const dataset of datasets) expect(dataset.pendingCalls).toBe(0);
  });
});

describe('close() options', () => {
  it.each([
    [{ drain: 'yes' }, 'drain'],
    [{ drain: true, timeoutMs: -1 }, 'timeoutMs'],
    [{ drain: true, timeoutMs: 1.5 }, 'timeoutMs'],
    [{ timeoutMs: 100 }, 'timeoutMs'],
    [{ drian: true }, 'options.drian'],
  ])('%j is refused naming %s, and leaves the dataset open', async (options, field) => {
    const ds = await openDataset(large(), { cellCache: 0 });
    try {
      const error = await ds.close(options as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CrosstabError);
      expect((error as CrosstabError).code).toBe(ErrorCode.invalidOption);
      expect((error as CrosstabError).details?.field).toBe(field);
      expect((await ds.crosstab({ base: '*', targets: ['cat=A'] })).base.respondents).toBe(reference.info.respondents);
    } finally {
      await ds.close();
    }
  });
});
