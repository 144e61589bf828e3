// The usage ledger with several flushes in flight: records arriving while earlier batches are
// flushed are appended at once, each record resolves only after its own batch's flush and every
// earlier batch's, in file order; a failure among several in flight refuses that batch and every
// later one and cuts them off; close waits for them all; a crash's torn tail is read past.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { NdjsonLedger, type UsageRecord } from '../../src/http/index.js';
import { repoRoot } from '../support/paths.js';
import { readLedger, tempDir } from './support.js';

// On the disk (os.tmpdir()), not tmpfs: a flush there takes longer than an append to the page cache.
const dir = tempDir('ledger-pipelined-');
const usage = (requestId: string): UsageRecord => ({ time: new Date().toISOString(), requestId, keyId: 'key_x', survey: 'GSS', targets: 1 });
const idsIn = (path: string): unknown[] => readLedger(path).map((record) => record.requestId);
const sizeOf = (path: string): number => (existsSync(path) ? statSync(path).size : 0);
/** Every waiting batch starts its flush at once, beside those in flight (by default a few records wait for the flush in flight). */
const overlapAtOnce = { overlapWaitMs: 0 };

/** Records `waves` waves of `perWave` records, each wave once the one before reached the file; returns the ids in the order they resolved. */
async function recordInWaves(ledger: NdjsonLedger, prefix: string, waves: number, perWave: number, between?: (wave: number) => void): Promise<{ calls: Array<Promise<void>>; resolved: string[]; ids: string[] }> {
  const resolved: string[] = [];
  const calls: Array<Promise<void>> = [];
  const ids: string[] = [];
  for (let wave = 0; wave < waves; wave++) {
    between?.(wave);
    const size = sizeOf(ledger.path);
    for (let i = 0; i < perWave; i++) {
      const id = `${prefix}${wave}-${i}`;
      ids.push(id);
      calls.push(ledger.record(usage(id)).then(() => void resolved.push(id)));
    }
    for (let spin = 0; spin < 1000 && sizeOf(ledger.path) === size; spin++) await tick();
  }
  return { calls, resolved, ids };
}

/**
 * Twenty pairs: record `a`, wait until it is in the file (appended, maybe not yet durable),
 * record `follow` more at once, wait until the last is in the file: was `a` still unresolved
 * then? A single flush in flight would resolve `a` before appending them. A disk's flush takes
 * longer than an append to the page cache, so some pair shows it when flushes overlap.
 */
async function recordPairs(ledger: NdjsonLedger, follow: number): Promise<{ overlapped: number; ids: string[] }> {
  const inFile = (id: string): boolean => readFileSync(ledger.path, 'utf8').includes(`"${id}"`);
  let overlapped = 0;
  const ids: string[] = [];
  for (let pair = 0; pair < 20; pair++) {
    let aResolved = false;
    const a = ledger.record(usage(`a${pair}`)).then(() => void (aResolved = true));
    while (!inFile(`a${pair}`)) await tick();
    const followers = Array.from({ length: follow }, (_, i) => `b${pair}-${i}`);
    const calls = followers.map((id) => ledger.record(usage(id)));
    while (!inFile(followers.at(-1)!)) await tick();
    if (!aResolved) overlapped++;
    await Promise.all([a, ...calls]);
    ids.push(`a${pair}`, ...followers);
  }
  return { overlapped, ids };
}

describe('NdjsonLedger with several flushes in flight', () => {
  it('appends a record while the batch before it is still being flushed (overlapWaitMs 0)', async () => {
    const path = join(dir, 'overlap-pair.ndjson');
    const ledger = await NdjsonLedger.open(path, overlapAtOnce);
    const { overlapped, ids } = await recordPairs(ledger, 1);
    await ledger.close();
    expect(overlapped).toBeGreaterThan(0);
    expect(idsIn(path)).toEqual(ids);
  });

  it('takes the records made in one turn of the event loop, each in a callback of its own, as one batch', async () => {
    const path = join(dir, 'one-turn.ndjson');
    const ledger = await NdjsonLedger.open(path);
    // As the service makes them: one record per answered request, each in a setImmediate
    // callback of the same turn. The first of them does not take a flush alone.
    const calls = await new Promise<Array<Promise<void>>>((made) => {
      const list: Array<Promise<void>> = [];
      for (let i = 0; i < 10; i++) setImmediate(() => list.push(ledger.record(usage(`t${i}`))));
      setImmediate(() => made(list));
    });
    await Promise.all(calls);
    await ledger.close();
    expect(ledger.stats.flushes).toBe(1);
    expect(idsIn(path)).toEqual(Array.from({ length: 10 }, (_, i) => `t${i}`));
  });

  it('every record made in waves across overlapping flushes lands exactly once, resolving in file order', async () => {
    const path = join(dir, 'overlap.ndjson');
    const ledger = await NdjsonLedger.open(path, overlapAtOnce);
    const { calls, resolved, ids } = await recordInWaves(ledger, 'r', 40, 5);
    await Promise.all(calls);
    await ledger.close();
    const inFile = idsIn(path);
    expect(inFile).toEqual(resolved);
    expect([...inFile].sort()).toEqual([...ids].sort());
    expect(ledger.stats.records).toBe(ids.length);
  });

  it('close waits for every flush in flight: each record resolves and is in the file once', async () => {
    const path = join(dir, 'close.ndjson');
    const closed: number[] = [];
    const ledger = await NdjsonLedger.open(path, { ...overlapAtOnce, onEvent: (event, _message, stats) => event === 'ledger_closed' && closed.push(stats!.records) });
    const { calls, ids } = await recordInWaves(ledger, 'c', 20, 3);
    const last = ledger.record(usage('last'));
    await ledger.close();
    // Nothing may be left unsettled by close.
    const outcomes = await Promise.race([Promise.allSettled([...calls, last]), tick().then(() => 'unsettled')]);
    expect(outcomes).not.toBe('unsettled');
    expect((outcomes as PromiseSettledResult<void>[]).every((outcome) => outcome.status === 'fulfilled')).toBe(true);
    expect([...idsIn(path)].sort()).toEqual([...ids, 'last'].sort());
    expect(closed).toEqual([ids.length + 1]);
    await expect(ledger.record(usage('late'))).rejects.toThrow(/closed/);
  });

  it('follows a rotation made while flushes are in flight: records made after it go to the new file, none lost or doubled', async () => {
    const path = join(dir, 'rotate.ndjson');
    const ledger = await NdjsonLedger.open(path, overlapAtOnce);
    let rotatedAt = -1;
    const { calls, ids } = await recordInWaves(ledger, 'x', 20, 4, (wave) => {
      if (wave === 10) {
        renameSync(path, `${path}.1`);
        rotatedAt = wave * 4;
      }
    });
    await Promise.all(calls);
    await ledger.close();
    const before = idsIn(`${path}.1`);
    const after = idsIn(path);
    expect([...before, ...after].sort()).toEqual([...ids].sort());
    for (const id of ids.slice(rotatedAt)) expect(after).toContain(id);
    expect(ledger.stats.reopens).toBe(1);
  });

  it('a few records (fewer than overlapRecords) made while a flush is in flight wait for it and share the next flush', async () => {
    const path = join(dir, 'wait-pair.ndjson');
    // The wait is bounded by overlapWaitMs (by default the mean flush time): a minute here, so
    // only the end of the flush in flight releases the waiting records.
    const ledger = await NdjsonLedger.open(path, { overlapWaitMs: 60_000 });
    const inFile = (id: string): boolean => readFileSync(path, 'utf8').includes(`"${id}"`);
    // As in recordPairs: `a` in the file (its flush started), then three records in turns
    // of their own. None may start a flush beside `a`'s; they form one batch after it.
    let appendedBeforeResolved = 0;
    for (let pair = 0; pair < 20; pair++) {
      let aResolved = false;
      const a = ledger.record(usage(`a${pair}`)).then(() => void (aResolved = true));
      while (!inFile(`a${pair}`)) await tick();
      const rest: Array<Promise<void>> = [];
      for (let i = 0; i < 3; i++) {
        rest.push(ledger.record(usage(`b${pair}-${i}`)));
        await tick();
      }
      if (inFile(`b${pair}-0`) && !aResolved) appendedBeforeResolved++;
      await Promise.all([a, ...rest]);
    }
    await ledger.close();
    expect(appendedBeforeResolved).toBe(0);
    expect(ledger.stats.mostInFlight).toBe(1);
    expect(idsIn(path)).toEqual(Array.from({ length: 20 }, (_, pair) => [`a${pair}`, `b${pair}-0`, `b${pair}-1`, `b${pair}-2`]).flat());
  });

  it('a waiting batch of overlapRecords records starts its flush beside the one in flight', async () => {
    const path = join(dir, 'overlap-records.ndjson');
    const ledger = await NdjsonLedger.open(path, { overlapRecords: 4, overlapWaitMs: 60_000 });
    const { overlapped, ids } = await recordPairs(ledger, 4);
    await ledger.close();
    expect(overlapped).toBeGreaterThan(0);
    expect(ledger.stats.mostInFlight).toBeGreaterThan(1);
    expect(idsIn(path)).toEqual(ids);
  });

  it('refuses overlapRecords and overlapWaitMs out of range, naming the option', async () => {
    const path = join(dir, 'options.ndjson');
    for (const [options, field] of [
      [{ overlapRecords: 0 }, 'overlapRecords'],
      [{ overlapRecords: 2.5 }, 'overlapRecords'],
      [{ overlapWaitMs: -1 }, 'overlapWaitMs'],
      [{ overlapWaitMs: Number.NaN }, 'overlapWaitMs'],
    ] as const) {
      const error = await NdjsonLedger.open(path, options).then(
        async (ledger) => {
          await ledger.close();
          return undefined;
        },
        (caught: unknown) => caught,
      );
      expect(error, JSON.stringify(options)).toMatchObject({ code: 'invalid_option', details: { field } });
      expect((error as Error).message).toContain(field);
    }
    expect(existsSync(path)).toBe(false);
  });

  it('reads past what a crash may leave after the last record answered: zero bytes, a whole record after them, a partial line', async () => {
    const path = join(dir, 'crashed.ndjson');
    const answered = ['a0', 'a1', 'a2'].map((id) => `${JSON.stringify(usage(id))}\n`).join('');
    // Batches in flight at the crash: the first never reached the disk (a hole reads as zero
    // bytes), the second did, the third only in part.
    const tail = '\0'.repeat(300) + `${JSON.stringify(usage('never-answered'))}\n` + JSON.stringify(usage('torn')).slice(0, 40) + '\0'.repeat(20);
    writeFileSync(path, answered + tail);
    const ledger = await NdjsonLedger.open(path);
    await Promise.all(['n0', 'n1', 'n2'].map((id) => ledger.record(usage(id))));
    await ledger.close();
    // The answered records and the new ones, each whole; the torn tail is kept but is not JSON.
    expect(idsIn(path)).toEqual(['a0', 'a1', 'a2', 'n0', 'n1', 'n2']);
    const text = readFileSync(path, 'utf8');
    expect(text.startsWith(answered + tail + '\n')).toBe(true);
  });
});

describe('NdjsonLedger: a write that fails part way among several in flight (`ulimit -S -f 8` on a child process)', () => {
  const module = join(repoRoot, 'dist', 'http', 'index.js');

  it('refuses the failed batch and every later one, keeps the earlier ones, cuts the file back, then bills again', () => {
    expect(existsSync(module), `${module} is missing: run \`npm run build:ts\` first`).toBe(true);
    const path = join(dir, 'full.ndjson');
    // The process may write files up to 8 KiB: leave room for about ten records.
    const padding = `{"padding":"${'x'.repeat(8 * 1024 - 1000 - 15)}"}\n`;
    writeFileSync(path, padding);
    const child = join(repoRoot, 'test', 'http', 'ledger-fill-child.mjs');
    const output = execFileSync('bash', ['-c', 'ulimit -S -f 8; exec "$@"', 'bash', process.execPath, child, path, module], { encoding: 'utf8' });
    const { resolved, refused, events } = JSON.parse(output) as { resolved: string[]; refused: Array<{ requestId: string; code: string }>; events: string[] };
    expect(refused.length).toBeGreaterThan(0);
    expect(new Set(refused.map((entry) => entry.code))).toEqual(new Set(['EFBIG']));
    expect(resolved).toContain('w0-0');
    expect(resolved.slice(-4).sort()).toEqual(['after-0', 'after-1', 'after-2', 'after-3']);
    expect(events).toContain('ledger_repaired');
    // Only whole records, exactly those resolved, in the order they resolved; nothing refused.
    const lines = readFileSync(path, 'utf8').split('\n').slice(1, -1);
    for (const line of lines) expect(() => JSON.parse(line), `ledger line ${JSON.stringify(line.slice(0, 80))}`).not.toThrow();
    expect(lines.map((line) => (JSON.parse(line) as UsageRecord).requestId)).toEqual(resolved);
    expect(resolved.length + refused.length).toBe(12 * 4 + 4);
  });
});
