import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildDataset } from '../src/build/build.js';
import { writeLargeDataset } from './support/large-dataset.js';
import { gssCsv, nhanesCsv, repoRoot } from './support/paths.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Built datasets: the GSS and NHANES extracts, and the generated 300,001-respondent one (test/support/large-dataset.ts). */
    testDatasets: { gss: string; nhanes: string; large: string; dir: string };
  }
}

/** Builds the GSS and NHANES datasets (from the repo's datasets/) and the large generated one, once for the whole suite. */
export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-test-'));
  const gss = join(dir, 'gss.arrow');
  const nhanes = join(dir, 'nhanes.arrow');
  await buildDataset(gssCsv, {
    weights: ['wtssps'],
    survey: 'GSS',
    out: gss,
    codebook: join(repoRoot, 'datasets', 'gss.codebook.json'),
  });
  await buildDataset(nhanesCsv, {
    weights: ['WTMEC2YR'],
    survey: 'NHANES',
    out: nhanes,
    codebook: join(repoRoot, 'datasets', 'nhanes.codebook.json'),
  });
  const large = join(dir, 'large.arrow');
  await writeLargeDataset(large);
  project.provide('testDatasets', { gss, nhanes, large, dir });
  return () => rmSync(dir, { recursive: true, force: true });
}
