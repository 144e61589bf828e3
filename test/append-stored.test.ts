// How an append reads the old buffers (StoredExtension): each is read into the writer's memory
// and checked against its hash, without a look at the file's size and modification time per
// buffer (thousands of fstat calls for the ACS); the file's stamp is looked at once, after the
// last buffer (LoadedDataset.checkUnchanged), and when a hash fails. A dataset written over in
// place during the append is refused as such, whether its bytes changed (the hash fails) or not
// (the same bytes copied over it: only the stamp tells), and the new buffer made over the old
// bytes hashes as if written whole.
import { copyFileSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildDataset, CrosstabError, ErrorCode } from '../src/index.js';
import { StoredExtension } from '../src/build/append-stored.js';
import { zeroFrom } from '../src/dataset/file/respondent-bits.js';
import { appendTrace } from '../src/build/append-trace.js';
import { loadDataset, type LoadedDataset } from '../src/dataset/file/reader.js';
import { hex } from '../src/kernel/checksum.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-append-stored-'));
const first = join(dir, 'first.arrow');
const second = join(dir, 'second.arrow');
const kernel = mainThreadKernel();

beforeAll(async () => {
  // Two builds of one layout (the same columns and values, shifted by a row): each buffer sits at the same offset in both files.
  for (const [path, shift] of [[first, 0], [second, 1]] as const) {
    const lines = ['x,y,w'];
    for (let i = 0; i < 5000; i++) lines.push(`${(i * 7 + shift) % 5},${(i * 3 + shift) % 4},${1 + ((i + shift) % 3)}`);
    writeFileSync(`${path}.csv`, `${lines.join('\n')}\n`);
    await buildDataset(`${path}.csv`, { weights: ['w'], survey: 'T', out: path });
  }
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Opens a copy of `from`, runs `body` with it and a StoredExtension over it, then gives everything back. */
async function withCopy(name: string, from: string, body: (data: LoadedDataset, stored: StoredExtension, path: string) => void | Promise<void>): Promise<void> {
  const path = join(dir, name);
  copyFileSync(from, path);
  const data = await loadDataset(path, kernel, { verify: true });
  const stored = new StoredExtension(kernel, data);
  try {
    await body(data, stored, path);
  } finally {
    stored.dispose();
    data.close();
    for (const region of data.regions) kernel.memory.release(region.ptr, region.bytes);
  }
}

/** A view of fresh kernel memory of `bytes` bytes, filled with 0xee (what a staging buffer may hold), and its release. */
function staging(bytes: number): { view: Uint8Array; release: () => void } {
  const ptr = kernel.memory.alloc(bytes);
  const view = kernel.memory.bytes(ptr, bytes);
  for (let i = 0; i < bytes; i++) view[i] = 0xee;
  return { view, release: () => kernel.memory.release(ptr, bytes) };
}

/** Buffer 0 (the weights) of an open dataset: its stored bytes. */
const storedOf = (data: LoadedDataset, row: number) => (data.buffers[row] as unknown as { stored: number; hash: string });

describe('StoredExtension', () => {
  it('makes a buffer over the old bytes whose hash is that of the bytes made', async () => {
    await withCopy('same.arrow', first, (data, stored) => {
      const { stored: bytes } = storedOf(data, 0);
      const target = staging(bytes + 256);
      try {
        const view = target.view;
        // Keep the first 1000 bytes of the old buffer, zero the rest, set one byte after them.
        const hash = stored.makeInto(view, 0, 1000, 992, (made) => (made[1003] = 7));
        const expected = kernel.memory.alloc(view.byteLength);
        kernel.memory.bytes(expected, view.byteLength).set(view);
        expect(hash).toBe(hex(kernel.exports.xxh64(kernel.memory.alloc(kernel.layout.xxh64StateBytes), expected, view.byteLength)));
        expect(view.subarray(1000).every((byte, i) => byte === (i === 3 ? 7 : 0))).toBe(true);
        expect(stored.checked.has(0)).toBe(true);
      } finally {
        target.release();
      }
      data.checkUnchanged();
    });
  });

  it('refuses a dataset written over in place with other bytes, naming it so', async () => {
    await withCopy('other.arrow', first, (data, stored, path) => {
      copyFileSync(second, path);
      const target = staging(storedOf(data, 0).stored);
      try {
        const error = (() => {
          try {
            stored.makeInto(target.view, 0, 8, 8, () => undefined);
          } catch (caught) {
            return caught;
          }
          return undefined;
        })() as CrosstabError;
        expect(error).toBeInstanceOf(CrosstabError);
        expect(error.code).toBe(ErrorCode.corruptDataset);
        expect(error.message).toContain('was written over in place after it was opened');
      } finally {
        target.release();
      }
    });
  });

  it('reads old bytes copied over the file in place with the same bytes, and checkUnchanged refuses them after', async () => {
    await withCopy('touched.arrow', first, (data, stored, path) => {
      copyFileSync(first, path);
      // The same size: make sure the modification time moves too.
      utimesSync(path, new Date(), new Date(Date.now() + 5000));
      const target = staging(storedOf(data, 0).stored);
      try {
        // Each buffer's hash holds: no look at the stamp per buffer.
        expect(() => stored.makeInto(target.view, 0, 8, 8, () => undefined)).not.toThrow();
        // The reader's own lazy read still refuses at once.
        expect(() => data.readStored(1, target.view)).toThrow(/written over in place/);
        expect(() => data.checkUnchanged()).toThrow(/written over in place/);
      } finally {
        target.release();
      }
    });
  });
});

describe('zeroFrom', () => {
  it('zeroes from any byte to the end, the bytes before it kept', () => {
    const target = staging(200);
    try {
      for (const from of [0, 1, 7, 8, 9, 63, 64, 185, 191, 192]) {
        target.view.fill(0xee);
        zeroFrom(kernel, target.view.subarray(8, 200), from);
        expect([...target.view.subarray(0, 8 + from)].every((byte) => byte === 0xee), `from ${from}`).toBe(true);
        expect([...target.view.subarray(8 + from)].every((byte) => byte === 0), `from ${from}`).toBe(true);
      }
    } finally {
      target.release();
    }
  });
});

describe('appendTrace (CROSSTAB_TRACE)', () => {
  it('is off unless set to something but empty or 0; on, it prints each phase and the summed parts', () => {
    for (const off of [{}, { CROSSTAB_TRACE: '' }, { CROSSTAB_TRACE: '0' }]) expect(appendTrace(off)).toBeUndefined();
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const trace = appendTrace({ CROSSTAB_TRACE: '1' })!;
      trace.mark('open the dataset', '7 buffers');
      trace.add('read old bytes', 2.5);
      trace.add('read old bytes', 1.5);
      trace.done();
    } finally {
      spy.mockRestore();
    }
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^trace: +\d+ ms  open the dataset +[\d.]+ ms wall +[\d.]+ ms CPU  7 buffers\n$/);
    expect(lines[1]).toMatch(/of which read old bytes +4\.0 ms/);
    expect(lines[2]).toMatch(/appendRows in all .* ms CPU  process CPU since start \d+ ms\n$/);
  });
});
