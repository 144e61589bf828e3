import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDataset, weightDataset } from '../../src/index.js';
import { loadDataset } from '../../src/dataset/file/reader.js';
import { rankColumn, weightColumn } from '../../src/dataset/file/respondent-columns.js';
import { mainThreadKernel } from '../../src/kernel/kernel.js';
import { repoRoot } from '../support/paths.js';
import { relative } from '../support/r-weights.js';

/**
 * The engine's raking against a port of Quantipy's / weightipy's RIM weighting
 * (scripts/rim-fixtures.py): RIM starts every respondent at weight 1 and scales targets to the
 * respondent count, so the engine is run from a base weight of 1 per respondent, with a tight
 * epsilon and RIM's 1000 iterations. Both run to convergence, where raking has one answer
 * whatever the order of the margins and the stopping rule: every respondent's weight equals
 * RIM's to 1e-9 relative.
 */
interface RimFixture {
  case: string;
  csv: string;
  targets: { margins: Array<{ variable: string; proportions: Record<string, number> }> };
  rim: {
    options: { max_iterations: number; convcrit: number; cap: number | [number, number] };
    iterations: number;
    diffError: number;
    sum: number;
    variables: string[];
    cells: Array<{ values: Record<string, string>; weight: number; respondents: number }>;
  };
}

const fixtureDir = join(repoRoot, 'test', 'fixtures', 'rim');
const fixtures = readdirSync(fixtureDir)
  .filter((file) => file.endsWith('.json'))
  .map((file) => JSON.parse(readFileSync(join(fixtureDir, file), 'utf8')) as RimFixture);
const uncapped = fixtures.filter((fixture) => fixture.rim.options.cap === 0);
const out = mkdtempSync(join(tmpdir(), 'weight-rim-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** The fixture's CSV cut to its target variables plus `unit`, a weight of 1 for everyone: RIM's seed weights. */
async function unitDataset(fixture: RimFixture): Promise<string> {
  const lines = gunzipSync(readFileSync(join(repoRoot, fixture.csv))).toString('utf8').split(/\r?\n/).filter((line) => line !== '');
  const header = lines[0]!.split(',');
  const columns = fixture.rim.variables.map((variable) => header.indexOf(variable));
  expect(columns.every((column) => column >= 0)).toBe(true);
  const rows = lines.slice(1).map((line) => {
    const fields = line.split(',');
    return [...columns.map((column) => fields[column]), '1'].join(',');
  });
  const csv = join(out, `${fixture.case}.csv`);
  writeFileSync(csv, [[...fixture.rim.variables, 'unit'].join(','), ...rows].join('\n') + '\n');
  const file = join(out, `${fixture.case}-unit.arrow`);
  await buildDataset(csv, { weights: ['unit'], survey: fixture.case, out: file, threads: 0 });
  return file;
}

/** Every respondent's `name` weight in `file` over RIM's weight for its cell: the largest relative difference, and the sum. */
async function compareWithRim(file: string, fixture: RimFixture, name: string): Promise<{ worst: number; sum: number }> {
  const kernel = mainThreadKernel();
  const dataset = await loadDataset(file, kernel);
  try {
    const variables = fixture.rim.variables.map((v) => dataset.meta.variables.find((stored) => stored.name === v)!);
    const columns = variables.map((variable) => rankColumn(dataset, kernel, variable));
    const weights = weightColumn(dataset, kernel, name);
    const rim = new Map(fixture.rim.cells.map((cell) => [fixture.rim.variables.map((v) => cell.values[v]).join('\r'), cell.weight]));
    let worst = 0;
    let sum = 0;
    for (let r = 0; r < weights.length; r++) {
      const key = variables.map((variable, v) => (columns[v]![r] === 0 ? 'NA' : variable.values[columns[v]![r]! - 1])).join('\r');
      const want = rim.get(key);
      if (want === undefined) expect.fail(`respondent ${r} (cell ${key}) has no counterpart in RIM's weights`);
      worst = Math.max(worst, relative(weights[r]!, want));
      sum += weights[r]!;
    }
    return { worst, sum };
  } finally {
    dataset.close();
    for (const region of dataset.regions) kernel.memory.release(region.ptr, region.bytes);
  }
}

describe.each(uncapped)('$case: the engine rakes to RIM\'s weights', (fixture) => {
  it('gives every respondent RIM\'s weight (1e-9 relative) from a unit base weight, epsilon 1e-13 and 1000 iterations', async () => {
    const unit = await unitDataset(fixture);
    const file = join(out, `${fixture.case}.arrow`);
    const report = await weightDataset(unit, { targets: fixture.targets, method: 'rake', name: 'wt_rim', out: file, baseWeight: 'unit', epsilon: 1e-13, maxIterations: fixture.rim.options.max_iterations });
    expect(report.sets.every((set) => set.converged)).toBe(true);
    // RIM stopped on its own test, before its iteration limit (the iteration it stopped at is one past its last pass).
    expect(fixture.rim.iterations).toBeLessThan(fixture.rim.options.max_iterations);
    const { worst, sum } = await compareWithRim(file, fixture, 'wt_rim');
    expect(worst).toBeLessThan(1e-9);
    // Both scale to the respondent count: RIM by its percentages of n, the engine by proportions of the base total.
    expect(relative(sum, fixture.rim.sum)).toBeLessThan(1e-9);
  });

  it('stops short of RIM with R\'s defaults (epsilon 1, 10 passes): RIM runs until its changes stop shrinking', async () => {
    const unit = await unitDataset(fixture);
    const file = join(out, `${fixture.case}-defaults.arrow`);
    const report = await weightDataset(unit, { targets: fixture.targets, method: 'rake', name: 'wt_rim', out: file, baseWeight: 'unit' });
    const { worst } = await compareWithRim(file, fixture, 'wt_rim');
    expect(worst).toBeGreaterThan(1e-9);
  });
});

/**
 * RIM's cap clamps the weights (over their mean) after every iteration and raking goes on from
 * there, so at convergence the margins are met and no weight passes the cap: a bounded
 * calibration whose answer no engine option gives. Raking then --trim clamps once and
 * misses the margins; logit calibration with --bounds meets margins and bounds but spreads the
 * weights differently. Both land measurably away from RIM's capped weights.
 */
describe.each(fixtures.filter((fixture) => fixture.rim.options.cap !== 0))('$case: RIM\'s cap is neither --trim nor --bounds', (fixture) => {
  const cap = fixture.rim.options.cap as number;
  it('differs from rake + trim and from bounded logit calibration', async () => {
    const unit = await unitDataset(fixture);
    const trimmed = join(out, `${fixture.case}-trim.arrow`);
    const logit = join(out, `${fixture.case}-logit.arrow`);
    await weightDataset(unit, { targets: fixture.targets, method: 'rake', name: 'wt_rim', out: trimmed, baseWeight: 'unit', epsilon: 1e-13, maxIterations: 1000, trim: [0, cap + 0.0001] });
    const report = await weightDataset(unit, { targets: fixture.targets, method: 'logit', name: 'wt_rim', out: logit, baseWeight: 'unit', epsilon: 1e-10, maxIterations: 100, bounds: [0.1, cap + 0.0001] });
    expect(report.sets.every((set) => set.converged)).toBe(true);
    const viaTrim = await compareWithRim(trimmed, fixture, 'wt_rim');
    const viaLogit = await compareWithRim(logit, fixture, 'wt_rim');
    expect(viaTrim.worst).toBeGreaterThan(1e-3);
    expect(viaLogit.worst).toBeGreaterThan(1e-3);
  });
});
