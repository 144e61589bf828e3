// Parquet's Zstandard pages go to the zstd library compiled to WebAssembly once a thread has
// loaded it (zstdReady), to fzstd before that or when the WebAssembly decoder refuses a page:
// frames written by the real zstd tool (with and without their content size, several frames in
// one page, an empty page) read back byte for byte both ways, and a damaged frame is an error.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { zstdPage, zstdReady } from '../src/dataset/input/zstd-pages.js';

const missing = spawnSync('zstd', ['--version']).status !== 0;
if (missing && process.env.CI) throw new Error('zstd must be installed (apt-get install zstd)');
if (missing) console.warn('SKIPPED: the Zstandard page tests need the zstd tool (apt-get install zstd).');
const describeWithZstd = missing ? describe.skip : describe;

function zstd(input: Uint8Array, flags: string[]): Uint8Array {
  const run = spawnSync('zstd', ['-c', ...flags], { input, maxBuffer: 1 << 28 });
  if (run.status !== 0) throw new Error(`zstd failed: ${run.stderr}`);
  return new Uint8Array(run.stdout);
}

/** Survey-like bytes: runs of codes and some noise, ~3 MB. */
function sample(): Uint8Array {
  const out = new Uint8Array(3_000_000);
  let seed = 41;
  for (let i = 0; i < out.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    out[i] = i % 7 === 0 ? seed >>> 24 : 48 + ((i >> 10) % 10);
  }
  return out;
}

describeWithZstd('Zstandard pages', () => {
  const data = sample();
  const pages = {
    'a frame with its content size': zstd(data, ['-3']),
    'a frame without its content size (a stream)': new Uint8Array(spawnSync('sh', ['-c', 'cat | zstd -c -3 --no-content-size'], { input: data, maxBuffer: 1 << 28 }).stdout),
    'two frames in one page': (() => {
      const [a, b] = [zstd(data.subarray(0, 1_000_000), ['-1']), zstd(data.subarray(1_000_000), ['-19'])];
      const both = new Uint8Array(a.length + b.length);
      both.set(a);
      both.set(b, a.length);
      return both;
    })(),
  };

  it.each(Object.keys(pages))('%s reads back by fzstd and by the WebAssembly decoder', async (name) => {
    const page = pages[name as keyof typeof pages];
    const before = zstdPage(page, data.length);
    await zstdReady();
    const after = zstdPage(page, data.length);
    expect(Buffer.from(before).equals(Buffer.from(data))).toBe(true);
    expect(Buffer.from(after).equals(Buffer.from(data))).toBe(true);
  });

  it('an empty page and a damaged frame', async () => {
    await zstdReady();
    expect(zstdPage(zstd(new Uint8Array(0), ['-3']), 0)).toEqual(new Uint8Array(0));
    const damaged = pages['a frame with its content size'].slice();
    damaged.fill(0xff, 100, 400);
    expect(() => zstdPage(damaged, data.length)).toThrow();
    // A page shorter than its header says comes back short (the chunk reader refuses it), not padded.
    expect(zstdPage(pages['a frame with its content size'], data.length + 10).length).toBe(data.length);
  });

  it('read right after the library is started again in the same thread (by the host, or by the package loaded as both import and require)', async () => {
    await zstdReady();
    const small = Array.from({ length: 20 }, (_, k) => data.subarray(k * 5000, k * 5000 + 4096 + k));
    const frames = small.map((bytes) => zstd(bytes, ['-3']));
    frames.forEach((frame, k) => expect(Buffer.from(zstdPage(frame, small[k]!.length)).equals(Buffer.from(small[k]!))).toBe(true));
    // Another user of the library in this thread calls its init(), which makes a new instance
    // asynchronously and swaps the library's memory views to it once it is ready.
    const library = await import('@bokuweb/zstd-wasm');
    await library.init();
    await new Promise((resolve) => setTimeout(resolve, 200));
    frames.forEach((frame, k) => expect(Buffer.from(zstdPage(frame, small[k]!.length)).equals(Buffer.from(small[k]!)), `page ${k}`).toBe(true));
    // And the other user's own calls still work.
    expect(Buffer.from(library.decompress(frames[3]!)).equals(Buffer.from(small[3]!))).toBe(true);
  });
});
