import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { WeightOptions } from '../../src/index.js';
import { loadDataset } from '../../src/dataset/file/reader.js';
import { rankColumn, weightColumn } from '../../src/dataset/file/respondent-columns.js';
import { mainThreadKernel } from '../../src/kernel/kernel.js';
import { repoRoot } from './paths.js';

/** One case of scripts/weight-fixtures.R: targets, options and R's weights. */
export interface Fixture {
  case: string;
  dataset: string;
  baseWeight: string;
  method: WeightOptions['method'];
  options: { epsilon?: number; maxIterations?: number; bounds?: [number, number]; trim?: [number, number] } | [];
  targets: Record<string, unknown>;
  r: {
    sum: number;
    variables: string[];
    /** R's factor per cell; null after trimming, which makes weights differ within a cell. */
    cells: Array<{ values: Record<string, string>; factor: number; respondents: number }> | null;
    /** After trimming: R's weight per respondent (input order) with its cell and base weight. */
    respondents?: { keys: string[]; cell: number[]; base: number[]; weight: number[] };
    table: { rows: string; columns: string; cells: Array<{ row: string; column: string; weighted: number }> } | null;
  };
}

export const fixtureDir = join(repoRoot, 'test', 'fixtures', 'weights');

export function readFixtures(): Fixture[] {
  return readdirSync(fixtureDir)
    .filter((file) => file.endsWith('.json'))
    .map((file) => JSON.parse(readFileSync(join(fixtureDir, file), 'utf8')) as Fixture);
}

export const relative = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-300);

/** The fixture's options as weightDataset() takes them (R writes an empty list as []). */
export const fixtureOptions = (fixture: Fixture) => (Array.isArray(fixture.options) ? {} : fixture.options);

/** R's weight for a respondent of cell `key` (values joined by \r, "NA" for blank) with base weight `base`. */
function expectedWeight(fixture: Fixture): (key: string, base: number) => number | undefined {
  const variables = fixture.r.variables;
  if (fixture.r.cells !== null) {
    const factorOf = new Map(fixture.r.cells.map((cell) => [variables.map((v) => cell.values[v]).join('\r'), cell.factor]));
    return (key, base) => {
      const factor = factorOf.get(key);
      return factor === undefined ? undefined : base * factor;
    };
  }
  // Per respondent: R's rows of the cell with the same base weight (to rounding of the JSON text) have one weight.
  const rows = fixture.r.respondents!;
  const byCell = new Map<string, Array<[number, number]>>();
  rows.cell.forEach((cell, i) => {
    const key = rows.keys[cell]!;
    const list = byCell.get(key) ?? [];
    list.push([rows.base[i]!, rows.weight[i]!]);
    byCell.set(key, list);
  });
  return (key, base) => byCell.get(key)?.find(([b]) => relative(b, base) < 1e-12)?.[1];
}

/**
 * Checks every respondent's `wt_r` in the dataset `file` against R's weight for it (1e-9
 * relative), and the weights' sum against R's.
 */
export async function expectRWeights(file: string, fixture: Fixture): Promise<void> {
  const kernel = mainThreadKernel();
  const dataset = await loadDataset(file, kernel);
  try {
    const stored = fixture.r.variables.map((name) => dataset.meta.variables.find((v) => v.name === name)!);
    const columns = stored.map((variable) => rankColumn(dataset, kernel, variable));
    const base = weightColumn(dataset, kernel, fixture.baseWeight);
    const weights = weightColumn(dataset, kernel, 'wt_r');
    const expected = expectedWeight(fixture);
    let worst = 0;
    let sum = 0;
    for (let r = 0; r < weights.length; r++) {
      const key = stored.map((variable, v) => (columns[v]![r] === 0 ? 'NA' : variable.values[columns[v]![r]! - 1])).join('\r');
      const want = expected(key, base[r]!);
      if (want === undefined) expect.fail(`respondent ${r} (cell ${key}, base ${base[r]}) has no counterpart in R's weights`);
      worst = Math.max(worst, relative(weights[r]!, want));
      sum += weights[r]!;
    }
    expect(worst).toBeLessThan(1e-9);
    expect(relative(sum, fixture.r.sum)).toBeLessThan(1e-9);
  } finally {
    dataset.close();
    for (const region of dataset.regions) kernel.memory.release(region.ptr, region.bytes);
  }
}
