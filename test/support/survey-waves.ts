// Waves of one tracker survey for the publishing tests: wave 1 alone, then waves 1 and 2
// (the same respondents plus new ones), each written as a dataset file of the survey WAVES.
// Every version answers the same queries with different figures, so an answer tells which
// version gave it.
import { renameSync, copyFileSync } from 'node:fs';
import { openDataset, toServiceResponse } from '../../src/index.js';
import { writeMadeDataset } from './make-dataset.js';

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
