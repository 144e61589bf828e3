// A host service's event loop keeps turning while crosstab() works, and an abort stops the
// call at once. Asserted on the order of events, never on how long anything took.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CrosstabError, ErrorCode, openDataset, type Dataset } from '../src/index.js';
import { checkpoint, SLICE_MS } from '../src/query/executor.js';

/** 5,000 targets that each scan an index column (ranges of `big`, which has no value containers). */
const targets = Array.from({ length: 5_000 }, (_, i) => `big=${i % 6000}..${(i % 6000) + 500 + (i % 7)}`);

describe.each(['inline', 'pool'] as const)('%s: a 5,000-target crosstab()', (execution) => {
  let ds: Dataset;
  let reference: Dataset;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').large, { execution, cellCache: 0 });
    reference = await openDataset(inject('testDatasets').large, { execution: 'inline', cellCache: 0 });
  });
  afterAll(async () => {
    await ds.close();
    await reference.close();
  });

  it('lets a setInterval of the host fire while it runs, and answers exactly what 100-target calls answer', async () => {
    const events: string[] = [];
    const interval = setInterval(() => events.push('tick'), 1);
    const result = await ds.crosstab({ base: 'cat=A,B', targets });
    events.push('resolved');
    clearInterval(interval);
    expect(events.indexOf('tick')).toBeGreaterThanOrEqual(0);
    expect(events.indexOf('tick')).toBeLessThan(events.indexOf('resolved'));
    for (let from = 0; from < targets.length; from += 1_000) {
      const part = await reference.crosstab({ base: 'cat=A,B', targets: targets.slice(from, from + 100) });
      expect(result.targets.slice(from, from + 100)).toEqual(part.targets);
    }
  });

  it('rejects with cancelled as soon as its signal aborts: before the next macrotask of the host', async () => {
    expect(await abortOrder((signal) => ds.crosstab({ base: 'cat=A,B', targets, signal }))).toEqual(['abort', `rejected ${ErrorCode.cancelled}`, 'next macrotask']);
    // The dataset is still usable, and exact, after the abort.
    const again = await ds.crosstab({ base: 'cat=A,B', targets: targets.slice(0, 50) });
    expect(again.targets).toEqual((await reference.crosstab({ base: 'cat=A,B', targets: targets.slice(0, 50) })).targets);
  });

  it('rejects with dataset_closed as soon as the dataset closes', async () => {
    const closing = await openDataset(inject('testDatasets').large, { execution, cellCache: 0 });
    const events: string[] = [];
    const call = closing.crosstab({ base: '*', targets }).then(
      () => events.push('resolved'),
      (error: unknown) => events.push(`rejected ${(error as CrosstabError).code}`),
    );
    setTimeout(() => {
      events.push('close');
      void closing.close().then(() => events.push('memory released'));
      setImmediate(() => events.push('next macrotask'));
    }, 1);
    await call;
    await closing.close();
    expect(events.slice(0, 2)).toEqual(['close', `rejected ${ErrorCode.closed}`]);
    expect(events).toContain('memory released');
  });
});

/** Starts `call`, aborts its signal 1 ms later, and returns the first three events: the abort, the call's settling, the host's next macrotask after the abort. */
async function abortOrder(call: (signal: AbortSignal) => Promise<unknown>): Promise<string[]> {
  const events: string[] = [];
  const controller = new AbortController();
  const settled = call(controller.signal).then(
    () => events.push('resolved'),
    (error: unknown) => events.push(`rejected ${(error as CrosstabError).code}`),
  );
  setTimeout(() => {
    events.push('abort');
    controller.abort();
    setImmediate(() => events.push('next macrotask'));
  }, 1);
  await settled;
  await new Promise((resolve) => setTimeout(resolve, 5));
  return events.slice(0, 3);
}

describe('an inline table()', () => {
  let ds: Dataset;
  let pooled: Dataset;
  const query = {
    base: 'big=100..',
    rows: Array.from({ length: 160 }, (_, i) => `mid=${i % 300},${(i * 7 + 3) % 300}`),
    columns: Array.from({ length: 40 }, (_, i) => `big=${i * 100}..${i * 100 + 300}`),
  };
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').large, { execution: 'inline' });
    pooled = await openDataset(inject('testDatasets').large, { execution: 'pool' });
  });
  afterAll(async () => {
    await ds.close();
    await pooled.close();
  });

  it('lets a setInterval fire while it runs, and equals the pool table', async () => {
    const events: string[] = [];
    const interval = setInterval(() => events.push('tick'), 1);
    const table = await ds.table(query);
    events.push('resolved');
    clearInterval(interval);
    expect(table.execution).toBe('inline');
    expect(events.indexOf('tick')).toBeGreaterThanOrEqual(0);
    expect(events.indexOf('tick')).toBeLessThan(events.indexOf('resolved'));
    const other = await pooled.table(query);
    expect([...table.weighted]).toEqual([...other.weighted]);
    expect([...table.respondents]).toEqual([...other.respondents]);
  });

  it('a group-by table cut into slices equals the pool one, margins included', async () => {
    const groupBy = { base: 'big=..5000', rows: [{ variable: 'mid' }], columns: [{ variable: 'zip' }] };
    const [inline, pool] = [await ds.table(groupBy), await pooled.table(groupBy)];
    expect(inline.plan).toBe('groupBy');
    expect([...inline.weighted]).toEqual([...pool.weighted]);
    expect([...inline.respondents]).toEqual([...pool.respondents]);
    expect(inline.rowTotals).toEqual(pool.rowTotals);
    expect(inline.columnTotals).toEqual(pool.columnTotals);
  });

  it('rejects with cancelled as soon as its signal aborts: before the next macrotask of the host', async () => {
    expect(await abortOrder((signal) => ds.table({ ...query, signal }))).toEqual(['abort', `rejected ${ErrorCode.cancelled}`, 'next macrotask']);
  });
});

describe.each([0, 10_000])('small crosstab() calls chained without end (cellCache %i)', (cellCache) => {
  it('let a setInterval of the host fire, 32 in flight, inline and pool', async () => {
    for (const execution of ['inline', 'pool'] as const) {
      const ds = await openDataset(inject('testDatasets').large, { execution, cellCache });
      try {
        const events: string[] = [];
        const interval = setInterval(() => events.push('tick'), 1);
        const lane = async (seed: number) => {
          for (let i = 0; i < 150; i++) await ds.crosstab({ base: `cat=${'ABCDE'[(seed + i) % 5]}`, targets: [`mid=${(seed * 7 + i) % 300}..${((seed * 7 + i) % 300) + 20}`, 'rare=1'] });
        };
        await Promise.all(Array.from({ length: 32 }, (_, seed) => lane(seed)));
        events.push('all done');
        clearInterval(interval);
        expect(events[0]).toBe('tick');
      } finally {
        await ds.close();
      }
    }
  });
});

describe('checkpoint: the slice of the calling thread', () => {
  const busy = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('a query arriving after the host was busy (its own code, a GC) starts at once, not after a turn of the event loop', async () => {
    await turn();
    await turn();
    busy(SLICE_MS * 3);
    let hostTurn = false;
    setImmediate(() => (hostTurn = true));
    await checkpoint(undefined);
    expect(hostTurn).toBe(false);
  });

  it('pieces chained past a slice still wait for a turn, so the host\'s callbacks run', async () => {
    await turn();
    let hostTurns = 0;
    let stop = false;
    const tick = () => {
      hostTurns++;
      if (!stop) setImmediate(tick);
    };
    setImmediate(tick);
    const seen: number[] = [];
    for (let piece = 0; piece < 6; piece++) {
      await checkpoint(undefined);
      seen.push(hostTurns);
      busy(SLICE_MS * 0.6);
    }
    stop = true;
    // Six pieces of 0.6 slice each are more than three slices: the host turned between them.
    expect(new Set(seen).size).toBeGreaterThanOrEqual(3);
  });
});
