// Weights the engine's doubles cannot carry through its statistics are refused, not answered:
// a sum of weights past 1.8e308 made every percentage 0% (exit 0), and weights whose squares
// fall into the subnormals (below 2.2e-308) gave standard errors wrong in their fifth digit,
// or 0. The engine takes 0 and 1e-50 .. 1e50 (src/dataset/weight-range.ts); at those bounds
// its figures are the ones computed here from the rows, and those of the same rows unscaled.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Float64, Int32, Table, tableToIPC, vectorFromArray } from 'apache-arrow';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDataset, weightDataset } from '../src/index.js';
import { cliPath } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-weight-range-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const crosstab = (...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8' });

/** Twelve respondents: weights (times `scale`), x in 0/1 and y in 0/1/2. */
const WEIGHTS = [3, 1, 2, 5, 4, 1, 2, 3, 7, 1, 1, 2];
const rows = WEIGHTS.map((weight, i) => ({ weight, x: i % 2, y: i % 3 }));
function csv(name: string, weightText: (weight: number) => string): string {
  const path = join(dir, name);
  writeFileSync(path, `w,x,y\n${rows.map((row) => `${weightText(row.weight)},${row.x},${row.y}`).join('\n')}\n`);
  return path;
}

/** The CSV table of `crosstab table --rows x --columns y`, one object per cell. */
function cells(dataset: string): Array<Record<string, string>> {
  const run = crosstab('table', dataset, '--rows', 'x', '--columns', 'y', '--stats', 'vpct,se', '--format', 'csv');
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  const [header, ...lines] = run.stdout.trim().split('\n');
  const names = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((text, i) => [names[i]!, text])));
}

describe('weights outside 0, 1e-50 .. 1e50', () => {
  it('crosstab build refuses a weight whose sums overflow or whose squares are subnormal, naming the column and row, and writes nothing', () => {
    for (const [name, weightText, problem] of [
      ['huge.csv', (weight: number) => (weight === 1 ? '1' : `${weight}e307`), 'above 1e+50'],
      ['past-bound.csv', (weight: number) => (weight === 2 ? '2e50' : String(weight)), 'above 1e+50'],
      ['tiny.csv', (weight: number) => `${weight}e-170`, 'above 0 and below 1e-50'],
    ] as const) {
      const input = csv(name, weightText);
      const out = join(dir, `${name}.arrow`);
      const run = crosstab('build', input, '--weight', 'w', '--survey', 'T', '--out', out, '--quiet');
      expect(run.status, run.stderr).toBe(1);
      const firstBad = rows.findIndex((row) => weightText(row.weight) !== String(row.weight)) + 1;
      expect(run.stderr).toContain('[invalid_input]');
      expect(run.stderr).toContain(`${input}: row ${firstBad}: weight column "w" has ${Number(weightText(rows[firstBad - 1]!.weight))}, ${problem}`);
      expect(existsSync(out)).toBe(false);
    }
  });

  it('Parquet and Arrow inputs too, through the library', async () => {
    const weights = WEIGHTS.map((weight, i) => (i === 4 ? 1e200 : weight));
    const parquet = join(dir, 'huge.parquet');
    writeFileSync(parquet, Buffer.from(parquetWriteBuffer({ columnData: [
      { name: 'w', data: weights, type: 'DOUBLE' },
      { name: 'x', data: rows.map((row) => row.x), type: 'INT32' },
    ] })));
    const arrow = join(dir, 'tiny.arrow');
    writeFileSync(arrow, tableToIPC(new Table({ w: vectorFromArray(WEIGHTS.map((weight, i) => (i === 7 ? 1e-300 : weight)), new Float64()), x: vectorFromArray(rows.map((row) => row.x), new Int32()) }), 'file'));
    for (const [input, row, value] of [[parquet, 5, 1e200], [arrow, 8, 1e-300]] as const) {
      const out = `${input}.built.arrow`;
      const refusal = await buildDataset(input, { weights: ['w'], survey: 'T', out }).then(() => undefined, (error: unknown) => error as { code: string; message: string; details: { field?: string; row?: number } });
      expect(refusal?.code).toBe('invalid_input');
      expect(refusal?.details.field).toBe('w');
      expect(refusal?.details.row).toBe(row);
      expect(refusal?.message).toContain(`weight column "w" has ${value}`);
      expect(existsSync(out)).toBe(false);
    }
  });

  it('crosstab append refuses such a weight in the wave and leaves the dataset as it was', async () => {
    const dataset = join(dir, 'first.arrow');
    await buildDataset(csv('first.csv', String), { weights: ['w'], survey: 'T', out: dataset });
    const before = readFileSync(dataset);
    const wave = join(dir, 'wave.csv');
    writeFileSync(wave, 'w,x,y\n2,0,1\n5e60,1,2\n');
    for (const out of [dataset, join(dir, 'appended.arrow')]) {
      const run = crosstab('append', dataset, wave, '--out', out, '--quiet');
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).toContain(`${wave}: row 2: weight column "w" has 5e+60, above 1e+50`);
    }
    expect(readFileSync(dataset).equals(before)).toBe(true);
    expect(existsSync(join(dir, 'appended.arrow'))).toBe(false);
  });

  it('crosstab weight refuses targets that make such weights, writing no weights file', async () => {
    const dataset = join(dir, 'to-weight.arrow');
    await buildDataset(csv('to-weight.csv', String), { weights: ['w'], survey: 'T', out: dataset });
    const targets = join(dir, 'huge-targets.json');
    writeFileSync(targets, JSON.stringify({ margins: [{ variable: 'x', totals: { '0': 3e300, '1': 2e300 } }] }));
    const refusal = await weightDataset(dataset, { targets, method: 'rake', name: 'w_huge' }).then(() => undefined, (error: unknown) => error as { code: string; message: string; details: { field?: string } });
    expect(refusal?.code).toBe('invalid_input');
    expect(refusal?.details.field).toBe('targets');
    expect(refusal?.message).toMatch(/^the rake weights include [0-9.e+]+, above 1e\+50/);
    expect(existsSync(`${dataset}.weights`)).toBe(false);
    const run = crosstab('weight', dataset, '--targets', targets, '--method', 'rake', '--name', 'w_huge');
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toContain('or bound the new weights with --trim.');
    expect(existsSync(`${dataset}.weights`)).toBe(false);
  });

  it('--units outside 1e-50 .. 1e50 is refused before anything is read: weighted sums divided by it were Infinity (REST WgtAud null, the CLI ∞) or subnormal', async () => {
    const input = csv('units.csv', String);
    for (const units of ['1e-320', '1e-60', '1e60']) {
      const out = join(dir, `units-${units}.arrow`);
      const run = crosstab('build', input, '--weight', 'w', '--survey', 'T', '--out', out, '--units', units, '--quiet');
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).toContain('[invalid_option]: --units must be a positive number from 1e-50 to 1e+50');
      expect(existsSync(out)).toBe(false);
    }
    // At the bounds, WgtAud is the weighted sum computed from the rows divided by the units.
    for (const units of [1e-50, 1e50]) {
      const out = join(dir, `units-${units}.arrow`);
      await buildDataset(input, { weights: ['w'], survey: 'T', out, units });
      const run = crosstab('query', out, '--target', 'x=1', '--json');
      expect(run.status, run.stderr).toBe(0);
      const answer = JSON.parse(run.stdout) as { Results: Array<{ WgtAud: number }>; AudienceReportUnits: number };
      const weighted = rows.filter((row) => row.x === 1).reduce((total, row) => total + row.weight, 0);
      expect(answer.AudienceReportUnits).toBe(units);
      expect(answer.Results[0]!.WgtAud / (weighted / units)).toBeCloseTo(1, 12);
    }
  });

  it('at the bounds, the figures are those computed from the rows and those of the unscaled weights', async () => {
    const plain = join(dir, 'plain.arrow');
    await buildDataset(csv('plain.csv', String), { weights: ['w'], survey: 'T', out: plain });
    const unscaled = cells(plain);
    for (const scale of [1e-50, 1e49]) {
      const scaled = join(dir, `scaled-${scale}.arrow`);
      await buildDataset(csv(`scaled-${scale}.csv`, (weight) => String(weight * scale)), { weights: ['w'], survey: 'T', out: scaled });
      const found = cells(scaled);
      expect(found).toHaveLength(6);
      for (const [i, cell] of found.entries()) {
        const x = Number(cell['row']);
        const y = Number(cell['column']);
        const inCell = rows.filter((row) => row.x === x && row.y === y).map((row) => row.weight * scale);
        const inColumn = rows.filter((row) => row.y === y).map((row) => row.weight * scale);
        const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
        expect(Number(cell['weighted']) / sum(inCell)).toBeCloseTo(1, 12);
        expect(Number(cell['sumSqWeights']) / sum(inCell.map((weight) => weight * weight))).toBeCloseTo(1, 12);
        expect(Number(cell['columnPct'])).toBeCloseTo(sum(inCell) / sum(inColumn), 12);
        // Standard errors of a percentage do not depend on the weights' scale; of a weighted sum, scale with it.
        expect(Number(cell['columnPctSE']) / Number(unscaled[i]!['columnPctSE'])).toBeCloseTo(1, 12);
        expect(Number(cell['weightedSE']) / (Number(unscaled[i]!['weightedSE']) * scale)).toBeCloseTo(1, 12);
      }
    }
  });
});
