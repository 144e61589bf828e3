// A multi-response variable in a survey with a Taylor design (NHANES 2009-2010: strata, PSUs):
// a category set over race and agecat, whose values are the union of both columns' values.
// Counts, weighted sums, and a table's percentages and linearization SEs must equal those of
// the same table with the dummy-column expressions as its rows.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset, tableStatistics, type Dataset } from '../src/index.js';
import { nhanesCsv } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'multi-design-'));
let ds: Dataset;
beforeAll(async () => {
  const codebook = join(dir, 'codebook.json');
  writeFileSync(codebook, JSON.stringify({ multi: [{ name: 'mix', columns: ['race', 'agecat'] }, { name: 'chol', columns: ['HI_CHOL'], counted: '1' }] }));
  const out = join(dir, 'nhanes.arrow');
  await buildDataset(nhanesCsv, { weights: ['WTMEC2YR'], survey: 'NHANES', out, codebook, design: { strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true }, threads: 0 });
  ds = await openDataset(out);
}, 120_000);
afterAll(() => {
  ds?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('multi-response variables with a Taylor design (NHANES)', () => {
  it('select the respondents of their columns', async () => {
    const values = ds.info.variables.find((v) => v.name === 'mix')!.values!.map((v) => v.value);
    expect(values.length).toBeGreaterThan(2);
    const pairs: Array<[string, string]> = [
      ...values.map((value): [string, string] => [`mix=${value}`, `race=${value} OR agecat=${value}`]),
      [`mix=all(1,2)`, '(race=1 OR agecat=1) AND (race=2 OR agecat=2)'],
      ['chol=1', 'HI_CHOL=1'],
      ['chol=none(1)', 'HI_CHOL=0'],
    ];
    const result = await ds.crosstab({ base: 'RIAGENDR=2', targets: pairs.flat() });
    pairs.forEach(([multi], i) => {
      const [a, b] = [result.targets[2 * i]!, result.targets[2 * i + 1]!];
      expect({ multi, respondents: a.respondents, weighted: a.weighted }).toEqual({ multi, respondents: b.respondents, weighted: b.weighted });
    });
  });

  it('give a table whose percentages and SEs equal those of the dummy-column rows', async () => {
    const multi = await ds.table({ base: '*', rows: [{ variable: 'mix' }], columns: [{ variable: 'RIAGENDR' }], missing: 'hide' });
    const rowValues = multi.rows.filter((entry) => !entry.net).map((entry) => entry.value!);
    const dummies = await ds.table({
      base: '*',
      rows: [...rowValues.map((value) => `race=${value} OR agecat=${value}`), rowValues.map((value) => `race=${value} OR agecat=${value}`).join(' OR ')],
      columns: [{ variable: 'RIAGENDR' }],
      missing: 'hide',
    });
    expect(multi.rows.at(-1)!.label).toBe('Any (net)');
    expect(Array.from(multi.weighted)).toEqual(Array.from(dummies.weighted));
    expect(Array.from(multi.respondents)).toEqual(Array.from(dummies.respondents));
    const a = tableStatistics(multi, { stats: ['vpct', 'se'] });
    const b = tableStatistics(dummies, { stats: ['vpct', 'se'] });
    expect(a.variance).toBe('taylor');
    expect(Array.from(a.columnPct!)).toEqual(Array.from(b.columnPct!));
    expect(Array.from(a.columnPctSE!)).toEqual(Array.from(b.columnPctSE!));
  });
});
