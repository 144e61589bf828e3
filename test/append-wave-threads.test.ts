// How many worker threads read an append's new rows when the caller gives none: a CSV wave
// of 8 MiB of text or more (gzip'd: a quarter of that) is parsed by worker threads, as a
// build's larger inputs are; a smaller CSV wave on the main thread (starting the workers
// costs more than they save on it); the typed formats keep the reader's own choice. The first
// GSS append of append.test.ts (2.5-2.8 MB of CSV) asks for 2 threads, the other appends there
// take the main thread; each equals the build of every row.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { waveThreads } from '../src/build/append.js';
import { defaultBuildThreads } from '../src/dataset/input/build-threads.js';

const dir = mkdtempSync(join(tmpdir(), 'append-wave-threads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A CSV of `bytes` bytes or a little more (plain, or gzip'd without compressing: stored blocks). */
function csvFile(name: string, bytes: number, gzip = false): string {
  let text = 'a,b\n';
  // Lines that do not repeat, so that gzip level 0 (stored) keeps the size.
  for (let i = 0; text.length < bytes; i++) text += `${i},${(i * 7919) % 104729}\n`;
  const path = join(dir, name);
  writeFileSync(path, gzip ? gzipSync(text, { level: 0 }) : text);
  return path;
}

describe('worker threads for the new rows of an append', () => {
  it('a CSV of 8 MiB or more (gzip: 2 MiB or more) takes the build threads; a smaller one none; other formats the reader default', async () => {
    expect(await waveThreads(csvFile('large.csv', 8 << 20), 'csv')).toBe(defaultBuildThreads());
    expect(await waveThreads(csvFile('small.csv', (8 << 20) - 4096), 'csv')).toBe(0);
    // Below the build's own bound (4 MiB), where the reader would start workers.
    expect(await waveThreads(csvFile('medium.csv', 5 << 20), 'csv')).toBe(0);
    expect(await waveThreads(csvFile('large.csv.gz', 2056 * 1024, true), 'csv')).toBe(defaultBuildThreads());
    expect(await waveThreads(csvFile('small.csv.gz', 2000 * 1024, true), 'csv')).toBe(0);
    expect(await waveThreads(csvFile('not-csv.parquet', 3 << 20), 'parquet')).toBeUndefined();
    // A path that cannot be read: the reader names the problem.
    expect(await waveThreads(join(dir, 'missing.csv'), 'csv')).toBeUndefined();
  });
});
