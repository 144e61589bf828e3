// Buffers made in the writer's staging memory (PlacedBuffer), as an append makes them: the
// writer hands each maker a view of kernel memory where its bytes go in the file; what is
// staged is written in whole 4096-byte blocks and the partial block left over moves to the
// other staging buffer. The file must be the one the same buffers give when handed over as
// bytes; a maker that does not fit, and an old buffer read short, are refused with nothing
// left behind.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StoredExtension } from '../src/build/append-stored.js';
import { buildDataset, CrosstabError, ErrorCode } from '../src/index.js';
import { BufferKind } from '../src/dataset/format.js';
import { loadDataset } from '../src/dataset/file/reader.js';
import { type PlacedBuffer, writeDataset } from '../src/dataset/file/writer.js';
import { checksumInKernel } from '../src/kernel/checksum.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { gssCsv } from './support/paths.js';
import { seededRandom } from './support/large-dataset.js';

const dir = mkdtempSync(join(tmpdir(), 'placed-buffers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const padded = (size: number) => Math.ceil(size / 64) * 64;

/** Buffers of the given sizes, each of its own bytes. */
function buffersOf(sizes: number[]): Uint8Array[] {
  return sizes.map((size, index) => {
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i++) bytes[i] = (i * 29 + index * 11 + (i >>> 9)) & 0xff;
    return bytes;
  });
}

/** `bytes` made where the writer places it: the target is first spoiled (it holds what was staged before), then every byte written. */
function placed(bytes: Uint8Array, seen: { kernel: number }): PlacedBuffer {
  const kernel = mainThreadKernel();
  return {
    stored: padded(bytes.byteLength),
    makeInto(target) {
      // A view of kernel memory: the kernel hashes it where it is.
      if (target.buffer === kernel.memory.memory.buffer || target.byteOffset + target.byteLength <= kernel.memory.memory.buffer.byteLength) seen.kernel++;
      target.fill(0xa5);
      target.set(bytes);
      target.fill(0, bytes.byteLength);
      return checksumInKernel(kernel, target.byteOffset, target.byteLength);
    },
  };
}

describe('buffers made in the staging memory', () => {
  it('give the file the same buffers handed over as bytes give, across staging buffers and partial blocks', async () => {
    const random = seededRandom(20261129);
    // Sizes that end off block boundaries, cross the 8 MiB mark of a staging buffer at every
    // offset, one larger than a staging buffer (the staging buffers grow to hold it after a
    // carried partial block), and thousands of small ones.
    const sizes = [
      7, 4096, 4097, 4095, 8 << 20, (8 << 20) - 4000, 65,
      ...Array.from({ length: 3000 }, () => 1 + Math.floor(random() * 9000)),
      (20 << 20) + 4099, 1, 3 * (1 << 20) + 5,
      ...Array.from({ length: 40 }, () => 1 + Math.floor(random() * 700_000)),
      13,
    ];
    const buffers = buffersOf(sizes);
    const specs = buffers.map((bytes, i) => ({ name: `b${i}`, kind: BufferKind.sparse, count: i, bytes: bytes.byteLength }));
    const plain = join(dir, 'plain.arrow');
    await writeDataset({ meta: { format: 'test' }, specs, data: () => buffers }, plain);
    // Most placed, some as bytes (copied into the staging buffer between placed ones).
    const seen = { kernel: 0 };
    const mixed = () => buffers.map((bytes, i) => (i % 7 === 3 ? bytes : placed(bytes, seen)));
    const out = join(dir, 'placed.arrow');
    await writeDataset({ meta: { format: 'test' }, specs, data: mixed }, out, undefined, { direct: true });
    expect(statSync(out).size).toBe(statSync(plain).size);
    expect(readFileSync(out).equals(readFileSync(plain))).toBe(true);
    expect(seen.kernel).toBe(buffers.length - buffers.filter((_, i) => i % 7 === 3).length);
  });

  it('refuse a maker whose size is not the planned one, and one given a writer through the page cache, leaving nothing', async () => {
    const buffers = buffersOf([100, 5000, 300]);
    const specs = buffers.map((bytes, i) => ({ name: `b${i}`, kind: BufferKind.sparse, count: i, bytes: bytes.byteLength }));
    const folder = mkdtempSync(join(dir, 'refused-'));
    const out = join(folder, 'out.arrow');
    const seen = { kernel: 0 };
    const wrong: PlacedBuffer = { ...placed(buffers[1]!, seen), stored: padded(5000) + 64 };
    await expect(writeDataset({ meta: { format: 'test' }, specs, data: () => [buffers[0]!, wrong, buffers[2]!] }, out, undefined, { direct: true })).rejects.toThrow(/buffer b1 has 5120 stored bytes, 5056 were planned/);
    await expect(writeDataset({ meta: { format: 'test' }, specs, data: () => buffers.map((bytes) => placed(bytes, seen)) }, out)).rejects.toThrow(/made in place needs the staging buffers in kernel memory/);
    expect(readdirSync(folder)).toEqual([]);
  });
});

describe("an append's old buffers read into the staging memory", () => {
  it('refuses a dataset read short of a buffer (truncated after it was opened), writing nothing', async () => {
    const folder = mkdtempSync(join(dir, 'short-'));
    const dataset = join(folder, 'gss.arrow');
    await buildDataset(gssCsv, { weights: ['wtssps'], survey: 'GSS', out: dataset });
    const kernel = mainThreadKernel();
    const data = await loadDataset(dataset, kernel, { verify: true });
    try {
      const size = statSync(dataset).size;
      // The footer was read at open; the buffers past the middle of the file are gone now.
      truncateSync(dataset, Math.floor(size / 2));
      const rows = data.buffers.length;
      const specs = Array.from({ length: rows }, (_, row) => ({ name: `b${row}`, kind: BufferKind.sparse, count: 0, bytes: padded(bufferStored(data, row)) }));
      const out = join(folder, 'out.arrow');
      const stored = new StoredExtension(kernel, data);
      const made = function* (): Generator<PlacedBuffer> {
        for (let row = 0; row < rows; row++) yield stored.extend(row, bufferStored(data, row), bufferStored(data, row), padded(bufferStored(data, row)), () => undefined);
      };
      const error = await writeDataset({ meta: { format: 'test' }, specs, data: made }, out, undefined, { direct: true }).catch((caught: unknown) => caught);
      stored.dispose();
      expect(error).toBeInstanceOf(CrosstabError);
      expect((error as CrosstabError).code).toBe(ErrorCode.corruptDataset);
      // The first buffer read past the cut, or (read before it) the file's changed size and time, refuses it.
      expect((error as CrosstabError).message).toMatch(/is truncated: buffer \d+ .* is past its end|gss\.arrow was written over in place after it was opened .*: buffer \d+ .* cannot be read from it/);
      expect(readdirSync(folder)).toEqual(['gss.arrow']);
    } finally {
      data.close();
      for (const region of data.regions) kernel.memory.release(region.ptr, region.bytes);
    }
  });

  it('makes every old buffer unchanged where it goes, its hash the one stored', async () => {
    const folder = mkdtempSync(join(dir, 'same-'));
    const dataset = join(folder, 'gss.arrow');
    await buildDataset(gssCsv, { weights: ['wtssps'], survey: 'GSS', out: dataset });
    const kernel = mainThreadKernel();
    const data = await loadDataset(dataset, kernel, { verify: true });
    try {
      const rows = data.buffers.length;
      const stored = new StoredExtension(kernel, data);
      const hashes: string[] = [];
      const specs = Array.from({ length: rows }, (_, row) => ({ name: `b${row}`, kind: BufferKind.sparse, count: 0, bytes: bufferStored(data, row) }));
      const made = function* (): Generator<PlacedBuffer> {
        for (let row = 0; row < rows; row++) {
          const keep = bufferStored(data, row);
          // Kept whole (same = keep: the hash of the old bytes carries on into the new one), or only its first stripes.
          const same = row % 2 === 0 ? keep : Math.floor(keep / 3);
          const buffer = stored.extend(row, keep, same, keep, () => undefined);
          yield { stored: buffer.stored, makeInto: (target) => { const hash = buffer.makeInto(target); hashes.push(hash); return hash; } };
        }
      };
      const out = join(folder, 'copy.arrow');
      await writeDataset({ meta: { format: 'test' }, specs, data: made }, out, undefined, { direct: true });
      stored.dispose();
      expect(stored.checked.size).toBe(rows);
      expect(hashes).toEqual(Array.from({ length: rows }, (_, row) => (data.buffers[row] as unknown as { hash: string }).hash));
    } finally {
      data.close();
      for (const region of data.regions) kernel.memory.release(region.ptr, region.bytes);
    }
  });
});

function bufferStored(data: { buffers: unknown[] }, row: number): number {
  return (data.buffers[row] as { stored: number }).stored;
}
