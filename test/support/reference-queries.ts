import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rFixtures } from './paths.js';

/** One query of test/fixtures/r/*_*.reference.json (R's survey package figures, copied from ../shared/datasets). */
export interface ReferenceQuery {
  id: string;
  base: string;
  target: string;
  weightedSum: number;
  respondents: number;
  baseWeightedSum: number;
  baseRespondents: number;
  baseExpr: unknown;
  targetExpr: unknown;
}

export const referenceFiles = { gss: 'gss_1972_2024_sub.reference.json', nhanes: 'nhanes_2009_2010_survey.reference.json' } as const;

export function referenceQueries(name: keyof typeof referenceFiles): ReferenceQuery[] {
  return JSON.parse(readFileSync(join(rFixtures, referenceFiles[name]), 'utf8')) as ReferenceQuery[];
}
