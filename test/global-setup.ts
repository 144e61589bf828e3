import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildDataset } from '../src/facade/build.js';
import { repoRoot, sharedDatasets } from './support/paths.js';

declare module 'vitest' {
  export interface ProvidedContext {
    testDatasets: { gss: string; nhanes: string; dir: string };
  }
}

/** Builds the GSS and NHANES datasets once for the whole suite, from ../shared/datasets. */
export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-test-'));
  const gss = join(dir, 'gss.arrow');
  const nhanes = join(dir, 'nhanes.arrow');
  await buildDataset(join(sharedDatasets, 'gss_1972_2024_sub.csv.gz'), {
    weights: ['wtssps'],
    survey: 'GSS',
    out: gss,
    codebook: join(repoRoot, 'datasets', 'gss.codebook.json'),
  });
  await buildDataset(join(sharedDatasets, 'nhanes_2009_2010_survey.csv.gz'), {
    weights: ['WTMEC2YR'],
    survey: 'NHANES',
    out: nhanes,
    codebook: join(repoRoot, 'datasets', 'nhanes.codebook.json'),
  });
  project.provide('testDatasets', { gss, nhanes, dir });
  return () => rmSync(dir, { recursive: true, force: true });
}
