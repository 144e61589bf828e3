// The CSV fast paths (native split of lines without quotes or '\r'; the WebAssembly encoder
// in worker threads or on the reading thread, src/dataset/input/csv-chunks.ts) against
// csv-parse alone on random CSVs:
// quotes, embedded newlines, CR/CRLF/LF endings, a BOM, blank lines, UTF-8, ragged rows,
// weights of every form (and bad ones), missing final newline, read in random chunk sizes.
// The tables, or the errors, must be identical.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { readCsvTuned, type CsvTuning } from '../src/dataset/input/read-csv.js';
import { CrosstabError } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-csv-fast-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;

const plainField = fc.oneof(
  fc.constantFrom('', '1', '2', '06', '3.5', 'NA', 'x y', 'é', '日本', '-1', ' 7 '),
  fc.string({ unit: fc.constantFrom('a', 'b', '1', '0', ' ', '.', 'ü') , maxLength: 4 }),
);
const quotedField = fc.string({ unit: fc.constantFrom('a', ',', '"', '\n', '\r', '1', ' '), maxLength: 5 }).map((text) => `"${text.replace(/"/g, '""')}"`);
/** Weights as survey files write them, and the forms the encoder must read exactly as Number() does (or refuse). */
const weight = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('1', '2.5', '0', '3e2', '', '-0', '+5', '.5', '5.', '007', '1E-3', '0.1', '1e22', '1e23', '123456789012345678901') },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 999 }).map(String) },
  { weight: 3, arbitrary: fc.double({ min: 0, max: 1e12, noNaN: true }).map(String) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.stringMatching(/^\d{1,20}$/), fc.stringMatching(/^\d{0,20}$/), fc.integer({ min: -30, max: 30 }), fc.boolean())
      .map(([whole, fraction, exponent, withExponent]) => `${whole}${fraction ? `.${fraction}` : ''}${withExponent ? `e${exponent}` : ''}`),
  },
  { weight: 1, arbitrary: fc.constantFrom('-1', 'abc', '1e', '.', '1,5', ' 1', 'Infinity', '0x10', '1e400') },
);

/** A CSV: header w,a,b,c, rows of random fields; sometimes quoted, broken or ragged. */
const csvText = fc
  .record({
    rows: fc.array(
      fc.record({
        fields: fc.array(fc.oneof({ weight: 6, arbitrary: plainField }, { weight: 1, arbitrary: quotedField }), { minLength: 2, maxLength: 4 }),
        weight,
      }),
      { minLength: 0, maxLength: 25 },
    ),
    ending: fc.constantFrom('\n', '\n', '\n', '\r\n', '\r'),
    bom: fc.boolean(),
    finalNewline: fc.boolean(),
    blankLine: fc.nat({ max: 30 }),
    strayQuote: fc.nat({ max: 60 }),
  })
  .map(({ rows, ending, bom, finalNewline, blankLine, strayQuote }) => {
    const lines = ['w,a,b,c', ...rows.map((row) => [row.weight, ...row.fields.slice(0, 3)].join(','))];
    if (blankLine < lines.length && blankLine > 0) lines.splice(blankLine, 0, '');
    let text = (bom ? '\ufeff' : '') + lines.join(ending) + (finalNewline ? ending : '');
    if (strayQuote < text.length && strayQuote % 7 === 0) text = `${text.slice(0, strayQuote)}"${text.slice(strayQuote)}`;
    return text;
  });

type Tokenizer = CsvTuning;

async function outcome(path: string, fastPath: boolean, chunkBytes: number, tokenizer: Tokenizer = {}): Promise<unknown> {
  try {
    const table = await readCsvTuned(path, { weights: ['w'] }, { fastPath, chunkBytes, threads: 0, ...tokenizer });
    // A column whose values the workers kept as bytes (RawColumn.deferred) reads as the same dictionary: compared without it.
    const columns = table.columns.map(({ deferred, ...column }) => {
      if (deferred !== undefined) expect(deferred).toEqual({ count: column.dictionary.length, first: column.dictionary[0] });
      return { ...column, ids: [...column.ids] };
    });
    return { ...table, columns, weights: table.weights.map((w) => ({ name: w.name, values: [...w.values] })) };
  } catch (error) {
    if (!(error instanceof CrosstabError)) throw error;
    return { code: error.code, message: error.message, details: error.details };
  }
}

describe('CSV fast path = csv-parse', () => {
  it('gives the same table or the same error on random CSVs, in any chunk size', async () => {
    await fc.assert(
      fc.asyncProperty(csvText, fc.integer({ min: 1, max: 64 }), async (text, chunkBytes) => {
        const path = join(dir, `random-${serial++}.csv`);
        writeFileSync(path, text);
        const reference = await outcome(path, false, 1 << 16);
        expect(await outcome(path, true, chunkBytes)).toEqual(reference);
        expect(await outcome(path, true, 1 << 16)).toEqual(reference);
      }),
      { numRuns: 400 },
    );
  });

  it('the WebAssembly encoder in worker threads gives the same table or error, in any chunk sizes and thread counts', async () => {
    await fc.assert(
      fc.asyncProperty(csvText, fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 3 }), async (text, chunkBytes, encoderChunkBytes, threads) => {
        const path = join(dir, `random-${serial++}.csv`);
        writeFileSync(path, text);
        const reference = await outcome(path, false, 1 << 16);
        expect(await outcome(path, true, chunkBytes, { threads, encoderChunkBytes })).toEqual(reference);
      }),
      { numRuns: 150 },
    );
  });

  it('the WebAssembly encoder on the reading thread (no worker) gives the same table or error, in any chunk sizes', async () => {
    const report = { encodedRows: 0 };
    await fc.assert(
      fc.asyncProperty(csvText, fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 200 }), async (text, chunkBytes, encoderChunkBytes) => {
        const path = join(dir, `random-${serial++}.csv`);
        writeFileSync(path, text);
        const reference = await outcome(path, false, 1 << 16);
        expect(await outcome(path, true, chunkBytes, { threads: 0, inline: true, encoderChunkBytes, report })).toEqual(reference);
      }),
      { numRuns: 150 },
    );
    // The encoder took lines (those before a file's first quote or '\r'), not only the text path.
    expect(report.encodedRows).toBeGreaterThan(0);
  });

  it('switches to csv-parse mid-file with the right line numbers in its errors', async () => {
    const lines = ['w,a', ...Array.from({ length: 2000 }, (_, i) => `1,${i}`), '1,"open', '1,2'];
    const path = join(dir, 'late-quote.csv');
    writeFileSync(path, `${lines.join('\n')}\n`);
    const fast = (await outcome(path, true, 4096)) as { message: string; details: { line: number } };
    expect(fast).toEqual(await outcome(path, false, 4096));
    expect(fast.details.line).toBeGreaterThanOrEqual(2002);
  });
});
