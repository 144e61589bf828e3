// A dataset file written before the build, append and weighting refused weights outside
// 0, 1e-50 .. 1e50 (src/dataset/weight-range.ts) may hold such weights: its answers would be
// wrong figures (a base of Infinity makes every percentage 0%; squares in the subnormals give
// wrong standard errors). The first read of such a weight buffer (of the dataset file, or of
// its weights file) refuses, naming the file, the weight and the first respondent outside;
// `crosstab push` refuses before it writes anything. The files are written past the input
// readers' check: compiled from a raw table (writeMadeDataset), or by writeWeightsFile.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, fstatSync, openSync, readdirSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readArrowStructure } from '../src/dataset/file/arrow-file.js';
import { storedRows } from '../src/dataset/file/reader.js';
import { SEGMENTS_KEY, type StoredSegments } from '../src/dataset/format.js';
import { writeWeightsFile } from '../src/dataset/file/add-weight.js';
import { loadDataset } from '../src/dataset/file/reader.js';
import { CrosstabError, ErrorCode, pushDataset } from '../src/index.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { writeMadeDataset } from './support/make-dataset.js';
import { cliPath } from './support/paths.js';

const crosstab = (...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8' });
const x = ['a', 'b', 'a', 'b', 'a', 'b', 'a', 'b'];
const y = ['c', 'c', 'd', 'd', 'c', 'c', 'd', 'd'];
const table = (path: string, ...more: string[]) => crosstab('table', path, '--rows', 'x', '--columns', 'y', '--stats', 'vpct,se', '--format', 'csv', ...more);

/** A dataset whose own weight w is in the range, with a weights file holding weight "bad": 5e-320 for respondent 5 (input row 5). */
async function withBadWeightsFile(): Promise<string> {
  const path = await writeMadeDataset({ x, y }, [1, 2, 3, 1, 2, 3, 1, 2]);
  const kernel = mainThreadKernel();
  const source = await loadDataset(path, kernel);
  try {
    await writeWeightsFile(source, kernel, 'bad', Float64Array.from([1, 1, 1, 1, 5e-320, 1, 1, 1]));
  } finally {
    source.close();
  }
  return path;
}

describe('weights outside the range in a stored file', () => {
  it.each([
    ['a sum past the doubles', [1, 2, 1e300, 1e300, 1, 2, 1, 2], 3, 'above 1e+50'],
    ['squares in the subnormals', [1e-170, 2e-170, 3e-170, 1e-170, 2e-170, 3e-170, 1e-170, 2e-170], 1, 'above 0 and below 1e-50'],
  ])('a dataset file with %s is refused at its first query, naming the file, the weight and the respondent', async (_, weights, respondent, problem) => {
    const path = await writeMadeDataset({ x, y }, weights);
    const run = table(path);
    expect(run.stdout).toBe('');
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toContain(path);
    expect(run.stderr).toContain('weight "w" of respondent ');
    expect(run.stderr).toContain(`(input row ${respondent})`);
    expect(run.stderr).toContain(problem);
    expect(run.stderr).toContain('Rebuild');
  });

  it('the same rows with weights in the range answer', async () => {
    const run = table(await writeMadeDataset({ x, y }, [1, 2, 3, 1, 2, 3, 1, 2]));
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it("a weights file's weight outside the range is refused naming the weights file; the dataset's own weight still answers", async () => {
    const path = await withBadWeightsFile();
    const bad = table(path, '--weight', 'bad');
    expect(bad.status, bad.stderr).toBe(1);
    expect(bad.stderr).toContain(`${path}.weights`);
    expect(bad.stderr).toContain('weight "bad" of respondent ');
    expect(bad.stderr).toContain('(input row 5)');
    expect(bad.stderr).toContain('above 0 and below 1e-50');
    const good = table(path, '--weight', 'w');
    expect(good.stderr).toBe('');
    expect(good.status).toBe(0);
  });

  it('crosstab push refuses such a file before it connects to ClickHouse', async () => {
    const path = await writeMadeDataset({ x, y }, [1, 2, 1e300, 1e300, 1, 2, 1, 2]);
    // Nothing listens on port 1: a push that read the weights after connecting fails to connect instead.
    const error = await pushDataset(path, { clickhouse: 'clickhouse://127.0.0.1:1/crosstab_test?table=t' }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(CrosstabError);
    expect((error as CrosstabError).code).toBe(ErrorCode.invalidInput);
    expect((error as CrosstabError).message).toContain('(input row 3)');
  });
});

describe('crosstab append refuses a dataset holding a stored weight outside the range, writing nothing', () => {
  const wave = (path: string) => {
    const csv = join(dirname(path), 'wave.csv');
    writeFileSync(csv, 'x,y,w\na,c,1\nb,d,2\n');
    return csv;
  };
  // Respondents are stored in order of weight: the input row names the one outside the range.
  const expectRefused = (path: string, out: string, run: ReturnType<typeof crosstab>, inputRow: number, problem: string) => {
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toContain(`${path}: weight "w" of respondent `);
    expect(run.stderr).toContain(`(input row ${inputRow}), the first outside the range`);
    expect(run.stderr).toContain(problem);
    expect(run.stderr).toContain('Rebuild');
    // Nothing at --out, nor a temporary file beside it.
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dirname(out)).filter((name) => name.includes('out'))).toEqual([]);
  };

  it.each([
    ['in segments (the default)', []],
    ['--compact', ['--compact']],
  ])('%s: the same error as a query, naming the file, the weight and the respondent\'s input row', async (_, flags) => {
    const path = await writeMadeDataset({ x, y }, [1, 2, 1e300, 1e300, 1, 2, 1, 2]);
    const out = join(dirname(path), `out-${flags.length}.arrow`);
    const run = crosstab('append', path, wave(path), '--out', out, ...flags);
    expectRefused(path, out, run, 3, 'above 1e+50');
    const subnormal = await writeMadeDataset({ x, y }, [1, 2, 3, 1, 2, 3, 1e-170, 2]);
    const second = crosstab('append', subnormal, wave(subnormal), '--out', out, ...flags);
    expectRefused(subnormal, out, second, 7, 'above 0 and below 1e-50');
  });

  it('a dataset in segments: a weight of a later segment, named by its respondent over every segment', async () => {
    const path = await writeMadeDataset({ x, y }, [1, 2, 3, 1, 2, 3, 1, 2]);
    const segmented = join(dirname(path), 'segmented.arrow');
    const first = crosstab('append', path, wave(path), '--out', segmented);
    expect(first.status, first.stderr).toBe(0);
    // The wave's second weight (respondent 10) made 1e300 in its part of the file (its hash no longer holds: only a read checks that).
    const fd = openSync(segmented, 'r+');
    try {
      const structure = readArrowStructure(fd, fstatSync(fd).size);
      const rows = storedRows(segmented, fd, structure);
      const segments = JSON.parse(structure.schema.metadata.get(SEGMENTS_KEY)!) as StoredSegments;
      const weights = segments.buffers.find((buffer) => buffer.name === 'weight:w')!;
      expect(weights.parts.map((part) => part.segment)).toEqual([0, 1]);
      // The wave's respondents are stored in order of weight: 1 then 2.
      writeSync(fd, new Uint8Array(Float64Array.of(1e300).buffer), 0, 8, rows[weights.parts[1]!.row]!.fileOffset + 8);
    } finally {
      closeSync(fd);
    }
    const out = join(dirname(path), 'out-segmented.arrow');
    for (const flags of [[], ['--compact']]) {
      const run = crosstab('append', segmented, wave(path), '--out', out, ...flags);
      // In segments the weights are checked as stored; --compact reads them, checking their hash first.
      if (flags.length === 0) {
        expectRefused(segmented, out, run, 10, 'above 1e+50');
        expect(run.stderr).toContain('respondent 10 (input row 10)');
      } else {
        expect(run.status, run.stderr).toBe(1);
        expect(run.stderr).toContain('fails the checksum');
        expect(existsSync(out)).toBe(false);
      }
    }
  });
});

describe('crosstab weight --out refuses a dataset holding a stored weight outside the range, writing nothing', () => {
  it("another weight than the base (a weights file's) is refused as its first read refuses it, not copied into the new file", async () => {
    const path = await withBadWeightsFile();
    const targets = join(dirname(path), 'targets.json');
    writeFileSync(targets, JSON.stringify({ margins: [{ variable: 'x', totals: { a: 60, b: 40 } }] }));
    const out = join(dirname(path), 'weighted-out.arrow');
    // The new weight is made from the dataset's own weight, w (in the range); only the copy reads "bad".
    const run = crosstab('weight', path, '--targets', targets, '--method', 'rake', '--name', 'raked', '--base-weight', 'w', '--out', out);
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toContain(`${path}.weights`);
    expect(run.stderr).toContain('weight "bad" of respondent ');
    expect(run.stderr).toContain('above 0 and below 1e-50');
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dirname(out)).filter((name) => name.includes('weighted-out'))).toEqual([]);
  });
});
