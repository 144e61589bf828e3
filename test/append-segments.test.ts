// appendRows() in segments: a dataset file with a segment per appended wave, put together by
// the reader, holds byte for byte the buffers of the file `compact: true` writes for the same
// waves (every respondent's buffers extended in one file), and gives the same info. Random
// successive waves: new values sorting between old ones, index columns widening from one byte
// to two, containers turning from lists into bitsets and back, blanks, a multi-response
// variable, a range index, respondent ids and two weights.
import fc from 'fast-check';
import { closeSync, fstatSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRows, buildDataset, type AppendReport, CrosstabError, ErrorCode, exportColumns, openDataset, weightDataset } from '../src/index.js';
import { spawnSync } from 'node:child_process';
import { cliPath } from './support/paths.js';
import { readArrowStructure } from '../src/dataset/file/arrow-file.js';
import { loadDataset, storedRows, type LoadedDataset } from '../src/dataset/file/reader.js';
import { FORMAT_KEY, SEGMENTS_KEY, type StoredSegments } from '../src/dataset/format.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-append-segments-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const file = (name: string) => join(dir, `${serial++}-${name}`);

const TEXTS = ['a', 'b', 'A', 'é', 'm', '06', '6', 'x y', 'z', '日本'];
const ANSWERS = ['b', 'a', 'c', 'z z', 'é'];

interface Row {
  txt: string;
  big: string;
  grp: string;
  m: string;
  w: number;
  w2: number;
}

const rowArb = fc.record({
  txt: fc.oneof(fc.constant(''), fc.constantFrom(...TEXTS)),
  // Up to 2,000 distinct numbers: past 255 of them the index column takes two bytes a respondent.
  big: fc.oneof(fc.constant(''), fc.integer({ min: 0, max: 1999 }).map(String)),
  grp: fc.integer({ min: 1, max: 9 }).map(String),
  m: fc.subarray(ANSWERS, { maxLength: 3 }).map((answers) => answers.join(';')),
  w: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.double({ min: 0.001, max: 100, noNaN: true })),
  w2: fc.integer({ min: 0, max: 9 }),
});

/** Between `min` and `max` rows, every length as likely (fast-check's arrays are mostly short). */
const rowsOf = (min: number, max: number) => fc.integer({ min, max }).chain((n) => fc.array(rowArb, { minLength: n, maxLength: n }));

function csv(rows: Row[], first: number): string {
  const path = file('part.csv');
  const lines = ['pid,txt,big,grp,m,w,w2', ...rows.map((row, i) => [`P${first + i}`, row.txt, row.big, row.grp, row.m, row.w, row.w2].join(','))];
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** Every buffer of the dataset at `path`, as the reader puts it in kernel memory (each checked against its hashes). */
async function buffers(path: string): Promise<{ bytes: Uint8Array[]; segments: number | undefined }> {
  const kernel = mainThreadKernel();
  const data: LoadedDataset = await loadDataset(path, kernel, { verify: 'full' });
  try {
    return { bytes: data.buffers.map((entry, row) => kernel.memory.bytes(data.buffer(row).ptr, (entry as unknown as { stored: number }).stored).slice()), segments: data.segments };
  } finally {
    data.close();
    for (const region of data.regions) kernel.memory.release(region.ptr, region.bytes);
  }
}

async function comparableInfo(path: string): Promise<unknown> {
  const dataset = await openDataset(path, { cellCache: 0 });
  try {
    const { createdAt: _a, checksum: _c, ...info } = dataset.info;
    return info;
  } finally {
    await dataset.close();
  }
}

describe('appendRows in segments', () => {
  it('successive waves in segments hold, buffer by buffer, the bytes of the compact appends of the same waves, and the same info', async () => {
    let compared = 0;
    // What the runs covered: most segments of a file, and index columns widened from one byte to two.
    let mostSegments = 0;
    let widened = 0;
    let compacted = 0;
    await fc.assert(
      fc.asyncProperty(
        rowsOf(40, 300),
        fc.array(rowsOf(1, 320), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        async (base, waves, ranged) => {
          const options = { weights: ['w', 'w2'], survey: 'T', id: 'pid', rangeIndex: ranged ? ['grp'] : ('none' as const), multi: [{ column: 'm', delimiter: ';' }] };
          let segmented = file('first.arrow');
          const built = await buildDataset(csv(base, 0), { ...options, out: segmented }).catch((error: unknown) => error);
          if (built instanceof Error) return;
          let compact = segmented;
          let first = base.length;
          const values = async (path: string) => ((await openDataset(path, { cellCache: 0 })).info.variables.find((v) => v.name === 'big')?.values?.length ?? 0);
          const baseValues = await values(segmented);
          for (const [k, wave] of waves.entries()) {
            const rows = csv(wave, first);
            first += wave.length;
            const nextSegmented = file(`segmented-${k}.arrow`);
            const nextCompact = file(`compact-${k}.arrow`);
            const a: AppendReport | Error = await appendRows(segmented, rows, { out: nextSegmented }).catch((error: Error) => error);
            const b: AppendReport | Error = await appendRows(compact, rows, { out: nextCompact, compact: true }).catch((error: Error) => error);
            if (b instanceof Error) {
              expect(a, String(b)).toBeInstanceOf(Error);
              expect((a as Error).message).toBe(b.message);
              return;
            }
            if (a instanceof Error) throw a;
            expect(b.segments).toBe(1);
            [segmented, compact] = [nextSegmented, nextCompact];
            const [inSegments, whole] = [await buffers(segmented), await buffers(compact)];
            // A wave larger than the dataset is appended compact.
            expect(inSegments.segments ?? 1).toBe(a.segments);
            if (a.segments === 1) compacted++;
            mostSegments = Math.max(mostSegments, a.segments);
            if (baseValues <= 255 && (await values(segmented)) > 255 && a.segments > 1) widened++;
            expect(whole.segments).toBeUndefined();
            expect(inSegments.bytes.length).toBe(whole.bytes.length);
            inSegments.bytes.forEach((bytes, row) => expect(Buffer.from(bytes).equals(Buffer.from(whole.bytes[row]!)), `buffer ${row} after wave ${k + 1}`).toBe(true));
            expect(await comparableInfo(segmented)).toEqual(await comparableInfo(compact));
            compared++;
          }
        },
      ),
      { numRuns: 25, seed: 20261130 },
    );
    expect(compared).toBeGreaterThan(20);
    expect(mostSegments).toBeGreaterThanOrEqual(4);
    expect(widened).toBeGreaterThan(0);
    expect(compacted).toBeGreaterThan(0);
  }, 600_000);

  it('a byte changed in a part (of the first segment or of a wave) is refused when the buffer is read, not answered; the table of parts is covered by the checksum', async () => {
    const rows = (count: number, seed: number): Row[] =>
      Array.from({ length: count }, (_, i) => ({ txt: TEXTS[(i * 7 + seed) % TEXTS.length]!, big: String((i * 13 + seed) % 300), grp: String(1 + ((i + seed) % 9)), m: ANSWERS.slice(0, i % 3).join(';'), w: 1 + ((i * 5 + seed) % 17), w2: i % 4 }));
    const first = file('first.arrow');
    await buildDataset(csv(rows(300, 1), 0), { weights: ['w', 'w2'], survey: 'T', id: 'pid', multi: [{ column: 'm', delimiter: ';' }], out: first });
    const out = file('segmented.arrow');
    expect((await appendRows(first, csv(rows(120, 2), 300), { out })).segments).toBe(2);
    const fd = openSync(out, 'r');
    const structure = readArrowStructure(fd, fstatSync(fd).size);
    const stored = storedRows(out, fd, structure);
    closeSync(fd);
    expect(structure.schema.metadata.get(FORMAT_KEY)).toBe('crosstab-engine/4');
    const segments = JSON.parse(structure.schema.metadata.get(SEGMENTS_KEY)!) as StoredSegments;
    const index = segments.buffers.findIndex((buffer) => buffer.name === 'code:txt=a');
    const parts = segments.buffers[index]!.parts;
    expect(parts.map((part) => part.segment)).toEqual([0, 1]);
    const bytes = readFileSync(out);
    for (const part of parts) {
      const entry = stored[part.row]!;
      const damaged = file('damaged.arrow');
      const copy = Uint8Array.from(bytes);
      copy[entry.fileOffset]! ^= 0x04;
      writeFileSync(damaged, copy);
      const dataset = await openDataset(damaged, { cellCache: 0 });
      try {
        const error = (await dataset.crosstab({ base: '*', targets: ['txt=a'] }).catch((e: unknown) => e)) as CrosstabError;
        expect(error, `part of segment ${part.segment}`).toBeInstanceOf(CrosstabError);
        expect(error.code).toBe(ErrorCode.corruptDataset);
        expect(error.message).toContain(`stored part ${part.row} (code:txt=a): its bytes were modified or damaged`);
      } finally {
        await dataset.close();
      }
      const full = (await openDataset(damaged, { verify: 'full' }).catch((e: unknown) => e)) as CrosstabError;
      expect(full.code).toBe(ErrorCode.corruptDataset);
    }
    // The segment table: a part moved to another row is refused at open.
    const moved = JSON.stringify({ ...segments, buffers: segments.buffers.map((buffer, row) => (row === index ? { ...buffer, parts: [...buffer.parts].reverse() } : buffer)) });
    const table = Buffer.from(JSON.stringify(segments));
    const at = bytes.indexOf(table);
    expect(at).toBeGreaterThan(0);
    const swapped = file('swapped.arrow');
    // As long as the table it replaces (the footer's lengths unchanged): the same parts, another order.
    const replaced = Buffer.from(moved);
    expect(replaced.byteLength).toBe(table.byteLength);
    writeFileSync(swapped, Buffer.concat([bytes.subarray(0, at), replaced, bytes.subarray(at + table.byteLength)]));
    const error = (await openDataset(swapped).catch((e: unknown) => e)) as CrosstabError;
    expect(error.code).toBe(ErrorCode.corruptDataset);
    expect(error.message).toContain('fails its checksum');
  });

  it('preload: every buffer put together at open, each part checked at the buffer\'s first use as a compact file\'s buffer is; a byte changed anywhere in a part (its first, its last) is refused there, naming the part', async () => {
    const rows = (count: number, seed: number): Row[] =>
      Array.from({ length: count }, (_, i) => ({ txt: TEXTS[(i * 7 + seed) % TEXTS.length]!, big: String((i * 13 + seed) % 300), grp: String(1 + ((i + seed) % 9)), m: ANSWERS.slice(0, i % 3).join(';'), w: 1 + ((i * 5 + seed) % 17), w2: i % 4 }));
    const first = file('first.arrow');
    await buildDataset(csv(rows(300, 3), 0), { weights: ['w', 'w2'], survey: 'T', id: 'pid', multi: [{ column: 'm', delimiter: ';' }], out: first });
    const out = file('segmented.arrow');
    expect((await appendRows(first, csv(rows(120, 4), 300), { out })).segments).toBe(2);
    const fd = openSync(out, 'r');
    const structure = readArrowStructure(fd, fstatSync(fd).size);
    const stored = storedRows(out, fd, structure);
    closeSync(fd);
    const segments = JSON.parse(structure.schema.metadata.get(SEGMENTS_KEY)!) as StoredSegments;
    const kernel = mainThreadKernel();
    const open = async (path: string) => {
      const data = await loadDataset(path, kernel, { preload: true });
      return { data, [Symbol.dispose]: () => (data.close(), data.regions.forEach((region) => kernel.memory.release(region.ptr, region.bytes))) };
    };
    // Undamaged: every buffer as verify: 'full' puts it together.
    const expected = await buffers(out);
    {
      using opened = await open(out);
      opened.data.buffers.forEach((entry, row) => expect(Buffer.from(kernel.memory.bytes(opened.data.buffer(row).ptr, expected.bytes[row]!.byteLength)).equals(Buffer.from(expected.bytes[row]!)), `buffer ${row}`).toBe(true));
    }
    const bytes = readFileSync(out);
    let damagedParts = 0;
    for (const [index, buffer] of segments.buffers.entries()) {
      for (const part of buffer.parts) {
        const entry = stored[part.row]!;
        for (const at of [entry.fileOffset, entry.fileOffset + entry.stored - 1]) {
          const damaged = file('damaged.arrow');
          const copy = Uint8Array.from(bytes);
          copy[at]! ^= 0x10;
          writeFileSync(damaged, copy);
          using opened = await open(damaged);
          const error = (() => {
            try {
              opened.data.buffer(index);
            } catch (e) {
              return e as CrosstabError;
            }
          })();
          const where = `part of segment ${part.segment} of buffer ${index} (${buffer.name}), byte ${at - entry.fileOffset} of ${entry.stored}`;
          expect(error, where).toBeInstanceOf(CrosstabError);
          expect(error!.code, where).toBe(ErrorCode.corruptDataset);
          expect(error!.message, where).toContain(`stored part ${part.row} (${buffer.name}): its bytes were modified or damaged`);
          // The buffers without that part answer.
          const other = segments.buffers.findIndex((candidate) => !candidate.parts.some((p) => p.row === part.row));
          expect(() => opened.data.buffer(other), where).not.toThrow();
          damagedParts++;
        }
      }
    }
    expect(damagedParts).toBeGreaterThan(40);
  });

  it('weight, verify and export read a dataset in segments as the compact one: the same weights, the same export; weight --out writes one file', async () => {
    const rows = (count: number, seed: number): Row[] =>
      Array.from({ length: count }, (_, i) => ({ txt: TEXTS[(i * 3 + seed) % TEXTS.length]!, big: String((i * 11 + seed) % 50), grp: String(1 + ((i * 7 + seed) % 9)), m: ANSWERS.slice(0, (i + seed) % 4).join(';'), w: 1 + ((i * 5 + seed) % 17), w2: i % 4 }));
    const first = file('first.arrow');
    await buildDataset(csv(rows(200, 1), 0), { weights: ['w', 'w2'], survey: 'T', id: 'pid', multi: [{ column: 'm', delimiter: ';' }], out: first });
    const [segmented, compact] = [file('segmented.arrow'), file('compact.arrow')];
    const wave = csv(rows(90, 5), 200);
    expect((await appendRows(first, wave, { out: segmented })).segments).toBe(2);
    await appendRows(first, wave, { out: compact, compact: true });
    const targets = { margins: [{ variable: 'grp', proportions: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [String(i + 1), 1 / 9])) }] };
    // Without --out: a weights file beside each, bound to its dataset's checksum.
    for (const path of [segmented, compact]) await weightDataset(path, { targets, method: 'rake', name: 'raked' });
    // With --out: one file of all the respondents (format 2 or 3, no segments).
    const [weightedSegmented, weightedCompact] = [file('weighted-segmented.arrow'), file('weighted-compact.arrow')];
    await weightDataset(segmented, { targets, method: 'rake', name: 'raked2', out: weightedSegmented });
    await weightDataset(compact, { targets, method: 'rake', name: 'raked2', out: weightedCompact });
    const [a, b] = [await buffers(weightedSegmented), await buffers(weightedCompact)];
    expect(a.segments).toBeUndefined();
    expect(a.bytes.length).toBe(b.bytes.length);
    a.bytes.forEach((bytes, row) => expect(Buffer.from(bytes).equals(Buffer.from(b.bytes[row]!)), `buffer ${row}`).toBe(true));
    for (const weight of ['raked', 'w2']) {
      const query = { base: '*', targets: ['grp=1', 'txt=a OR m=b', 'big=3..40'], weight };
      const [x, y] = [await openDataset(segmented, { cellCache: 0 }), await openDataset(compact, { cellCache: 0 })];
      try {
        expect((await x.crosstab(query)).targets).toEqual((await y.crosstab(query)).targets);
      } finally {
        await Promise.all([x.close(), y.close()]);
      }
    }
    const [exportA, exportB] = [file('a.csv'), file('b.csv')];
    const columns = ['_row', 'pid', 'raked', 'w', 'txt', 'big'];
    await exportColumns(segmented, { columns, out: exportA });
    await exportColumns(compact, { columns, out: exportB });
    expect(readFileSync(exportA).equals(readFileSync(exportB))).toBe(true);
    const verified = spawnSync(process.execPath, [cliPath, 'verify', segmented], { encoding: 'utf8' });
    expect(verified.status, verified.stderr).toBe(0);
  });

  it('adds a segment per wave up to 8, then writes one file of all the respondents; --compact always does', async () => {
    const rows = (count: number, seed: number): Row[] =>
      Array.from({ length: count }, (_, i) => ({ txt: TEXTS[(i + seed) % TEXTS.length]!, big: String((i * 7 + seed) % 40), grp: String(1 + ((i + seed) % 9)), m: ANSWERS.slice(0, (i + seed) % 3).join(';'), w: 1 + ((i + seed) % 5), w2: 1 }));
    let dataset = file('first.arrow');
    await buildDataset(csv(rows(100, 0), 0), { weights: ['w', 'w2'], survey: 'T', id: 'pid', out: dataset });
    const seen: number[] = [];
    let first = 100;
    for (let wave = 1; wave <= 9; wave++) {
      const out = file(`wave-${wave}.arrow`);
      seen.push((await appendRows(dataset, csv(rows(10, wave), first), { out })).segments);
      first += 10;
      dataset = out;
    }
    expect(seen).toEqual([2, 3, 4, 5, 6, 7, 8, 1, 2]);
    const compact = file('compact.arrow');
    expect((await appendRows(dataset, csv(rows(10, 10), first), { out: compact, compact: true })).segments).toBe(1);
    expect((await buffers(compact)).segments).toBeUndefined();
    // The CLI's flag.
    const viaCli = file('cli.arrow');
    const run = spawnSync(process.execPath, [cliPath, 'append', dataset, csv(rows(10, 11), first), '--out', viaCli, '--compact'], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/in \d+ segments/);
    expect((await buffers(viaCli)).segments).toBeUndefined();
    const segmented = spawnSync(process.execPath, [cliPath, 'append', dataset, csv(rows(10, 11), first), '--out', file('cli-segments.arrow')], { encoding: 'utf8' });
    expect(segmented.status, segmented.stderr).toBe(0);
    expect(segmented.stderr).toContain('in 3 segments');
  });
});
