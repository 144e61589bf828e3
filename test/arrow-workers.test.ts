// The Arrow IPC file reader with its columns dealt out to worker threads (the built CLI: the
// worker is bundled, so this runs dist/cli/main.js; `npm run build:ts` first) builds the same
// dataset as on one thread and as the same table written as a stream (always read on one
// thread): several record batches; Int64, Int32 and double columns with nulls; text with few
// values and an id column with one per row; dictionary-encoded text; a date column (read cell
// by cell); a double weight.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DateDay, Dictionary, Field, Float64, Int32, Int64, makeData, RecordBatch, Schema, Struct, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain-JavaScript bench helper without types
import { buildFingerprint } from '../bench/lib/build-fingerprint.js';
import { open } from 'node:fs/promises';
import { RecordBatchReader } from 'apache-arrow';
import { directKind } from '../src/dataset/input/arrow-columns.js';
import { fileIdentity } from '../src/dataset/input/file-identity.js';
import { planShare } from '../src/dataset/input/read-arrow-open.js';
import type { ArrowShareTask } from '../src/dataset/input/arrow-share.js';
import type { ShareResult } from '../src/dataset/input/column-shares.js';
import { cliPath, repoRoot } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-arrow-workers-'));
const file = join(dir, 'survey.arrow');
const stream = join(dir, 'survey.arrows');
const rows = 30_000;

/** The columns an Arrow build worker reads for `task`: given as it starts, or (`early`) sent as its first message 50 ms after it started without one. */
function readShare(task: ArrowShareTask, early = false): Promise<ShareResult[]> {
  return new Promise<ShareResult[]>((resolve, reject) => {
    const worker = new Worker(join(repoRoot, 'dist', 'dataset', 'arrow-worker.js'), early ? {} : { workerData: task });
    const columns: ShareResult[] = [];
    worker.on('message', (message: { column?: ShareResult; done?: true; error?: unknown }) => {
      if (message.column !== undefined) columns.push(message.column);
      if (message.done) resolve(columns);
      if (message.error !== undefined) reject(new Error(JSON.stringify(message.error)));
    });
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`the worker ended (${code}) without its columns`)));
    if (early) setTimeout(() => worker.postMessage(task), 50);
  });
}
const batchRows = 7_000;

beforeAll(() => {
  const index = Array.from({ length: rows }, (_, i) => i);
  const table = new Table({
    small: vectorFromArray(index.map((i) => (i % 7 === 0 ? null : BigInt(((i * 37) % 101) - 50))), new Int64()),
    wide: vectorFromArray(index.map((i) => (i % 11 < 3 ? null : (i * i) % 70001)), new Int32()),
    region: vectorFromArray(index.map((i) => (i % 6 === 0 ? null : `région ${i % 13}`)), new Utf8()),
    serial: vectorFromArray(index.map((i) => `id-${String(i).padStart(8, '0')}`), new Utf8()),
    kind: vectorFromArray(index.map((i) => (i % 9 === 4 ? null : ['alpha', 'beta', 'gamma', 'delta'][(i * 7) % 4]!)), new Dictionary(new Utf8(), new Int32())),
    ratio: vectorFromArray(index.map((i) => (i % 5 === 0 ? null : ((i % 23) + 0.5) / 4)), new Float64()),
    late: vectorFromArray(index.map((i) => (i > 20_000 ? null : BigInt(i % 3))), new Int64()),
    day: vectorFromArray(index.map((i) => (i % 8 === 0 ? null : new Date(Date.UTC(2024, 0, 1 + (i % 30))))), new DateDay()),
    w: vectorFromArray(index.map((i) => 1 + (i % 10) / 4), new Float64()),
  });
  // Batches of batchRows rows (slices share the dictionary, which the file holds once).
  const batches: RecordBatch[] = [];
  for (const batch of table.batches) for (let at = 0; at < batch.numRows; at += batchRows) batches.push(batch.slice(at, at + batchRows));
  const sliced = new Table(batches);
  expect(sliced.batches.length).toBe(Math.ceil(rows / batchRows));
  writeFileSync(file, tableToIPC(sliced, 'file'));
  writeFileSync(stream, tableToIPC(sliced, 'stream'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function build(input: string, out: string, threads: number): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, [cliPath, 'build', input, '--weight', 'w', '--survey', 'T', '--out', out, '--threads', String(threads)], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

describe('Arrow IPC file columns read in worker threads', () => {
  it('build the same dataset as one thread and as the stream', async () => {
    const outputs = { one: join(dir, 'one.arrow'), three: join(dir, 'three.arrow'), two: join(dir, 'two.arrow'), stream: join(dir, 'stream.arrow') };
    for (const [input, out, threads] of [[file, outputs.one, 0], [file, outputs.three, 3], [file, outputs.two, 2], [stream, outputs.stream, 3]] as const) {
      const run = build(input, out, threads);
      expect(run.status, run.stderr).toBe(0);
    }
    const expected = await buildFingerprint(outputs.one);
    expect(await buildFingerprint(outputs.three)).toBe(expected);
    expect(await buildFingerprint(outputs.two)).toBe(expected);
    expect(await buildFingerprint(outputs.stream)).toBe(expected);
  }, 120_000);

  it('stop numbering an id-like text column where the calling thread would, and say so', async () => {
    // An id-like column goes to a worker like any other text: it must stop at the bound it is
    // given (its count past the bound is all the build needs) and hand back that it stopped.
    const count = 200_000;
    const path = join(dir, 'ids.arrow');
    writeFileSync(path, tableToIPC(new Table({ serial: vectorFromArray(Array.from({ length: count }, (_, i) => `HU${String(i >> 1).padStart(9, '0')}`), new Utf8()) }), 'file'));
    const read = (idLike?: ArrowShareTask['idLike']) =>
      new Promise<ShareResult>((resolve, reject) => {
        const task: ArrowShareTask = { path, identity: fileIdentity(statSync(path)), columns: [{ position: 0, name: 'serial' }], rows: count, ...(idLike === undefined ? {} : { idLike }) };
        const worker = new Worker(join(repoRoot, 'dist', 'dataset', 'arrow-worker.js'), { workerData: task });
        worker.on('message', (message: { column?: ShareResult; error?: unknown }) => {
          if (message.column !== undefined) resolve(message.column);
          if (message.error !== undefined) reject(new Error(JSON.stringify(message.error)));
        });
        worker.on('error', reject);
      });
    const stopped = await read({ stopAbove: 40_000, readWhole: [] });
    expect(stopped.partly).toBe(true);
    expect(stopped.deferred!.ends.length).toBeGreaterThan(40_000);
    expect(stopped.deferred!.ends.length).toBeLessThan(100_000);
    const whole = await read({ stopAbove: 40_000, readWhole: ['serial'] });
    expect(whole.partly).toBeUndefined();
    expect(whole.deferred!.ends.length).toBe(count / 2);
    const numbered = stopped.deferred!.ends.length * 2;
    expect(Array.from(stopped.ids.subarray(0, numbered))).toEqual(Array.from(whole.ids.subarray(0, numbered)));
    expect((await read()).deferred!.ends.length).toBe(count / 2);
  }, 60_000);

  it('read the task a worker started before it was known gets as its first message', async () => {
    // The reader starts its workers before it has read the file's footer (their start-up then
    // overlaps it) and gives each its task as a message; the worker must read it as it reads
    // one given at its start.
    const task: ArrowShareTask = { path: file, identity: fileIdentity(statSync(file)), columns: [{ position: 0, name: 'small' }, { position: 2, name: 'region' }], rows };
    const given = await readShare(task);
    const sent = await readShare(task, true);
    expect(given.map((column) => column.position)).toEqual([0, 2]);
    expect(sent.map((column) => [column.position, column.dictionary, Array.from(column.counts), Array.from(column.ids)])).toEqual(given.map((column) => [column.position, column.dictionary, Array.from(column.counts), Array.from(column.ids)]));
    expect(sent[0]!.ids.length).toBe(rows);
  }, 60_000);

  it('take each column of a shared queue once, whichever worker takes it, as one worker reads it', async () => {
    // Workers given the same planned columns and a shared claim counter take the next column
    // until none is left (so they finish together): every column comes back once, read as a
    // worker reading them all reads it.
    const positions = [0, 1, 2, 3, 5, 6];
    const handle = await open(file, 'r');
    let plans: ArrowShareTask['plans'];
    try {
      const reader = await RecordBatchReader.from(handle);
      await reader.open();
      const kinds = new Map(positions.map((i) => [i, directKind(reader.schema.fields[i]!.type)!] as const));
      plans = await planShare(handle, reader, positions, { kinds, fileSize: statSync(file).size });
    } finally {
      await handle.close();
    }
    expect(plans).toBeDefined();
    const columns = positions.map((position) => ({ position, name: `c${position}` }));
    const base: ArrowShareTask = { path: file, identity: fileIdentity(statSync(file)), columns, rows, plans };
    const alone = await readShare(base);
    const claim = new Int32Array(new SharedArrayBuffer(4));
    const shared = (await Promise.all([0, 1, 2].map(() => readShare({ ...base, claim })))).flat();
    const view = (results: ShareResult[]) => results.map((column) => [column.position, column.dictionary, Array.from(column.counts), Array.from(column.ids), column.deferred?.ends.length]).sort((a, b) => (a[0] as number) - (b[0] as number));
    expect(shared.map((column) => column.position).sort((a, b) => a - b)).toEqual(positions);
    expect(view(shared)).toEqual(view(alone));
    expect(claim[0]).toBeGreaterThanOrEqual(positions.length);
  }, 60_000);

  it('refuse a column a worker cannot read with the error one thread gives', () => {
    // A dictionary column whose indices point past its dictionary in the second batch.
    const type = new Dictionary(new Utf8(), new Int32());
    const schema = new Schema([new Field('code', type, true), new Field('n', new Int64(), true), new Field('w', new Float64(), false)]);
    const words = vectorFromArray(['a', 'b', 'c'], new Utf8());
    const batch = (indices: number[]) => {
      const length = indices.length;
      const code = makeData({ type, length, nullCount: 0, data: Int32Array.from(indices), dictionary: words });
      const n = makeData({ type: new Int64(), length, nullCount: 0, data: BigInt64Array.from(indices, (i) => BigInt(i)) });
      const w = makeData({ type: new Float64(), length, nullCount: 0, data: Float64Array.from(indices, () => 1.5) });
      return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children: [code, n, w] }));
    };
    const damaged = join(dir, 'damaged.arrow');
    writeFileSync(damaged, tableToIPC(new Table([batch([0, 1, 2, 1]), batch([2, 7, 0, 1])]), 'file'));
    const out = join(dir, 'damaged-out.arrow');
    const errors = [0, 3].map((threads) => {
      const run = build(damaged, out, threads);
      expect(run.status).toBe(1);
      expect(existsSync(out)).toBe(false);
      return run.stderr;
    });
    expect(errors[1]).toContain('error [invalid_input]');
    expect(errors[1]).toContain('dictionary index 7 is past');
    expect(errors[1]).toBe(errors[0]);
  }, 60_000);
});
