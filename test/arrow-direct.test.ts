// Arrow IPC columns of numbers and Utf8 text are read straight from the file into WebAssembly
// memory at the offsets their record batch's message gives (src/dataset/input/arrow-direct.ts):
// a message whose buffers do not fit the batch (a values buffer shorter than its rows, a buffer
// past the body, a body length the footer and the message disagree on, a body past the end of
// the file) is refused as invalid_input naming the file and the column, on one thread and in
// the build workers (the built CLI: `npm run build:ts` first), never read as other bytes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Float32, Float64, Int16, Int32, Int64, type RecordBatch, Table, tableToIPC, Uint8, Utf8, vectorFromArray } from 'apache-arrow';
import { Footer } from 'apache-arrow/ipc/metadata/file';
import { Message, type RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain-JavaScript bench helper without types
import { buildFingerprint } from '../bench/lib/build-fingerprint.js';
import { CrosstabError } from '../src/errors.js';
import { readInput } from '../src/dataset/input/read-input.js';
import { numberBlockBytes } from '../src/dataset/input/arrow-direct.js';
import { cliPath } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-arrow-direct-'));
const rows = 3_000;
let good: Uint8Array;

beforeAll(() => {
  const index = Array.from({ length: rows }, (_, i) => i);
  const table = new Table({
    n: vectorFromArray(index.map((i) => (i % 7 === 0 ? null : (i * 31) % 17)), new Int32()),
    t: vectorFromArray(index.map((i) => (i % 5 === 0 ? null : `v${i % 9}`)), new Utf8()),
    m: vectorFromArray(index.map((i) => BigInt(i % 4)), new Int64()),
    w: vectorFromArray(index.map((i) => 1 + (i % 3)), new Float64()),
  });
  good = tableToIPC(table, 'file');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The file's one record batch: its footer block and message, and where they lie. */
function layout(bytes: Uint8Array) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const footerLength = view.getInt32(bytes.byteLength - 10, true);
  const footerAt = bytes.byteLength - 10 - footerLength;
  const block = [...Footer.decode(bytes.subarray(footerAt, bytes.byteLength - 10)).recordBatches()][0]!;
  const continued = view.getInt32(block.offset, true) === -1;
  const start = block.offset + (continued ? 8 : 4);
  const length = view.getInt32(block.offset + (continued ? 4 : 0), true);
  const message = Message.decode(bytes.subarray(start, start + length));
  return { footerAt, block, messageAt: start, messageLength: length, message, header: message.header() as RecordBatchHeader };
}

/** Where the 64-bit little-endian `values` lie one after the other in `bytes[from .. to]` (exactly once). */
function find(bytes: Uint8Array, from: number, to: number, values: number[]): number {
  const pattern = new Uint8Array(values.length * 8);
  const view = new DataView(pattern.buffer);
  values.forEach((value, k) => view.setBigInt64(k * 8, BigInt(value), true));
  const found: number[] = [];
  for (let at = from; at + pattern.length <= to; at++) if (pattern.every((byte, k) => bytes[at + k] === byte)) found.push(at);
  expect(found).toHaveLength(1);
  return found[0]!;
}

/** A copy of the good file with buffer `index` of its batch's message given another offset and length. */
function withBuffer(index: number, change: (region: { offset: number; length: number }) => { offset: number; length: number }): Uint8Array {
  const bytes = good.slice();
  const { header, messageAt, messageLength } = layout(bytes);
  const region = header.buffers[index]!;
  const at = find(bytes, messageAt, messageAt + messageLength, [region.offset, region.length]);
  const changed = change({ offset: region.offset, length: region.length });
  const view = new DataView(bytes.buffer);
  view.setBigInt64(at, BigInt(changed.offset), true);
  view.setBigInt64(at + 8, BigInt(changed.length), true);
  return bytes;
}

/** A copy of the good file whose batch's body length is `length` in the footer (and in its message too when `message`). */
function withBodyLength(length: number, message: boolean): Uint8Array {
  const bytes = good.slice();
  const { footerAt, block, messageAt, messageLength } = layout(bytes);
  const view = new DataView(bytes.buffer);
  // The footer's Block struct: offset (int64), metaDataLength (int32, then 4 bytes of padding), bodyLength (int64).
  const at = find(bytes, footerAt, bytes.byteLength - 10, [block.offset]);
  expect(view.getInt32(at + 8, true)).toBe(block.metaDataLength);
  expect(Number(view.getBigInt64(at + 16, true))).toBe(block.bodyLength);
  view.setBigInt64(at + 16, BigInt(length), true);
  if (message) view.setBigInt64(find(bytes, messageAt, messageAt + messageLength, [block.bodyLength]), BigInt(length), true);
  return bytes;
}

async function refusal(bytes: Uint8Array, name: string): Promise<{ one: CrosstabError; workers: string }> {
  const path = join(dir, `${name}.arrow`);
  writeFileSync(path, bytes);
  const one = await readInput(path, { weights: ['w'], threads: 0 }).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(one).toBeInstanceOf(CrosstabError);
  const run = spawnSync(process.execPath, [cliPath, 'build', path, '--weight', 'w', '--survey', 'T', '--out', join(dir, `${name}.out.arrow`), '--threads', '2'], { encoding: 'utf8' });
  expect(run.status).not.toBe(0);
  return { one: one as CrosstabError, workers: run.stderr };
}

// Buffers of the batch, in schema order: n (validity, values), t (validity, offsets, values), m (validity, values), w (validity, values).
describe('Arrow columns read straight into WebAssembly memory', () => {
  it('read the good file (the buffers found where the tests change them)', async () => {
    const path = join(dir, 'good.arrow');
    writeFileSync(path, good);
    const table = await readInput(path, { weights: ['w'], threads: 0 });
    expect(table.rows).toBe(rows);
    expect(layout(good).header.buffers).toHaveLength(9);
  });

  it('read weights of 64-bit integers and doubles straight into doubles, refusing a bad one by its row as before', async () => {
    const weightsOf = async (name: string, values: Array<number | bigint | null>, type: Int64 | Float64 | Int32) => {
      const path = join(dir, `${name}.arrow`);
      writeFileSync(path, tableToIPC(new Table({ x: vectorFromArray(values.map((_, i) => i % 3), new Int32()), w: vectorFromArray(values, type) }), 'file'));
      return Array.from((await readInput(path, { weights: ['w'], threads: 0 })).weights[0]!.values);
    };
    const big = 2n ** 53n - 1n;
    expect(await weightsOf('int64', [0n, 1n, 4294967295n, 4294967296n, big, 7n], new Int64())).toEqual([0, 1, 4294967295, 4294967296, Number(big), 7]);
    expect(await weightsOf('float64', [0.5, 0, 1e50, 1e-50, 2.25], new Float64())).toEqual([0.5, 0, 1e50, 1e-50, 2.25]);
    expect(await weightsOf('int32', [3, 0, 2147483647], new Int32())).toEqual([3, 0, 2147483647]);
    // Past 2^53 an integer weight is the nearest double, as before.
    expect(await weightsOf('past', [1n, 2n ** 60n + 1n], new Int64())).toEqual([1, 2 ** 60]);
    const refusal = async (name: string, values: Array<number | bigint | null>, type: Int64 | Float64) => {
      const error = await weightsOf(name, values, type).then(() => undefined, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(CrosstabError);
      return error as CrosstabError;
    };
    const negative = await refusal('negative', [1n, 2n, -3n, 4n], new Int64());
    expect(negative.details).toMatchObject({ row: 3, field: 'w' });
    expect(negative.message).toContain('-3, which is a negative number');
    const blank = await refusal('blank', [1n, 2n, 3n, null], new Int64());
    expect(blank.details).toMatchObject({ row: 4, field: 'w' });
    expect(blank.message).toContain('"w" is blank');
    const nan = await refusal('nan', [1, Number.NaN, 3], new Float64());
    expect(nan.details).toMatchObject({ row: 2, field: 'w' });
    const infinite = await refusal('infinite', [1, 2, Infinity], new Float64());
    expect(infinite.message).toContain('which is not finite');
    // Finite, but past the weights whose sums and squares stay within a double.
    const huge = await refusal('huge', [1, 2, 1e300], new Float64());
    expect(huge.details).toMatchObject({ row: 3, field: 'w' });
    expect(huge.message).toContain('above 1e+50');
  });

  it('refuse a values buffer shorter than its rows need', async () => {
    for (const [index, column] of [
      [1, 'n'],
      [4, 't'],
      [6, 'm'],
    ] as const) {
      const bytes = index === 4 ? withBuffer(3, (region) => ({ ...region, length: region.length - 8 })) : withBuffer(index, (region) => ({ ...region, length: region.length - 64 }));
      const { one, workers } = await refusal(bytes, `short-${column}`);
      expect(one.code).toBe('invalid_input');
      expect(one.message).toContain(join(dir, `short-${column}.arrow`));
      expect(one.message).toMatch(new RegExp(`column "${column}": its (values|offsets) buffer holds \\d+ bytes where its ${rows} rows need \\d+`));
      expect(workers).toMatch(new RegExp(`column "${column}": its (values|offsets) buffer holds \\d+ bytes where its ${rows} rows need \\d+`));
    }
  });

  it('refuse a buffer that runs past its batch body, and a validity bitmap shorter than its rows', async () => {
    const past = await refusal(
      withBuffer(6, (region) => ({ offset: region.offset + 1_000_000, length: region.length })),
      'past',
    );
    expect(past.one.code).toBe('invalid_input');
    expect(past.one.message).toMatch(/column "m": its values buffer \(\d+ bytes at \d+\) runs past its record batch's body/);
    expect(past.workers).toMatch(/column "m": its values buffer \(\d+ bytes at \d+\) runs past its record batch's body/);
    const bitmap = await refusal(
      withBuffer(0, (region) => ({ ...region, length: 8 })),
      'bitmap',
    );
    expect(bitmap.one.message).toMatch(/column "n": its validity bitmap holds 8 bytes where its 3000 rows need 375/);
    expect(bitmap.workers).toMatch(/column "n": its validity bitmap holds 8 bytes where its 3000 rows need 375/);
  });

  it('refuse a body length the footer and the message disagree on, and a body past the end of the file', async () => {
    const { block } = layout(good);
    const disagree = await refusal(withBodyLength(block.bodyLength - 64, false), 'disagree');
    expect(disagree.one.code).toBe('invalid_input');
    expect(disagree.one.message).toMatch(new RegExp(`body is ${block.bodyLength - 64} bytes in the file's footer where its message says ${block.bodyLength}`));
    expect(disagree.workers).toMatch(/bytes in the file's footer where its message says/);
    const beyond = await refusal(withBodyLength(good.byteLength * 4, true), 'beyond');
    expect(beyond.one.code).toBe('invalid_input');
    expect(beyond.one.message).toMatch(/runs past the end of the file/);
    expect(beyond.workers).toMatch(/runs past the end of the file/);
  });

  it('number a column of more rows than a block (storeDirect reads numberBlockBytes at a time) as its values and nulls are', async () => {
    // Three blocks of 64-bit values and a part of one; nulls on both sides of each block's edge.
    const count = (numberBlockBytes / 8) * 3 + 1_234;
    const edge = numberBlockBytes / 8;
    const isNull = (i: number) => i % 97 === 0 || Math.abs((i % edge) - edge / 2) < 3 || i % edge < 5 || i % edge > edge - 6;
    const value = (i: number) => (i * 7919) % 50_021;
    const input = join(dir, 'blocks.arrow');
    const index = Array.from({ length: count }, (_, i) => i);
    writeFileSync(
      input,
      tableToIPC(
        new Table({
          n: vectorFromArray(index.map((i) => (isNull(i) ? null : BigInt(value(i)))), new Int64()),
          x: vectorFromArray(index.map((i) => (isNull(i + 1) ? null : value(i) / 4)), new Float64()),
          w: vectorFromArray(index.map((i) => 1 + (i % 3)), new Float64()),
        }),
        'file',
      ),
    );
    const table = await readInput(input, { weights: ['w'], threads: 0 });
    expect(table.rows).toBe(count);
    expect(table.weights[0]!.values.every((weight, i) => weight === 1 + (i % 3))).toBe(true);
    // Each row's value as its text (the CSV a reader would write of it), numbered in first-seen order.
    const texts = [(i: number) => (isNull(i) ? '' : String(value(i))), (i: number) => (isNull(i + 1) ? '' : String(value(i) / 4))];
    texts.forEach((text, c) => {
      const column = table.columns.find((candidate) => candidate.name === ['n', 'x'][c])!;
      const dictionary: string[] = [];
      const seen = new Map<string, number>();
      let wrong = 0;
      for (let i = 0; i < count; i++) {
        const expected = text(i);
        if (expected !== '' && !seen.has(expected)) seen.set(expected, dictionary.push(expected));
        if ((expected === '' ? 0 : seen.get(expected)) !== column.ids[i]) wrong++;
      }
      expect(wrong).toBe(0);
      expect(column.dictionary).toEqual(dictionary);
    });
  });

  it('build in workers given read plans (many small batches, every column read straight) the dataset one thread builds', async () => {
    const count = 20_000;
    const index = Array.from({ length: count }, (_, i) => i);
    const table = new Table({
      a: vectorFromArray(index.map((i) => (i % 13 === 0 ? null : (i * 7) % 40)), new Int16()),
      b: vectorFromArray(index.map((i) => (i % 3 === 0 ? null : `b${(i * 11) % 23}`)), new Utf8()),
      c: vectorFromArray(index.map((i) => BigInt((i % 9) - 4)), new Int64()),
      d: vectorFromArray(index.map((i) => (i % 4 === 1 ? null : ((i % 17) - 8) / 4)), new Float32()),
      e: vectorFromArray(index.map((i) => i % 3), new Uint8()),
      f: vectorFromArray(index.map((i) => `text ${i % 5}`), new Utf8()),
      w: vectorFromArray(index.map((i) => 1 + (i % 7) / 2), new Float64()),
    });
    // Batches of 1,500 rows and a last shorter one.
    const batches: RecordBatch[] = [];
    for (const batch of table.batches) for (let at = 0; at < batch.numRows; at += 1_500) batches.push(batch.slice(at, at + 1_500));
    const input = join(dir, 'batches.arrow');
    writeFileSync(input, tableToIPC(new Table(batches), 'file'));
    const prints = [];
    for (const threads of [0, 2, 3]) {
      const out = join(dir, `batches-${threads}.out.arrow`);
      const run = spawnSync(process.execPath, [cliPath, 'build', input, '--weight', 'w', '--survey', 'T', '--out', out, '--threads', String(threads)], { encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      prints.push(await buildFingerprint(out));
    }
    expect(new Set(prints).size).toBe(1);
  });
});
