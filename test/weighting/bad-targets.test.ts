import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { weightDataset, type WeightOptions } from '../../src/index.js';
import { repoRoot } from '../support/paths.js';
import { rejection } from '../support/rejection.js';

/** Bad targets and options: a CrosstabError naming the file, the JSON path and the fix; nothing written. */
const nhanes = join(repoRoot, 'datasets', 'build', 'nhanes.arrow');
const dir = mkdtempSync(join(tmpdir(), 'weight-bad-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const out = join(dir, 'out.arrow');

const race = { variable: 'race', proportions: { '1': 0.16, '2': 0.64, '3': 0.12, '4': 0.08 } };
const sex = { variable: 'RIAGENDR', proportions: { '1': 0.49, '2': 0.51 } };

async function refused(targets: unknown, options: Partial<WeightOptions> = {}) {
  const file = join(dir, 'targets.json');
  writeFileSync(file, typeof targets === 'string' ? targets : JSON.stringify(targets));
  const error = await rejection(weightDataset(nhanes, { targets: file, method: 'rake', name: 'wt_new', out, ...options }));
  expect(existsSync(out), 'nothing is written').toBe(false);
  return { error, file };
}

describe('weightDataset refuses bad targets, naming file, JSON path and fix', () => {
  it('an unknown variable, with a suggestion', async () => {
    const { error, file } = await refused({ margins: [race, { variable: 'RIAGENDER', proportions: { '1': 0.5, '2': 0.5 } }] });
    expect(error.code).toBe('unknown_variable');
    expect(error.details.file).toBe(file);
    expect(error.details.field).toBe('$.margins[1].variable');
    expect(error.message).toContain(file);
    expect(error.details.suggestions).toContain('RIAGENDR');
  });

  it('proportions not summing to 1', async () => {
    const { error } = await refused({ margins: [{ variable: 'race', proportions: { '1': 0.2, '2': 0.64, '3': 0.12, '4': 0.08 } }] });
    expect(error.code).toBe('invalid_input');
    expect(error.details.field).toBe('$.margins[0].proportions');
    expect(error.message).toMatch(/sums to 1\.04/);
  });

  it('margins whose totals differ (a rake would settle with one of them missed)', async () => {
    const agecat = { variable: 'agecat', totals: { '1': 71900000, '2': 74660000, '3': 77430000, '4': 52540000 } };
    const { error } = await refused({ total: 276536446, margins: [race, agecat] });
    expect(error.code).toBe('invalid_input');
    expect(error.details.field).toBe('$.margins[1]');
    expect(error.message).toContain('$.margins[1].totals sums to 276,530,000, but $.margins[0].proportions sums to 276,536,446');
    expect(error.details.hint).toContain('same population total');
    // Totals that add up to "total" are taken.
    const report = await weightDataset(nhanes, { targets: { total: 276536446, margins: [race, { ...agecat, totals: { ...agecat.totals, '4': 52546446 } }] }, method: 'rake', name: 'wt_new', out });
    expect(report.sets[0]!.converged).toBe(true);
    rmSync(out);
  });

  it('a category in the data that the targets lack, with its respondents', async () => {
    const { error } = await refused({ margins: [{ variable: 'race', proportions: { '1': 0.2, '2': 0.68, '3': 0.12 } }] });
    expect(error.code).toBe('invalid_input');
    expect(error.details.field).toBe('$.margins[0].proportions');
    expect(error.message).toContain('no target for 4 (508 respondents)');
  });

  it('blanks in a target variable need an "NA" target', async () => {
    const { error } = await refused({ margins: [{ variable: 'HI_CHOL', proportions: { '0': 0.9, '1': 0.1 } }] });
    expect(error.message).toContain('no target for NA (745 respondents)');
    expect(error.details.hint).toContain('"NA"');
  });

  it('a target for a value no respondent has', async () => {
    const { error } = await refused({ margins: [{ variable: 'race', proportions: { '1': 0.16, '2': 0.64, '3': 0.12, '4': 0.07, '5': 0.01 } }] });
    expect(error.code).toBe('unknown_value');
    expect(error.details.field).toBe('$.margins[0].proportions["5"]');
  });

  it('a target above 0 without respondents in its group', async () => {
    const targets = {
      groupBy: 'RIAGENDR',
      groups: {
        '1': { margins: [race] },
        '2': { margins: [{ variables: ['race', 'RIAGENDR'], totals: [1, 2, 3, 4].flatMap((r) => [{ cell: [String(r), '1'], value: 5 }, { cell: [String(r), '2'], value: 10 }]) }] },
      },
    };
    const { error } = await refused(targets, { method: 'poststratify' });
    expect(error.details.field).toBe('$.groups["2"].margins[0].totals[0]');
    expect(error.message).toContain('no respondent of this group has');
  });

  it('a group of the data without a target set', async () => {
    const { error } = await refused({ groupBy: 'RIAGENDR', groups: { '1': { margins: [race] } } });
    expect(error.details.field).toBe('$.groups');
    expect(error.message).toContain('no target set for "2"');
  });

  it('JSON that does not parse, and unknown keys', async () => {
    expect((await refused('{ "margins": [ }')).error.details.field).toBe('$');
    const { error } = await refused({ margins: [{ ...race, proportion: {} }] });
    expect(error.details.field).toBe('$.margins[0].proportion');
    expect(error.message).toContain('did you mean "proportions"');
  });

  it('post-stratification with two margins', async () => {
    const { error } = await refused({ margins: [race, sex] }, { method: 'poststratify' });
    expect(error.details.field).toBe('$.margins');
    expect(error.details.hint).toContain('rake');
  });

  it('a fit that does not converge', async () => {
    const { error } = await refused({ margins: [race, sex, { variable: 'agecat', proportions: { '1': 0.4, '2': 0.2, '3': 0.2, '4': 0.2 } }] }, { maxIterations: 1, epsilon: 1e-9 });
    expect(error.message).toContain('did not converge');
    expect(error.details.field).toBe('maxIterations');
  });
});

describe('weightDataset refuses bad options', () => {
  it.each([
    [{ method: 'logit' }, 'bounds'],
    [{ method: 'rake', bounds: [0.5, 2] }, 'bounds'],
    [{ method: 'linear', bounds: [1.2, 2] }, 'bounds'],
    [{ method: 'raking' }, 'method'],
    [{ name: 'WTMEC2YR' }, 'name'],
    [{ name: 'two words' }, 'name'],
    [{ baseWeight: 'nope' }, 'baseWeight'],
    [{ maxIterations: 0 }, 'maxIterations'],
    [{ epsilon: -1 }, 'epsilon'],
    [{ trim: [5, 1] }, 'trim'],
  ] as Array<[Partial<WeightOptions>, string]>)('%o names %s', async (options, field) => {
    const { error } = await refused({ margins: [race] }, options);
    expect(error.code).toBe('invalid_option');
    expect(error.details.field).toBe(field);
    expect(error.details.hint).toBeTruthy();
  });
});
