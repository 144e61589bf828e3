import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The surveys that ship with the package, compiled by `npm run build` into datasets/build/. */
export const BUNDLED_DATASETS = ['gss', 'nhanes'] as const;
export type BundledDatasetName = (typeof BUNDLED_DATASETS)[number];

/** The source files each bundled dataset is compiled from (in the package's datasets/). */
const SOURCES: Record<BundledDatasetName, { data: string; codebook: string }> = {
  gss: { data: 'gss_1972_2024_sub.csv.gz', codebook: 'gss.codebook.json' },
  nhanes: { data: 'nhanes_2009_2010_survey.csv.gz', codebook: 'nhanes.codebook.json' },
};

/** The crosstab-engine package folder, found from wherever this code runs (src/ or dist/). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'crosstab-engine') return dir;
    dir = dirname(dir);
  }
  throw new Error('crosstab-engine package.json not found above ' + fileURLToPath(import.meta.url));
}

/**
 * The path of a bundled, compiled dataset (`gss`: General Social Survey 1972-2024 subset;
 * `nhanes`: NHANES 2009-2010 with its strata and PSUs), for openDataset():
 *
 * ```ts
 * const gss = await openDataset(bundledDataset('gss'));
 * ```
 */
export function bundledDataset(name: BundledDatasetName): string {
  return join(packageRoot(), 'datasets', 'build', `${name}.arrow`);
}

/** The source data and codebook a bundled dataset is compiled from (`crosstab build` inputs). */
export function bundledSource(name: BundledDatasetName): { data: string; codebook: string } {
  const { data, codebook } = SOURCES[name];
  return { data: join(packageRoot(), 'datasets', data), codebook: join(packageRoot(), 'datasets', codebook) };
}
