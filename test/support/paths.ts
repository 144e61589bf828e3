import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** ../shared/datasets beside the checkout: real survey data and R reference figures. */
export const sharedDatasets = resolve(repoRoot, '..', 'shared', 'datasets');
export const acsCsv = join(sharedDatasets, 'acs_pums_2024_person.csv.gz');
export const hasAcs = existsSync(acsCsv);
export const cliPath = join(repoRoot, 'dist', 'cli', 'main.js');
