// The dataset compiler's buffers made by build workers (compile-worker.js, a few variables
// ahead of the writer) against the same buffers made on the calling thread: byte for byte,
// whether the workers get copies of the ids or take them over (consume).
import { describe, expect, it } from 'vitest';
import { compileDataset } from '../src/dataset/compile.js';
import { readCsv } from '../src/dataset/read-csv.js';
import { gssCsv, nhanesCsv } from './support/paths.js';

async function buffers(data: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const buffer of data) out.push(Buffer.from(buffer));
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
});
