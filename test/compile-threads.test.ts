// The dataset compiler's buffers made by build workers (compile-worker.js, a few variables
// ahead of the writer) against the same buffers made on the calling thread: byte for byte,
// whether the workers get copies of the ids or take them over (consume).
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileDataset } from '../src/dataset/build/compile.js';
import type { StoredBuffer } from '../src/dataset/build/column-buffers.js';
import { readCsv } from '../src/dataset/input/read-csv.js';
import { writeDataset } from '../src/dataset/file/writer.js';
import { buildDataset, CrosstabError, ErrorCode, openDataset } from '../src/index.js';
import { gssCsv, nhanesCsv } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'compile-threads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each buffer's bytes; a buffer made stored and hashed gives its stored bytes and hash. */
async function buffers(data: Iterable<Uint8Array | StoredBuffer> | AsyncIterable<Uint8Array | StoredBuffer>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const buffer of data) out.push(buffer instanceof Uint8Array ? Buffer.from(buffer) : Buffer.concat([buffer.stored, Buffer.from(buffer.hash)]));
  return out;
}

describe('compileDataset with worker threads = on one thread', () => {
  for (const [name, path, weight] of [['GSS', gssCsv, 'wtssps'], ['NHANES', nhanesCsv, 'WTMEC2YR']] as const) {
    it(`${name}: the same buffers, in the same order`, async () => {
      const reference = await buffers(compileDataset(await readCsv(path, { weights: [weight] }), { survey: name }).data());
      for (const threads of [1, 2, 3]) {
        for (const consume of [false, true]) {
          const compiled = compileDataset(await readCsv(path, { weights: [weight] }), { survey: name, threads, consume });
          const data = compiled.data();
          expect(Symbol.asyncIterator in data).toBe(true);
          const made = await buffers(data);
          expect(made.length).toBe(reference.length);
          made.forEach((buffer, i) => expect(buffer.equals(reference[i]!), `buffer ${compiled.specs[i]!.name}, ${threads} threads, consume ${consume}`).toBe(true));
        }
      }
    });
  }

  it('a build on worker threads answers as the one-thread build; cancelled mid-write, it rejects `cancelled` and leaves nothing behind', async () => {
    const one = join(dir, 'one.arrow');
    const many = join(dir, 'many.arrow');
    await buildDataset(gssCsv, { weights: ['wtssps'], survey: 'GSS', out: one, threads: 0 });
    await buildDataset(gssCsv, { weights: ['wtssps'], survey: 'GSS', out: many, threads: 2 });
    const [a, b] = await Promise.all([openDataset(one), openDataset(many)]);
    try {
      const query = { base: 'year=2024', targets: ['sex=2', 'degree=3..4'] };
      expect(await b.crosstab(query)).toEqual(await a.crosstab(query));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }

    const folder = mkdtempSync(join(dir, 'cancel-'));
    const controller = new AbortController();
    const compiled = compileDataset(await readCsv(gssCsv, { weights: ['wtssps'] }), { survey: 'GSS', threads: 2, consume: true });
    const data = compiled.data() as AsyncIterable<Uint8Array>;
    const aborting = {
      ...compiled,
      async *data() {
        for await (const buffer of data) {
          yield buffer;
          controller.abort();
        }
      },
    } as unknown as typeof compiled;
    const error = await writeDataset(aborting, join(folder, 'out.arrow'), controller.signal).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(CrosstabError);
    expect((error as CrosstabError).code).toBe(ErrorCode.cancelled);
    expect(readdirSync(folder)).toEqual([]);
  });
});
