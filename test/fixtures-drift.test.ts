// The suite reads the GSS/NHANES extracts and R's reference figures from the repo (datasets/,
// test/fixtures/r/), so a fresh clone runs it. Those are copies of ../shared/datasets: when that
// folder is beside the checkout, each copy must still equal its original.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gssCsv, nhanesCsv, rFixtures, sharedDatasets } from './support/paths.js';
import { referenceFiles } from './support/reference-queries.js';

const copies: Array<[string, string]> = [
  [gssCsv, 'gss_1972_2024_sub.csv.gz'],
  [nhanesCsv, 'nhanes_2009_2010_survey.csv.gz'],
  ...Object.values(referenceFiles).map((name): [string, string] => [join(rFixtures, name), name]),
];
const hasShared = existsSync(sharedDatasets);

if (!hasShared) {
  console.warn(`\n*** SKIPPED: ${sharedDatasets} is not beside the checkout, so the committed copies of its files are not checked for drift. ***\n`);
}

describe.skipIf(!hasShared)('repo copies of ../shared/datasets', () => {
  it.each(copies)('%s equals ../shared/datasets/%s', (copy, name) => {
    const original = join(sharedDatasets, name);
    expect(existsSync(original), `${original} is gone: update the copy's source or drop it`).toBe(true);
    expect(readFileSync(copy).equals(readFileSync(original)), `${copy} differs from ${original}: copy it again (cp ${original} ${copy})`).toBe(true);
  });
});
