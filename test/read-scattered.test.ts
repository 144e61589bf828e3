// readScattered() against the bytes of a real file: stretches at random offsets and sizes
// (adjacent ones read together in one readv, pieces past the 8 MiB read size split) each get
// exactly their bytes; a stretch reaching past the end of the file (a file truncated after it
// was opened) rejects as truncated instead of leaving zeros in the buffer.
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readScattered } from '../src/dataset/file/lazy-buffers.js';
import { ArrowFileProblem } from '../src/dataset/file/arrow-file.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-scattered-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A small deterministic generator (xorshift32), so a failure repeats.
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

const SIZE = 20 << 20; // 20 MiB: more than two read pieces
function fileOf(bytes: Uint8Array, name: string): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}
const content = (() => {
  const next = random(7);
  const bytes = new Uint8Array(SIZE);
  for (let i = 0; i < SIZE; i += 4) new DataView(bytes.buffer).setUint32(i, (next() * 2 ** 32) >>> 0);
  return bytes;
})();

describe('readScattered', () => {
  it('fills every stretch with its own bytes: random, adjacent, tiny and larger than a read piece', async () => {
    const path = fileOf(content, 'data.bin');
    const fd = openSync(path, 'r');
    try {
      for (let round = 0; round < 20; round++) {
        const next = random(100 + round);
        const stretches: Array<{ fileOffset: number; into: Uint8Array }> = [];
        let at = Math.floor(next() * 1000);
        while (at < SIZE && stretches.length < 3000) {
          const kind = next();
          // Mostly small stretches side by side (one readv for many), some gaps, a few big ones.
          const length = Math.min(SIZE - at, kind < 0.02 ? Math.floor(next() * (12 << 20)) + 1 : Math.floor(next() * 5000) + 1);
          stretches.push({ fileOffset: at, into: new Uint8Array(length).fill(0xee) });
          at += length + (next() < 0.3 ? Math.floor(next() * 10000) : 0);
        }
        // In another order than the file's.
        const shuffled = [...stretches].sort(() => next() - 0.5);
        await readScattered(fd, shuffled);
        for (const { fileOffset, into } of stretches) {
          const expected = content.subarray(fileOffset, fileOffset + into.byteLength);
          if (Buffer.compare(Buffer.from(into.buffer, into.byteOffset, into.byteLength), Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength)) !== 0) {
            throw new Error(`round ${round}: stretch at ${fileOffset} (${into.byteLength} bytes) differs from the file`);
          }
        }
      }
    } finally {
      closeSync(fd);
    }
  });

  it('a stretch up to the end of the file is read whole; one past it (the file cut short after the open) rejects as truncated', async () => {
    const path = fileOf(content, 'cut.bin');
    const fd = openSync(path, 'r+');
    try {
      const last = { fileOffset: SIZE - 10_000, into: new Uint8Array(10_000) };
      await readScattered(fd, [last]);
      expect(Buffer.from(last.into).equals(Buffer.from(content.subarray(SIZE - 10_000)))).toBe(true);
      // Cut inside a group of adjacent stretches: the first readv returns fewer bytes than asked, the next none.
      ftruncateSync(fd, SIZE - 5_000);
      const group = [0, 1, 2, 3].map((i) => ({ fileOffset: SIZE - 20_000 + i * 5_000, into: new Uint8Array(5_000) }));
      await expect(readScattered(fd, group)).rejects.toBeInstanceOf(ArrowFileProblem);
      await expect(readScattered(fd, [{ fileOffset: SIZE - 8_000, into: new Uint8Array(8_000) }])).rejects.toThrow('truncated');
    } finally {
      closeSync(fd);
    }
  });
});
