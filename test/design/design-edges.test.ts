// Complex designs: bad design declarations at build time, and lonely PSUs at query time.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, CrosstabError, ErrorCode, openDataset, type BuildOptions, type Dataset, type TableResult } from '../../src/index.js';
import { tableStatistics } from '../../src/report/index.js';
import { gssCsv } from '../support/paths.js';
import { datasetOf, designFixture, inputOf } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-design-edges-'));
const gss = gssCsv;

async function buildError(input: string, options: Omit<BuildOptions, 'out'>): Promise<CrosstabError> {
  const out = join(dir, `${Math.random().toString(36).slice(2)}.arrow`);
  const error = await buildDataset(input, { ...options, out }).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(CrosstabError);
  expect(existsSync(out)).toBe(false); // nothing half-written
  return error as CrosstabError;
}

describe('design declarations at build time', () => {
  it('refuses a blank PSU column, naming it and the blank count (GSS vpsu is blank in 1972-1974)', async () => {
    const error = await buildError(gss, { weights: ['wtssps'], survey: 'GSS', design: { strata: 'vstrat', psu: 'vpsu', nest: true } });
    expect(error.code).toBe(ErrorCode.invalidOption);
    expect(error.message).toBe('--psu column "vpsu" is blank for 4601 respondents; every respondent needs a psu');
    expect(error.details.field).toBe('--psu');
  });

  it('refuses a blank strata column, naming it', async () => {
    const error = await buildError(gss, { weights: ['wtssps'], survey: 'GSS', design: { strata: 'vstrat', psu: 'year' } });
    expect(error.message).toMatch(/^--strata column "vstrat" is blank for \d+ respondents/);
  });

  it('refuses an unknown design column and strata without a PSU column', async () => {
    expect((await buildError(inputOf('nhanes'), { weights: ['WTMEC2YR'], survey: 'N', design: { strata: 'SDMVSTRA', psu: 'PSUX' } })).message).toBe(
      '--psu column "PSUX" is not a column of the input',
    );
    expect((await buildError(inputOf('nhanes'), { weights: ['WTMEC2YR'], survey: 'N', design: { strata: 'SDMVSTRA' } })).details.field).toBe('psu');
  });

  it('refuses an fpc that varies within a stratum', async () => {
    const varies = await buildError(inputOf('nhanes'), { weights: ['WTMEC2YR'], survey: 'N', design: { strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true, fpc: 'agecat' } });
    expect(varies.message).toMatch(/--fpc column "agecat" has more than one value in stratum \d+/);
    const single = await buildError(inputOf('nhanes'), { weights: ['WTMEC2YR'], survey: 'N', design: { psu: 'SDMVPSU', fpc: 'RIAGENDR' } });
    expect(single.message).toMatch(/--fpc column "RIAGENDR" has more than one value in stratum 1/);
  });

  it('refuses incomplete replicate declarations, naming the option', async () => {
    const replicates = designFixture.tables.find((table) => table.id === 'nhanes-JKn')!.build.replicateWeights!;
    const base = { weights: ['WTMEC2YR'], survey: 'N' };
    const input = inputOf('nhanes-replicates');
    expect((await buildError(input, { ...base, design: { replicateWeights: replicates, replicateType: 'JKn' } })).details.field).toBe('rscales');
    expect((await buildError(input, { ...base, design: { replicateWeights: replicates, replicateType: 'Fay' } })).details.field).toBe('rho');
    expect((await buildError(input, { ...base, design: { replicateWeights: replicates } })).details.field).toBe('replicateType');
    expect((await buildError(input, { ...base, design: { replicateWeights: replicates, replicateType: 'JK1', rscales: [1, 2] } })).message).toMatch(
      /--rscales needs 31 non-negative numbers/,
    );
    expect((await buildError(input, { ...base, design: { replicateType: 'JK1' } })).details.field).toBe('replicateWeights');
    const missing = await buildError(input, { ...base, design: { replicateWeights: ['JKN_01', 'JKN_99'], replicateType: 'JK1' } });
    expect(missing.message).toContain('JKN_99');
  });

  it('refuses an incomplete replicate declaration before reading the input (a file that is not there is not looked at)', async () => {
    const replicates = designFixture.tables.find((table) => table.id === 'nhanes-JKn')!.build.replicateWeights!;
    const input = join(tmpdir(), 'no-such-replicates.csv.gz');
    expect(existsSync(input)).toBe(false);
    const error = await buildError(input, { weights: ['WTMEC2YR'], survey: 'N', design: { replicateWeights: replicates, replicateType: 'JKn' } });
    expect(error.code).toBe(ErrorCode.invalidOption);
    expect(error.details.field).toBe('rscales');
  });
});

describe.each(['inline', 'pool'] as const)('%s: a stratum with a single PSU (stratum 89 of nhanes-lonely)', (execution) => {
  const adjust = designFixture.tables.find((table) => table.id === 'nhanes-lonely-adjust')!;
  const certainty = designFixture.tables.find((table) => table.id === 'nhanes-lonely-certainty')!;
  let ds: Dataset;
  let result: TableResult;
  beforeAll(async () => {
    ds = await openDataset(await datasetOf(adjust), { execution });
    result = await ds.table({ base: '*', rows: ['HI_CHOL=1'], columns: [{ variable: 'agecat' }] });
    return () => ds.close();
  });

  it('fails under "fail" (the default) naming the stratum, as R does', () => {
    expect(designFixture.meta.lonelyFailMessage).toBe('Stratum (89) has only one PSU at stage 1');
    for (const options of [{ stats: ['se'] as const }, { stats: ['se'] as const, lonelyPsu: 'fail' as const }]) {
      const error = (() => {
        try {
          tableStatistics(result, { ...options, stats: [...options.stats] });
        } catch (e) {
          return e;
        }
      })() as CrosstabError;
      expect(error).toBeInstanceOf(CrosstabError);
      expect(error.message).toMatch(/^stratum 89 has only one PSU/);
      expect(error.details.field).toBe('lonelyPsu');
    }
  });

  it('adjust and certainty differ, remove equals certainty (R onestrat), and a base outside the stratum needs no choice', async () => {
    const se = (lonelyPsu: 'adjust' | 'certainty' | 'remove') => tableStatistics(result, { stats: ['se'], lonelyPsu }).columnPctSE!;
    const r = (table: typeof adjust, code: number) => table.cells.find((cell) => cell.row === 'HI_CHOL=1' && cell.columnVariable === 'agecat' && cell.column === code)!.se;
    expect(Math.abs(se('adjust')[0]! - r(adjust, 1)) / r(adjust, 1)).toBeLessThan(1e-9);
    expect(Math.abs(se('certainty')[0]! - r(certainty, 1)) / r(certainty, 1)).toBeLessThan(1e-9);
    expect(se('adjust')[0]).not.toBe(se('certainty')[0]);
    expect([...se('remove')]).toEqual([...se('certainty')]);
    const outside = await ds.table({ base: 'SDMVSTRA=75..88', rows: ['HI_CHOL=1'], columns: [{ variable: 'agecat' }] });
    expect(tableStatistics(outside, { stats: ['se'] }).columnPctSE!.every((value) => value > 0)).toBe(true);
  });

  it('rejects an unknown lonelyPsu, naming the option', () => {
    expect(() => tableStatistics(result, { lonelyPsu: 'average' as 'adjust' })).toThrow(/options.lonelyPsu must be one of fail, adjust, certainty, remove/);
  });
});

describe('a table too large for per-PSU sums', () => {
  it('is refused before any work, saying how large the table may be', async () => {
    const taylor = designFixture.tables.find((table) => table.id === 'nhanes-taylor')!;
    const ds = await openDataset(await datasetOf(taylor));
    try {
      const error = await ds
        .table({ base: '*', rows: Array.from({ length: 1500 }, () => 'HI_CHOL=1'), columns: Array.from({ length: 1500 }, () => 'agecat=1') })
        .then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(CrosstabError);
      expect((error as CrosstabError).message).toMatch(/per-PSU sums \(2253001 cells and margins x 31 PSUs\) would take 0\.5 GiB/);
      expect((error as CrosstabError).details.hint).toContain(`at most about ${Math.floor((512 * 2 ** 20) / 8 / 31)} cells`);
    } finally {
      ds.close();
    }
  });
});
