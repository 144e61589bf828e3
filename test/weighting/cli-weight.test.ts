import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDataset } from '../../src/index.js';
import { cliPath, repoRoot } from '../support/paths.js';

/** `crosstab weight`: the report (text and --json), the written file used by `crosstab table`, flag names in errors. */
const nhanes = join(repoRoot, 'datasets', 'build', 'nhanes.arrow');
const dir = mkdtempSync(join(tmpdir(), 'weight-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const targets = join(dir, 'targets.json');
writeFileSync(targets, JSON.stringify({ margins: [
  { variable: 'race', proportions: { '1': 0.16, '2': 0.64, '3': 0.12, '4': 0.08 } },
  { variable: 'RIAGENDR', proportions: { Male: 0.49, Female: 0.51 } },
] }));
const crosstab = (...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8' });

describe('crosstab weight', () => {
  it('writes a dataset whose new weight tables like any other, with a JSON report', async () => {
    const out = join(dir, 'raked.arrow');
    const run = crosstab('weight', nhanes, '--targets', targets, '--method', 'rake', '--name', 'wt_rake', '--out', out, '--epsilon', '1e-9', '--max-iterations', '100', '--json');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.sets[0].converged).toBe(true);
    expect(report.weights.designEffect).toBeCloseTo((report.respondents * 1) / report.weights.efficiency / report.respondents, 12);
    const dataset = await openDataset(out);
    try {
      expect(dataset.info.weights).toEqual(['WTMEC2YR', 'wt_rake']);
      const hispanic = await dataset.crosstab({ base: '*', targets: ['race=1'], weight: 'wt_rake' });
      expect(hispanic.targets[0]!.weighted / hispanic.base.weighted).toBeCloseTo(0.16, 9);
      const race = report.sets[0].margins.find((m: { variables: string[] }) => m.variables[0] === 'race');
      expect(race.categories[0].weighted).toBeCloseTo(hispanic.targets[0]!.weighted, 3);
    } finally {
      dataset.close();
    }
    const table = crosstab('table', out, '--rows', 'race', '--columns', 'RIAGENDR', '--weight', 'wt_rake', '--format', 'csv');
    expect(table.status).toBe(0);
    const verify = crosstab('verify', out);
    expect(verify.status).toBe(0);
    const text = crosstab('weight', nhanes, '--targets', targets, '--method', 'rake', '--name', 'wt2', '--out', join(dir, 'text.arrow'), '--epsilon', '1e-9', '--max-iterations', '100');
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/converged in \d+ iterations/);
    expect(text.stdout).toContain('Kish deff');
  });

  it('replaces its input whole when --out is the input', async () => {
    const copy = join(dir, 'in-place.arrow');
    copyFileSync(nhanes, copy);
    const run = crosstab('weight', copy, '--targets', targets, '--method', 'poststratify', '--name', 'wt_ps', '--out', copy);
    expect(run.stderr).toContain('post-stratification takes one');
    const one = join(dir, 'one.json');
    writeFileSync(one, JSON.stringify({ margins: [{ variable: 'race', proportions: { '1': 0.16, '2': 0.64, '3': 0.12, '4': 0.08 } }] }));
    expect(crosstab('weight', copy, '--targets', one, '--method', 'poststratify', '--name', 'wt_ps', '--out', copy).status).toBe(0);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const dataset = await openDataset(copy);
    try {
      expect(dataset.info.weights).toEqual(['WTMEC2YR', 'wt_ps']);
    } finally {
      dataset.close();
    }
  });

  it('names its flags in errors and writes nothing', () => {
    const out = join(dir, 'never.arrow');
    const run = crosstab('weight', nhanes, '--targets', targets, '--method', 'logit', '--name', 'wt_logit', '--out', out);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('[invalid_option]: --bounds must be given');
    expect(existsSync(out)).toBe(false);
    const bad = crosstab('weight', nhanes, '--targets', targets, '--method', 'linear', '--bounds', '0.5', '--name', 'w', '--out', out);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('--bounds must be two numbers LO,HI');
  });

  it('names its flags in hints: a fit that does not converge says which flags to raise', () => {
    const out = join(dir, 'unconverged.arrow');
    const run = crosstab('weight', nhanes, '--targets', targets, '--method', 'rake', '--name', 'w', '--out', out, '--max-iterations', '1', '--epsilon', '1e-12');
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/hint: Raise --max-iterations or --epsilon, widen the bounds/);
    expect(existsSync(out)).toBe(false);
  });

  it('starts from unit weights with --unweighted, which --base-weight cannot join', async () => {
    const out = join(dir, 'unit.arrow');
    const run = crosstab('weight', nhanes, '--targets', targets, '--method', 'rake', '--name', 'wt_unit', '--out', out, '--unweighted', '--epsilon', '1e-9', '--max-iterations', '100', '--json');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.baseWeight).toBeNull();
    // Unit base weights: their spread is none, and proportions scale to the respondents.
    expect(report.baseWeights.min).toBe(1);
    expect(report.baseWeights.max).toBe(1);
    const dataset = await openDataset(out);
    try {
      const all = await dataset.crosstab({ base: '*', targets: ['race=1'], weight: 'wt_unit' });
      expect(all.base.weighted).toBeCloseTo(report.respondents, 6);
      expect(all.targets[0]!.weighted / all.base.weighted).toBeCloseTo(0.16, 9);
    } finally {
      dataset.close();
    }
    const text = crosstab('weight', nhanes, '--targets', targets, '--method', 'rake', '--name', 'wt_unit', '--out', join(dir, 'unit-text.arrow'), '--unweighted');
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('rake from unit weights');
    const both = crosstab('weight', nhanes, '--targets', targets, '--method', 'rake', '--name', 'wt_both', '--out', join(dir, 'both.arrow'), '--unweighted', '--base-weight', 'WTMEC2YR');
    expect(both.status).not.toBe(0);
    expect(both.stderr).toMatch(/--unweighted.*--base-weight|--base-weight.*--unweighted/);
    expect(existsSync(join(dir, 'both.arrow'))).toBe(false);
  });
});
