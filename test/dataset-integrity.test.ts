// Every byte of a dataset file that can change an answer is covered by a checksum:
// the buffer table and metadata at every open, each buffer's bytes before a query
// first reads them (or at open with verify: 'full'). Older format versions are refused with
// the command that rebuilds them.
import { closeSync, copyFileSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { tableFromIPC, tableToIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readArrowStructure } from '../src/dataset/file/arrow-file.js';
import { rebuildCommand } from '../src/dataset/file/rebuild-command.js';
import { CrosstabError, ErrorCode, openDataset, type OpenOptions } from '../src/index.js';
import { cliPath } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-integrity-'));
// Hundreds of flipped copies of the GSS dataset (about 1 GB in all): never left behind.
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const queries = [
  { base: '*', targets: ['age=44', 'sex=2', 'degree=3..4', 'year=2024 AND NOT race=1'] },
  { base: 'year=2024', targets: ['F18-34', 'relig=1,2', 'fefam=NA', 'vpsu=4228'] },
];

let good: Buffer;
let goodPath: string;
/** Absolute file ranges of each buffer-table column of the first batch: [validity, (offsets,) values]. */
let columns: Record<string, Array<{ offset: number; length: number }>>;
let answers: unknown;
/** Buffer row of each buffer name, and its byte range in the file. */
let bufferAt: Map<string, { row: number; offset: number; length: number }>;

async function answersOf(path: string, options: OpenOptions = {}): Promise<unknown> {
  const ds = await openDataset(path, options);
  try {
    const results = [];
    for (const query of queries) results.push(await ds.crosstab(query));
    return results;
  } finally {
    ds.close();
  }
}

async function failure(promise: Promise<unknown>): Promise<CrosstabError | undefined> {
  return promise.then(
    () => undefined,
    (error: unknown) => {
      expect(error).toBeInstanceOf(CrosstabError);
      return error as CrosstabError;
    },
  );
}

let serial = 0;
function flipped(position: number, mask = 0x01): string {
  const bytes = Buffer.from(good);
  bytes[position]! ^= mask;
  const path = join(dir, `flip-${serial++}.arrow`);
  writeFileSync(path, bytes);
  return path;
}

beforeAll(async () => {
  goodPath = join(dir, 'good.arrow');
  copyFileSync(inject('testDatasets').gss, goodPath);
  good = readFileSync(goodPath);
  const fd = openSync(goodPath, 'r');
  try {
    const { schema, batches } = readArrowStructure(fd, good.byteLength);
    expect(batches.length).toBe(1);
    columns = Object.fromEntries(schema.fields.map((field, i) => [field.name, batches[0]!.fields[i]!]));
  } finally {
    closeSync(fd);
  }
  const table = tableFromIPC(good);
  const names = table.getChild('name')!.toArray() as string[];
  const offsets = table.getChild('data')!.data[0]!.valueOffsets;
  bufferAt = new Map(names.map((name, row) => [name, { row, offset: columns.data![2]!.offset + offsets[row]!, length: offsets[row + 1]! - offsets[row]! }]));
  answers = await answersOf(goodPath);
});

describe('the buffer table and metadata are checked at every open', () => {
  it('a flipped bit in the count column of age=44 is refused, not answered as 1,339', async () => {
    const row = bufferAt.get('code:age=44')!.row;
    const error = await failure(openDataset(flipped(columns.count![1]!.offset + row * 4 + 1, 0x02)));
    expect(error?.code).toBe(ErrorCode.corruptDataset);
    expect(error?.message).toMatch(/checksum|malformed buffer/);
  });

  // One byte in each column of the buffer table (every row is covered the same way).
  it.each([
    ['count', 1, 'count (respondents of a code)'],
    ['kind', 1, 'kind (dense or sparse)'],
    ['name', 2, 'name'],
    ['name', 1, 'name offsets'],
    ['hash', 2, 'hash'],
    ['hash', 1, 'hash offsets'],
    ['data', 1, 'data offsets'],
  ])('a flipped byte in column %s (buffer %i: %s) is refused at open', async (column, buffer) => {
    const region = columns[column]![buffer]!;
    for (const at of [0, Math.floor(region.length / 2), region.length - 1]) {
      const error = await failure(openDataset(flipped(region.offset + at)));
      expect(error?.code, `byte ${at} of ${column}`).toBe(ErrorCode.corruptDataset);
    }
  });

  it('a changed figure in the metadata JSON (a value count) is refused at open', async () => {
    const at = good.indexOf('"counts":[');
    expect(at).toBeGreaterThan(0);
    const digit = at + '"counts":['.length;
    const bytes = Buffer.from(good);
    bytes[digit] = bytes[digit] === 0x31 ? 0x32 : 0x31;
    const path = join(dir, 'meta.arrow');
    writeFileSync(path, bytes);
    const error = await failure(openDataset(path));
    expect(error?.code).toBe(ErrorCode.corruptDataset);
    expect(error?.message).toMatch(/checksum/);
  });

  it('a changed dataset checksum is refused at open', async () => {
    const metadata = tableFromIPC(good).schema.metadata;
    const at = good.lastIndexOf(metadata.get('crosstab.checksum')!);
    const error = await failure(openDataset(flipped(at + 3)));
    expect(error?.code).toBe(ErrorCode.corruptDataset);
  });
});

describe('buffer bytes are checked before a query first reads them', () => {
  it.each([
    ['code:age=44', 'age=44'],
    ['code:sex=2', 'sex=2'],
    // id has too many values for the automatic range index, so a range of it reads its index column.
    ['index:id', 'id=100..2000'],
    ['weight:wtssps', 'degree=3..4'],
  ])('a flipped byte in %s: open resolves, a query reading it (%s) fails, verify full refuses', async (name, target) => {
    const buffer = bufferAt.get(name)!;
    const path = flipped(buffer.offset + Math.floor(buffer.length / 3), 0x10);
    const ds = await openDataset(path);
    try {
      const error = await failure(ds.crosstab({ base: '*', targets: [target] }));
      expect(error?.code).toBe(ErrorCode.corruptDataset);
      expect(error?.message).toContain(name);
    } finally {
      ds.close();
    }
    const full = await failure(openDataset(path, { verify: 'full' }));
    expect(full?.code).toBe(ErrorCode.corruptDataset);
  });

  it('a flipped padding byte of a buffer is refused too (exact lengths: padding is hashed)', async () => {
    const sparse = [...bufferAt.entries()].find(([name, at]) => name.startsWith('code:') && at.length % 64 === 0 && at.length > 64);
    expect(sparse).toBeDefined();
    const error = await failure(openDataset(flipped(sparse![1].offset + sparse![1].length - 1), { verify: 'full' }));
    expect(error?.code).toBe(ErrorCode.corruptDataset);
  });

  it('no flipped byte anywhere in the file changes an answer: it is refused or changes nothing', async () => {
    const samples = 150;
    const step = Math.max(1, Math.floor(good.byteLength / samples));
    let refused = 0;
    for (let position = 0; position < good.byteLength; position += step) {
      const path = flipped(position, 0x04);
      const result = await answersOf(path, { verify: 'full' }).catch((error: unknown) => error);
      if (result instanceof CrosstabError) {
        expect([ErrorCode.corruptDataset, ErrorCode.unsupportedVersion], `byte ${position}: ${result.message}`).toContain(result.code);
        refused++;
      } else {
        expect(result, `byte ${position} was flipped and the answers changed`).toEqual(answers);
      }
    }
    // Nearly all of the file is buffer bytes; what is left is padding and Arrow framing.
    expect(refused).toBeGreaterThan(samples * 0.9);
  });
});

describe('open options', () => {
  it('preload reads every buffer at open and answers the same; a file changed after a lazy open is caught', async () => {
    expect(await answersOf(goodPath, { preload: true })).toEqual(answers);
    const path = join(dir, 'changed-after-open.arrow');
    copyFileSync(goodPath, path);
    const ds = await openDataset(path);
    try {
      const buffer = bufferAt.get('code:sex=2')!;
      const bytes = readFileSync(path);
      bytes[buffer.offset + 7]! ^= 0x01;
      writeFileSync(path, bytes); // same inode: the open dataset reads the changed bytes
      const error = await failure(ds.crosstab({ base: '*', targets: ['sex=2'] }));
      expect(error?.code).toBe(ErrorCode.corruptDataset);
    } finally {
      ds.close();
    }
  });

  it.each([
    [{ verify: 'yes' }, 'verify'],
    [{ preload: 1 }, 'preload'],
  ])('%j is invalid_option naming %s', async (options, field) => {
    const error = await failure(openDataset(goodPath, options as OpenOptions));
    expect(error?.code).toBe(ErrorCode.invalidOption);
    expect(error?.details.field).toBe(field);
  });
});

describe('verify', () => {
  it('crosstab verify DATASET checks every buffer and says so; exit 1 naming the damaged buffer', () => {
    const ok = spawnSync(process.execPath, [cliPath, 'verify', goodPath], { encoding: 'utf8' });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/ok: \d+ buffers/);
    const name = 'code:sex=2';
    const buffer = bufferAt.get(name)!;
    const bad = spawnSync(process.execPath, [cliPath, 'verify', flipped(buffer.offset + 5)], { encoding: 'utf8' });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('corrupt_dataset');
    expect(bad.stderr).toContain(name);
  });
});

describe('format versions', () => {
  it('a version-1 dataset is unsupported_version with the exact crosstab build command that rebuilds it', async () => {
    const table = tableFromIPC(good);
    table.schema.metadata.set('crosstab.format', 'crosstab-engine/1');
    const path = join(dir, 'v1.arrow');
    writeFileSync(path, tableToIPC(table, 'file'));
    const error = await failure(openDataset(path));
    expect(error?.code).toBe(ErrorCode.unsupportedVersion);
    expect(error?.details.hint).toContain(
      `crosstab build gss_1972_2024_sub.csv.gz --weight wtssps --survey GSS --codebook CODEBOOK.json --out ${path}`,
    );
  });

  it('the rebuild command repeats the survey design: Taylor flags, and replicate weights apart from --weight', () => {
    const base = { survey: 'NHANES', source: 'n.csv.gz', name: 'NHANES', units: 1 };
    const taylor = rebuildCommand('/d/n.arrow', JSON.stringify({ ...base, weights: [{ name: 'WTMEC2YR' }], design: { strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true } }));
    expect(taylor).toBe('crosstab build n.csv.gz --weight WTMEC2YR --survey NHANES --strata SDMVSTRA --psu SDMVPSU --nest --out /d/n.arrow');
    const replicates = { weights: ['r1', 'r2'], type: 'JKn', scale: 1, rscales: [0.5, 0.5], mse: true, degf: 1 };
    const command = rebuildCommand('/d/n.arrow', JSON.stringify({ ...base, weights: [{ name: 'w' }, { name: 'r1' }, { name: 'r2' }], design: { replicates } }));
    expect(command).toBe('crosstab build n.csv.gz --weight w --survey NHANES --replicate-weights r1 r2 --replicate-type JKn --scale 1 --rscales 0.5,0.5 --mse --degf 1 --out /d/n.arrow');
  });
});
