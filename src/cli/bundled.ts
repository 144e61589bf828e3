import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bundledDataset, bundledSource, packageRoot, type BundledDatasetName } from '../facade/bundled-datasets.js';

export { packageRoot };

/** A bundled file's path as `--help` examples show it: relative to the working folder when that is shorter. */
function shown(path: string): string {
  const near = relative(process.cwd(), path);
  return near !== '' && near.length < path.length ? near : path;
}

/** A bundled dataset's .arrow path, as examples show it. */
export function exampleDataset(name: BundledDatasetName): string {
  return shown(bundledDataset(name));
}

/** A bundled dataset's source data and codebook, as examples show them. */
export function exampleSource(name: BundledDatasetName): { data: string; codebook: string } {
  const { data, codebook } = bundledSource(name);
  return { data: shown(data), codebook: shown(codebook) };
}

/**
 * What to do when the bundled datasets are missing: in a checkout they are built by
 * `npm run build`; an installed package ships them, so there a reinstall restores them.
 */
export function bundledDatasetsHint(): string {
  const root = packageRoot();
  return existsSync(join(root, 'src'))
    ? 'Run `npm run build` in the crosstab-engine checkout to compile the bundled datasets (`npm install` does it too).'
    : `The crosstab-engine package at ${root} lacks its bundled datasets/build/*.arrow: reinstall it (npm install crosstab-engine), or compile a dataset of your own with \`crosstab build\`.`;
}

/** Datasets compiled from datasets/ by `npm run build`, shipped in the package (datasets/build/*.arrow). */
export function bundledDatasets(): string[] {
  const folder = join(packageRoot(), 'datasets', 'build');
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((name) => name.endsWith('.arrow'))
    .sort()
    .map((name) => join(folder, name));
}
