import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset, weightDataset } from '../../src/index.js';
import { acsCsv, skipWithoutAcs } from '../support/paths.js';
import { expectRWeights, fixtureDir, fixtureOptions, type Fixture } from '../support/r-weights.js';

/**
 * Raking the ACS person file (2.7M respondents) on STATE, SEX, RAC1P and HISP gives every
 * respondent R's rake() weight to 1e-9 relative (fixture: scripts/weight-fixtures.R --acs).
 */
const skip = skipWithoutAcs('test/weighting/acs-weight.test.ts (raking ACS against R)');
const fixturePath = join(fixtureDir, 'acs-rake.json');

describe.skipIf(skip)('raking ACS equals R', () => {
  const dir = mkdtempSync(join(tmpdir(), 'weight-acs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("gives every respondent R's rake() weight", async () => {
    expect(existsSync(fixturePath), `${fixturePath}: run Rscript scripts/weight-fixtures.R --acs ${acsCsv}`).toBe(true);
    const fixture = JSON.parse(readFileSync(fixturePath, 'utf8')) as Fixture;
    // The header line, from the first 64 KiB of the gzip stream (a sync flush reads a truncated stream).
    const header = gunzipSync(readFileSync(acsCsv).subarray(0, 1 << 16), { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8').split('\n')[0]!.split(',');
    const input = join(dir, 'acs.arrow');
    await buildDataset(acsCsv, { weights: ['PWGTP'], survey: 'ACS', out: input, exclude: header.filter((column) => column !== 'PWGTP' && !fixture.r.variables.includes(column)) });
    const out = join(dir, 'raked.arrow');
    const report = await weightDataset(input, { targets: fixture.targets, method: fixture.method, name: 'wt_r', out, ...fixtureOptions(fixture) });
    expect(report.sets[0]!.converged).toBe(true);
    await expectRWeights(out, fixture);
    // The same weight in the dataset's weights file: R's weights, and every cell of the target variables as the rewritten file's.
    const side = await weightDataset(input, { targets: fixture.targets, method: fixture.method, name: 'wt_r', ...fixtureOptions(fixture) });
    expect(side.written).toBe('weights-file');
    expect(side.bytes).toBeLessThan(report.bytes);
    await expectRWeights(input, fixture);
    const [a, b] = await Promise.all([openDataset(out), openDataset(input)]);
    try {
      for (const rows of fixture.r.variables) {
        for (const columns of fixture.r.variables) {
          const query = { base: '*', rows: [{ variable: rows }], columns: [{ variable: columns }], weight: 'wt_r' };
          const [whole, weightsFile] = await Promise.all([a.table(query), b.table(query)]);
          expect(Array.from(weightsFile.weighted)).toEqual(Array.from(whole.weighted));
          expect(Array.from(weightsFile.respondents)).toEqual(Array.from(whole.respondents));
        }
      }
    } finally {
      a.close();
      b.close();
    }
  }, 900_000);
});
