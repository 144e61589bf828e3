import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
