// Multi-response variables over the full ACS PUMS 2024 person file (when present; in CI it
// is): health coverage (HICOV, PRIVCOV, PUBCOV) and disability (DEAR, DEYE, DREM, DPHY) as
// dichotomy sets counting 1, every figure against the dummy-column expression it stands for,
// on the inline kernel and on the worker pool (one build for both, shared per test run).
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDataset, type Dataset } from '../src/index.js';
import { acsDataset } from './support/acs-builds.js';
import { acsCsv, skipWithoutAcs } from './support/paths.js';

const skipAcs = skipWithoutAcs('test/multi-response-acs.test.ts (multi-response ACS)');
const KEPT = ['PWGTP', 'SEX', 'AGEP', 'HICOV', 'PRIVCOV', 'PUBCOV', 'DEAR', 'DEYE', 'DREM', 'DPHY'];

const EQUIVALENT: Array<[string, string]> = [
  ['cover=1', 'HICOV=1'],
  ['cover=2,3', 'PRIVCOV=1 OR PUBCOV=1'],
  ['cover=all(2,3)', 'PRIVCOV=1 AND PUBCOV=1'],
  ['cover=none(2,3)', 'PRIVCOV=2 AND PUBCOV=2'],
  ['NOT cover=1', 'NOT HICOV=1'],
  ['disab=1,2,3,4', 'DEAR=1 OR DEYE=1 OR DREM=1 OR DPHY=1'],
  ['disab=all(3,4)', 'DREM=1 AND DPHY=1'],
  ['disab=none(1,2,3,4)', '(DEAR=2 OR DEAR=NA) AND (DEYE=2 OR DEYE=NA) AND (DREM=2 OR DREM=NA) AND (DPHY=2 OR DPHY=NA) AND NOT (DEAR=NA AND DEYE=NA AND DREM=NA AND DPHY=NA)'],
  ['disab=NA', 'DEAR=NA AND DEYE=NA AND DREM=NA AND DPHY=NA'],
  ['disab=3..4 AND cover=3', '(DREM=1 OR DPHY=1) AND PUBCOV=1'],
];

describe.skipIf(skipAcs).each(['inline', 'pool'] as const)('ACS multi-response variables (%s)', (execution) => {
  let ds: Dataset;
  beforeAll(async () => {
    const header = execFileSync('sh', ['-c', `gzip -dc '${acsCsv}' | head -1`]).toString().trim().split(',');
    const codebook = {
      multi: [
        { name: 'cover', columns: ['HICOV', 'PRIVCOV', 'PUBCOV'], counted: '1', label: 'Health coverage' },
        { name: 'disab', columns: ['DEAR', 'DEYE', 'DREM', 'DPHY'], counted: '1', label: 'Difficulty' },
      ],
    };
    const out = await acsDataset({ weights: ['PWGTP'], survey: 'ACS', codebook, exclude: header.filter((column) => !KEPT.includes(column)) });
    ds = await openDataset(out, { execution });
  }, 900_000);
  afterAll(() => ds?.close());

  for (const base of ['*', 'SEX=2 AND AGEP=65..']) {
    it(`base ${base}: counts and weighted sums equal the dummy columns'`, async () => {
      const result = await ds.crosstab({ base, targets: EQUIVALENT.flat() });
      EQUIVALENT.forEach(([multi], i) => {
        const [a, b] = [result.targets[2 * i]!, result.targets[2 * i + 1]!];
        expect({ multi, respondents: a.respondents, weighted: a.weighted }).toEqual({ multi, respondents: b.respondents, weighted: b.weighted });
        if (multi !== 'disab=NA') expect(a.respondents).toBeGreaterThan(0);
      });
    });
  }
});
