// Waves of one tracker survey for the publishing tests: wave 1 alone, then waves 1 and 2
// (the same respondents plus new ones), each written as a dataset file of the survey WAVES.
// Every version answers the same queries with different figures, so an answer tells which
// version gave it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { closeSync, copyFileSync, fstatSync, mkdtempSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readArrowStructure } from '../../src/dataset/file/arrow-file.js';
import { storedRows } from '../../src/dataset/file/reader.js';
import { FORMAT_KEY, SEGMENTS_KEY, type StoredSegments } from '../../src/dataset/format.js';
import { buildDataset, openDataset, toServiceResponse } from '../../src/index.js';
import { writeMadeDataset } from './make-dataset.js';
import { cliPath } from './paths.js';

/** The query the publishing tests send: its figures differ between versions. */
export const WAVE_QUERY = { SurveyCode: 'WAVES', PopulationBaseCode: 'region=N,S', TargetCodes: ['brand=A', 'age=25..44 AND brand=B,C'] };

/** Columns and weights of the first `rows` respondents (the same for every wave count). */
export function waveRows(rows: number): { columns: Record<string, string[]>; weights: number[] } {
  const region: string[] = [];
  const brand: string[] = [];
  const age: string[] = [];
  const weights: number[] = [];
  let seed = 20_261_129;
  const next = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
  for (let row = 0; row < rows; row++) {
    region.push('NSEW'[Math.floor(next() * 4)] as string);
    brand.push(next() < 0.05 ? '' : ('ABCDE'[Math.floor(next() * 5)] as string));
    age.push(String(18 + Math.floor(next() * 62)));
    weights.push(Math.round(next() * 4000 + 50) / 4);
  }
  return { columns: { region, brand, age }, weights };
}

/** Writes the dataset of the first `rows` respondents as survey WAVES; its path. */
export async function writeWave(rows: number, survey = 'WAVES'): Promise<string> {
  const { columns, weights } = waveRows(rows);
  return writeMadeDataset(columns, weights, undefined, { survey });
}

/** The body POST /v1/crosstab answers with for WAVE_QUERY on the dataset at `path`. */
export async function waveAnswer(path: string): Promise<{ checksum: string; builtAt: string; body: unknown }> {
  const dataset = await openDataset(path, { cellCache: 0 });
  try {
    const result = await dataset.crosstab({ base: WAVE_QUERY.PopulationBaseCode, targets: WAVE_QUERY.TargetCodes });
    return { checksum: dataset.info.checksum, builtAt: dataset.info.createdAt, body: JSON.parse(JSON.stringify(toServiceResponse(result))) };
  } finally {
    await dataset.close();
  }
}

/** Publishes `from` at `to` as a deployment does: a copy beside it, renamed over it in one step. */
export function publish(from: string, to: string): void {
  const staging = `${to}.publishing`;
  copyFileSync(from, staging);
  renameSync(staging, to);
}

/** Queries whose figures differ between versions, beside WAVE_QUERY: a reload is checked on each. */
export const WAVE_QUERIES = [
  WAVE_QUERY,
  { SurveyCode: 'WAVES', PopulationBaseCode: '*', TargetCodes: ['region=E', 'brand=E OR age=18..24'] },
  { SurveyCode: 'WAVES', PopulationBaseCode: 'brand=A,B', TargetCodes: ['age=60..', 'region=W AND NOT age=30..39'] },
];

/** The POST /v1/crosstab bodies of WAVE_QUERIES on the dataset at `path`. */
export async function waveAnswers(path: string): Promise<unknown[]> {
  const dataset = await openDataset(path, { cellCache: 0 });
  try {
    const bodies: unknown[] = [];
    for (const query of WAVE_QUERIES) bodies.push(JSON.parse(JSON.stringify(toServiceResponse(await dataset.crosstab({ base: query.PopulationBaseCode, targets: query.TargetCodes })))));
    return bodies;
  } finally {
    await dataset.close();
  }
}

/**
 * The respondents `from` to `to` (waveRows) as a CSV file: a wave for `crosstab append`, or,
 * from 0, every row for a build. Weights are multiples of 1/4, so every weighted sum is exact
 * in f64 whatever the order it is added in: an appended file and a build of the same rows
 * answer equal to the bit.
 */
export function writeWaveCsv(from: number, to: number): string {
  const { columns, weights } = waveRows(to);
  const lines = ['region,brand,age,w'];
  for (let row = from; row < to; row++) lines.push(`${columns['region']![row]},${columns['brand']![row]},${columns['age']![row]},${weights[row]}`);
  const path = join(waveFolder(), `rows-${from}-${to}.csv`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

let folder: string | undefined;
function waveFolder(): string {
  folder ??= mkdtempSync(join(tmpdir(), 'crosstab-waves-'));
  return folder;
}

/** `crosstab build` of the first `rows` respondents as survey WAVES (from their CSV); its path. */
export async function buildWaveCsv(rows: number): Promise<string> {
  const out = join(waveFolder(), `built-${rows}-${Math.random().toString(36).slice(2)}.arrow`);
  await buildDataset(writeWaveCsv(0, rows), { weights: ['w'], survey: 'WAVES', out });
  return out;
}

/**
 * `crosstab append DATASET <respondents from..to> --out DATASET`, as a monthly publish runs it
 * (the new file renamed over the one given), in a child process while this one goes on (its
 * clients keep asking); the number of segments the CLI says it wrote.
 */
export async function appendWave(dataset: string, from: number, to: number, extra: string[] = []): Promise<number> {
  const { stderr } = await promisify(execFile)(process.execPath, [cliPath, 'append', dataset, writeWaveCsv(from, to), '--out', dataset, ...extra], { encoding: 'utf8' });
  return Number(/ in (\d+) segments/.exec(stderr)?.[1] ?? 1);
}

/** The stored parts of a dataset file in segments: its format, and where each buffer's part of each segment is. */
export function segmentParts(path: string): { format: string | undefined; parts: Array<{ name: string; segment: number; fileOffset: number; stored: number }> } {
  const fd = openSync(path, 'r');
  try {
    const structure = readArrowStructure(fd, fstatSync(fd).size);
    const stored = storedRows(path, fd, structure);
    const table = structure.schema.metadata.get(SEGMENTS_KEY);
    const segments = table === undefined ? { buffers: [] } : (JSON.parse(table) as StoredSegments);
    const parts = segments.buffers.flatMap((buffer) => buffer.parts.map((part) => ({ name: buffer.name, segment: part.segment, fileOffset: stored[part.row]!.fileOffset, stored: stored[part.row]!.stored })));
    return { format: structure.schema.metadata.get(FORMAT_KEY), parts };
  } finally {
    closeSync(fd);
  }
}

/** A copy of the file at `path` with one byte flipped in the middle of the part of `segment` of its first buffer named `name`. */
export function damagedPart(path: string, name: string, segment: number): Buffer {
  const part = segmentParts(path).parts.find((candidate) => candidate.name === name && candidate.segment === segment);
  if (part === undefined) throw new Error(`${path} has no part of ${name} in segment ${segment}`);
  const bytes = readFileSync(path);
  bytes[part.fileOffset + Math.floor(part.stored / 2)]! ^= 0xff;
  return bytes;
}
