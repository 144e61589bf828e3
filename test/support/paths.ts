import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const cliPath = join(repoRoot, 'dist', 'cli', 'main.js');

/** The GSS and NHANES extracts, shipped in the repo's datasets/ (copies of ../shared's). */
export const gssCsv = join(repoRoot, 'datasets', 'gss_1972_2024_sub.csv.gz');
export const nhanesCsv = join(repoRoot, 'datasets', 'nhanes_2009_2010_survey.csv.gz');
/** R's survey-package figures, committed as test fixtures. */
export const rFixtures = join(repoRoot, 'test', 'fixtures', 'r');

/**
 * ../shared/datasets beside the checkout. The suite reads only the ACS file from it (the one
 * outside input, too big for the repo); test/fixtures-drift.test.ts compares the committed
 * copies with the originals there.
 */
export const sharedDatasets = resolve(repoRoot, '..', 'shared', 'datasets');
export const acsCsv = join(sharedDatasets, 'acs_pums_2024_person.csv.gz');
export const hasAcs = existsSync(acsCsv);

/**
 * Call at the top of a test file that needs the ACS file: returns true when its tests should
 * be skipped. A missing file is said loudly; under CI=true it is a failing test, not a skip.
 */
export function skipWithoutAcs(what: string): boolean {
  if (hasAcs) return false;
  const message = `${what} needs ${acsCsv}, which is not here (copy the ACS PUMS 2024 person file there; see ../shared/datasets/README.md).`;
  if (process.env.CI === 'true') {
    describe(`${what}: input missing`, () => {
      it('has the ACS PUMS file (required under CI=true)', () => {
        throw new Error(message);
      });
    });
  } else {
    console.warn(`\n*** SKIPPED: ${message} CI has it; these tests are NOT optional. ***\n`);
  }
  return true;
}
