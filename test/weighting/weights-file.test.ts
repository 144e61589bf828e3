import { spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exportColumns, openDataset, STAT_NAMES, tableStatistics, weightDataset, type Dataset, type TableQuery } from '../../src/index.js';
import type { BufferEntry } from '../../src/dataset/file/lazy-buffers.js';
import { loadDataset } from '../../src/dataset/file/reader.js';
import { mainThreadKernel } from '../../src/kernel/kernel.js';
import { cliPath, repoRoot } from '../support/paths.js';
import { expectRWeights, fixtureDir, fixtureOptions, type Fixture } from '../support/r-weights.js';
import { rejection } from '../support/rejection.js';

/**
 * `crosstab weight` without --out: the new weight in the dataset's weights file
 * (<dataset>.weights) answers every query as the same weight written into a whole new
 * dataset file does; the weights file is refused when damaged or beside another build.
 */
const dir = mkdtempSync(join(tmpdir(), 'weights-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fixture = (name: string) => JSON.parse(readFileSync(join(fixtureDir, `${name}.json`), 'utf8')) as Fixture;
const crosstab = (...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8' });

/** A fresh copy of a bundled dataset in the test folder. */
function copyOf(name: 'gss' | 'nhanes', as: string): string {
  const path = join(dir, as);
  copyFileSync(join(repoRoot, 'datasets', 'build', `${name}.arrow`), path);
  return path;
}

/** The data of a result: its functions left out (a table's cell() reads the same arrays). */
const data = (value: unknown): unknown =>
  Array.isArray(value) || ArrayBuffer.isView(value)
    ? Array.from(value as ArrayLike<unknown>, data)
    : value !== null && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v !== 'function').map(([k, v]) => [k, data(v)]))
      : value;

/** Every table of the variables by each other, weighted by `weight`: the whole result and every statistic (standard errors of the calibrated design included). */
async function tables(dataset: Dataset, variables: string[], weight: string) {
  const answers = [];
  for (const rows of variables) {
    for (const columns of variables) {
      const query: TableQuery = { base: '*', rows: [{ variable: rows }], columns: [{ variable: columns }], weight };
      const table = await dataset.table(query);
      answers.push(data(table), data(tableStatistics(table, { stats: [...STAT_NAMES] })));
    }
  }
  return answers;
}

describe.each([
  { survey: 'gss' as const, fixture: 'gss-rake', also: ['polviews'] },
  { survey: 'nhanes' as const, fixture: 'nhanes-linear', also: ['HI_CHOL'] },
])('$survey: a weight in the weights file answers as the rewritten file', ({ survey, fixture: name, also }) => {
  it('gives the same weights (R\'s), tables, standard errors and export as --out', async () => {
    const f = fixture(name);
    const options = { targets: f.targets, method: f.method, name: 'wt_r', baseWeight: f.baseWeight, ...fixtureOptions(f) };
    const whole = join(dir, `${survey}-whole.arrow`);
    const source = copyOf(survey, `${survey}-side.arrow`);
    const before = readFileSync(source);
    const rewritten = await weightDataset(source, { ...options, out: whole });
    const side = await weightDataset(source, options);
    expect(rewritten.written).toBe('dataset');
    expect(side.written).toBe('weights-file');
    expect(side.out).toBe(`${source}.weights`);
    // The dataset file is not touched; the weights file is small.
    expect(readFileSync(source).equals(before)).toBe(true);
    expect(side.bytes).toBeLessThan(rewritten.bytes);
    expect(side.bytes).toBe(statSync(side.out).size);
    expect({ ...side, out: '', written: '', bytes: 0 }).toEqual({ ...rewritten, out: '', written: '', bytes: 0 });
    await expectRWeights(source, f);

    const a = await openDataset(whole);
    const b = await openDataset(source);
    try {
      expect(b.info.weights).toEqual(a.info.weights);
      expect(b.info.weightsFile).toMatchObject({ file: `${source}.weights`, weights: ['wt_r'] });
      expect(a.info.weightsFile).toBeUndefined();
      const variables = [...f.r.variables, ...also];
      expect(await tables(b, variables, 'wt_r')).toEqual(await tables(a, variables, 'wt_r'));
      const query = { base: '*', targets: f.r.variables.map((v) => `${v}=NA`), weight: 'wt_r' };
      expect(await b.crosstab(query)).toEqual(await a.crosstab(query));
    } finally {
      a.close();
      b.close();
    }
    await exportColumns(whole, { columns: ['_row', 'wt_r'], out: join(dir, `${survey}-whole.csv`) });
    await exportColumns(source, { columns: ['_row', 'wt_r'], out: join(dir, `${survey}-side.csv`) });
    expect(readFileSync(join(dir, `${survey}-side.csv`), 'utf8')).toBe(readFileSync(join(dir, `${survey}-whole.csv`), 'utf8'));
  });
});

describe('the weights file', () => {
  const targets = { margins: [{ variable: 'race', proportions: { '1': 0.16, '2': 0.64, '3': 0.12, '4': 0.08 } }, { variable: 'agecat', proportions: { '1': 0.26, '2': 0.27, '3': 0.28, '4': 0.19 } }] };

  it('gathers weights made one after another, each from any weight before it; names stay unique', async () => {
    const source = copyOf('nhanes', 'chain.arrow');
    await weightDataset(source, { targets, method: 'rake', name: 'wt_a' });
    await weightDataset(source, { targets, method: 'rake', name: 'wt_b', baseWeight: 'wt_a' });
    const twice = await rejection(weightDataset(source, { targets, method: 'rake', name: 'wt_a' }));
    expect(twice.code).toBe('invalid_option');
    expect(twice.message).toContain('"wt_a" is already a weight');
    const dataset = await openDataset(source);
    try {
      expect(dataset.info.weights).toEqual(['WTMEC2YR', 'wt_a', 'wt_b']);
      expect(dataset.info.weightsFile!.weights).toEqual(['wt_a', 'wt_b']);
      // Raking from the raked weight to the same targets changes nothing (the checks of convergence are R's, so to 1e-6 or so).
      const [a, b] = await Promise.all(['wt_a', 'wt_b'].map((weight) => dataset.crosstab({ base: '*', targets: ['race=1', 'agecat=4'], weight })));
      a!.targets.forEach((cell, i) => expect(b!.targets[i]!.weighted).toBeCloseTo(cell.weighted, -1));
      // The version changes with the weights file and covers the dataset's.
      expect(dataset.info.checksum).toBe(dataset.info.weightsFile!.checksum);
      expect(dataset.info.checksum).not.toBe(dataset.info.weightsFile!.datasetChecksum);
    } finally {
      dataset.close();
    }
  });

  it('never loses a weight to another weighting of the same dataset at once: the later one is refused, not written over', async () => {
    const source = copyOf('nhanes', 'race.arrow');
    await weightDataset(source, { targets, method: 'rake', name: 'wt_first' });
    // Two weightings that both start from the weights file holding wt_first.
    const settled = await Promise.allSettled(['wt_x', 'wt_y'].map((name) => weightDataset(source, { targets, method: 'rake', name })));
    const written = ['wt_x', 'wt_y'].filter((_, i) => settled[i]!.status === 'fulfilled');
    for (const outcome of settled) {
      if (outcome.status === 'rejected') {
        expect(outcome.reason.code).toBe('locked');
        expect(outcome.reason.details.hint).toMatch(/run this weighting again/i);
      }
    }
    expect(written.length).toBeGreaterThan(0);
    const dataset = await openDataset(source);
    try {
      // Every weighting that said it wrote its weight finds it there, beside the earlier one.
      expect(dataset.info.weightsFile!.weights).toEqual(['wt_first', ...written]);
    } finally {
      dataset.close();
    }
    expect(existsSync(`${source}.weights.lock`)).toBe(false);
    // A lock left by a process that no longer runs is taken over.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(`${source}.weights.lock`, `${gone}\n`);
    await weightDataset(source, { targets, method: 'rake', name: 'wt_after_crash' });
    expect(existsSync(`${source}.weights.lock`)).toBe(false);
    // One held by a running process is refused, naming it.
    writeFileSync(`${source}.weights.lock`, `${process.pid}\n`);
    const held = await rejection(weightDataset(source, { targets, method: 'rake', name: 'wt_held' }));
    expect(held.code).toBe('locked');
    expect(held.message).toContain(`process ${process.pid}`);
  });

  it('is carried into the dataset and removed when --out replaces the dataset itself', async () => {
    const source = copyOf('nhanes', 'bake.arrow');
    await weightDataset(source, { targets, method: 'rake', name: 'wt_a' });
    await weightDataset(source, { targets, method: 'rake', name: 'wt_b', out: source });
    expect(existsSync(`${source}.weights`)).toBe(false);
    const dataset = await openDataset(source);
    try {
      expect(dataset.info.weights).toEqual(['WTMEC2YR', 'wt_a', 'wt_b']);
      expect(dataset.info.weightsFile).toBeUndefined();
    } finally {
      dataset.close();
    }
  });

  it('is refused beside another build of the dataset (rebuilt, appended, replaced), naming what to do', async () => {
    const source = copyOf('nhanes', 'stale.arrow');
    await weightDataset(source, { targets, method: 'rake', name: 'wt_a' });
    // Another build of the file: here the dataset with one more weight, renamed over it.
    await weightDataset(source, { targets, method: 'rake', name: 'wt_other', out: join(dir, 'other.arrow') });
    copyFileSync(join(dir, 'other.arrow'), source);
    const error = await rejection(openDataset(source));
    expect(error.code).toBe('corrupt_dataset');
    expect(error.message).toContain(`${source}.weights: holds weights made for another version of stale.arrow`);
    expect(error.details.hint).toContain('run `crosstab weight` again');
    // The CLI says the same, for every command.
    for (const args of [['info', source], ['table', source, '--rows', 'race', '--columns', 'agecat'], ['export', source, '--columns', '_row', '--out', join(dir, 'never.csv')]]) {
      const run = crosstab(...args);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('holds weights made for another version of stale.arrow');
    }
    expect(existsSync(join(dir, 'never.csv'))).toBe(false);
    // Removed, the dataset opens as it is.
    rmSync(`${source}.weights`);
    const dataset = await openDataset(source);
    // (wt_a went into the other build with the weight made with --out.)
    expect(dataset.info.weights).toEqual(['WTMEC2YR', 'wt_a', 'wt_other']);
    expect(dataset.info.weightsFile).toBeUndefined();
    dataset.close();
  });

  it('is refused when damaged: a weight buffer (at its first use), its metadata, or truncated', async () => {
    const source = copyOf('nhanes', 'damaged.arrow');
    await weightDataset(source, { targets, method: 'rake', name: 'wt_a' });
    const file = `${source}.weights`;
    const good = readFileSync(file);
    const kernel = mainThreadKernel();
    const loaded = await loadDataset(source, kernel);
    const entry = loaded.buffers[loaded.meta.weights.find((w) => w.name === 'wt_a')!.buffer] as BufferEntry;
    loaded.close();
    for (const region of loaded.regions) kernel.memory.release(region.ptr, region.bytes);
    expect(entry.file?.path).toBe(file);
    const flip = (position: number) => {
      const fd = openSync(file, 'r+');
      const byte = Buffer.alloc(1);
      readSync(fd, byte, 0, 1, position);
      byte[0] = byte[0]! ^ 0x01;
      writeSync(fd, byte, 0, 1, position);
      closeSync(fd);
    };

    flip(entry.fileOffset + 800);
    const dataset = await openDataset(source);
    try {
      // The dataset's own weight still answers; the damaged one is refused, not summed.
      await dataset.crosstab({ base: '*', targets: ['race=1'], weight: 'WTMEC2YR' });
      const error = await rejection(dataset.crosstab({ base: '*', targets: ['race=1'], weight: 'wt_a' }));
      expect(error.code).toBe('corrupt_dataset');
      expect(error.message).toBe(`${file}: fails the checksum of buffer ${loaded.buffers.length - 1} (weight:wt_a): its bytes were modified or damaged`);
    } finally {
      dataset.close();
    }
    expect((await rejection(openDataset(source, { verify: 'full' }))).code).toBe('corrupt_dataset');
    const verify = crosstab('verify', source);
    expect(verify.status).toBe(1);
    expect(verify.stderr).toContain(`${file}: fails the checksum`);
    // Whole-file output copies it only after checking it: nothing written.
    const out = join(dir, 'never.arrow');
    const copy = await rejection(weightDataset(source, { targets, method: 'rake', name: 'wt_b', out }));
    expect(copy.message).toContain(`${file}: fails the checksum of buffer ${loaded.buffers.length - 1}`);
    expect(existsSync(out)).toBe(false);

    // The metadata (in the footer): refused at open.
    const metaAt = good.indexOf(Buffer.from('"createdAt"'));
    expect(metaAt).toBeGreaterThan(0);
    writeFileSync(file, good);
    flip(metaAt + 15);
    const meta = await rejection(openDataset(source));
    expect(meta.code).toBe('corrupt_dataset');
    expect(meta.message).toBe(`${file}: fails its checksum (the file was modified or damaged)`);

    // Truncated.
    writeFileSync(file, good);
    truncateSync(file, good.length - 100);
    const short = await rejection(openDataset(source));
    expect(short.code).toBe('corrupt_dataset');
    expect(short.message).toContain(`${file}: is damaged`);
  });
});
