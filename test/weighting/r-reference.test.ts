import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDataset, weightDataset, type WeightOptions } from '../../src/index.js';
import { loadDataset } from '../../src/dataset/reader.js';
import { rankColumn, weightColumn } from '../../src/dataset/respondent-columns.js';
import { mainThreadKernel } from '../../src/kernel/kernel.js';
import { repoRoot } from '../support/paths.js';

/**
 * The engine's weights against R's survey package (rake, postStratify, calibrate), made by
 * scripts/weight-fixtures.R: every respondent's new weight equals its base weight times R's
 * adjustment for its cell to 1e-9 relative, and a table weighted with the new weight equals
 * the same table weighted with R's weights.
 */
interface Fixture {
  case: string;
  dataset: string;
  baseWeight: string;
  method: WeightOptions['method'];
  options: { epsilon?: number; maxIterations?: number; bounds?: [number, number] } | [];
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

const dir = join(repoRoot, 'test', 'fixtures', 'weights');
const fixtures = readdirSync(dir)
  .filter((file) => file.endsWith('.json'))
  .map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Fixture);
const out = mkdtempSync(join(tmpdir(), 'weight-r-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const relative = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-300);

/** R's weight for a respondent of cell `key` with base weight `base`. */
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
    byCell.set(key, [...(byCell.get(key) ?? []), [rows.base[i]!, rows.weight[i]!]]);
  });
  return (key, base) => byCell.get(key)?.find(([b]) => relative(b, base) < 1e-12)?.[1];
}

describe.each(fixtures)('$case equals R', (fixture) => {
  const file = join(out, `${fixture.case}.arrow`);
  const options = Array.isArray(fixture.options) ? {} : fixture.options;

  it('gives every respondent R\'s weight (1e-9 relative)', async () => {
    const report = await weightDataset(join(repoRoot, fixture.dataset), { targets: fixture.targets, method: fixture.method, name: 'wt_r', out: file, ...options });
    expect(report.sets.every((set) => set.converged)).toBe(true);
    const kernel = mainThreadKernel();
    const dataset = await loadDataset(file, kernel);
    try {
      const variables = fixture.r.variables;
      const stored = variables.map((name) => dataset.meta.variables.find((v) => v.name === name)!);
      const columns = stored.map((variable) => rankColumn(dataset, kernel, variable));
      const base = weightColumn(dataset, kernel, fixture.baseWeight);
      const weights = weightColumn(dataset, kernel, 'wt_r');
      const expected = expectedWeight(fixture);
      let worst = 0;
      let sum = 0;
      for (let r = 0; r < weights.length; r++) {
        const key = stored.map((variable, v) => (columns[v]![r] === 0 ? 'NA' : variable.values[columns[v]![r]! - 1])).join('\r');
        const want = expected(key, base[r]!);
        expect(want, `respondent ${r} (cell ${key}, base ${base[r]}) has no counterpart in R's weights`).toBeDefined();
        worst = Math.max(worst, relative(weights[r]!, want!));
        sum += weights[r]!;
      }
      expect(worst).toBeLessThan(1e-9);
      expect(relative(sum, fixture.r.sum)).toBeLessThan(1e-9);
    } finally {
      dataset.close();
      for (const region of dataset.regions) kernel.memory.release(region.ptr, region.bytes);
    }
  });

  it.runIf(fixture.r.table !== null)('tabulates with the new weight as R\'s weights do', async () => {
    const table = fixture.r.table!;
    const dataset = await openDataset(file);
    try {
      for (const cell of table.cells) {
        const result = await dataset.crosstab({ base: `${table.rows}=${cell.row}`, targets: [`${table.columns}=${cell.column}`], weight: 'wt_r' });
        expect(relative(result.targets[0]!.weighted, cell.weighted), `${table.rows}=${cell.row} x ${table.columns}=${cell.column}`).toBeLessThan(1e-9);
      }
    } finally {
      dataset.close();
    }
  });
});
