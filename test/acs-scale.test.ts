// The build streams with bounded memory. A file 8x the ACS PUMS person file
// (22 million respondents, made here by repeating the ACS rows with new ids) builds with a
// peak RSS under twice its output file, and answers exactly 8x what the 1x dataset answers
// (the default build of the ACS, shared with the other ACS files of the run).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDataset, type Dataset } from '../src/index.js';
import { ACS_DEFAULT_BUILD, acsDataset } from './support/acs-builds.js';
import { acsCsv, repoRoot, skipWithoutAcs } from './support/paths.js';
import { repeatCsv } from './support/repeat-csv.js';

const COPIES = 8;

const skipAcs = skipWithoutAcs(`test/acs-scale.test.ts (the ${COPIES}x ACS build)`);

interface ChildBuild {
  maxRssKiB: number;
  seconds: number;
  bytes: number;
  respondents: number;
}

function buildInChild(input: string, out: string): ChildBuild {
  const script = join(repoRoot, 'test', 'support', 'build-child.mjs');
  const stdout = execFileSync(process.execPath, [script, join(repoRoot, 'dist', 'index.js'), input, out, 'PWGTP', 'ACS'], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout) as ChildBuild;
}

describe.skipIf(skipAcs)(`ACS PUMS x${COPIES}: streaming build within twice its output`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-acs8-'));
  const big = join(dir, `acs-x${COPIES}.csv`);
  let eight: ChildBuild;
  let small: Dataset;
  let large: Dataset;

  beforeAll(async () => {
    const { bavail, bsize } = statfsSync(dir);
    const needGB = 7;
    if (bavail * bsize < needGB * 1e9) {
      throw new Error(`the ${COPIES}x ACS test needs about ${needGB} GB free in ${dir} (a ${COPIES}x CSV and its dataset); it has ${((bavail * bsize) / 1e9).toFixed(1)} GB`);
    }
    const rows = await repeatCsv(acsCsv, big, COPIES);
    expect(rows).toBe(COPIES * 2_736_891);
    eight = buildInChild(big, join(dir, `acs-x${COPIES}.arrow`));
    rmSync(big);
    console.info(`ACS x${COPIES} build: ${eight.seconds.toFixed(1)} s, peak RSS ${(eight.maxRssKiB / 1024).toFixed(0)} MiB, output ${(eight.bytes / 2 ** 20).toFixed(0)} MiB`);
    small = await openDataset(await acsDataset(ACS_DEFAULT_BUILD));
    large = await openDataset(join(dir, `acs-x${COPIES}.arrow`));
  }, 3_600_000);

  afterAll(() => {
    small?.close();
    large?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`builds ${COPIES * 2_736_891} respondents with a peak RSS under twice the output file`, () => {
    expect(eight.respondents).toBe(COPIES * 2_736_891);
    expect(statSync(join(dir, `acs-x${COPIES}.arrow`)).size).toBe(eight.bytes);
    expect(eight.maxRssKiB * 1024).toBeLessThan(2 * eight.bytes);
  });

  it(`answers exactly ${COPIES}x the 1x dataset: weighted sums, respondents, squared weights`, async () => {
    const base = 'AGEP=18..64';
    const targets = ['SEX=2', 'SCHL=21..24', 'STATE=04', 'PUMA=00101', 'ESR=NA', 'NOT RAC1P=1 AND HISP=2..', 'PINCP=50000..', 'OCCP=2310,2320'];
    for (const b of [base, '*']) {
      const x1 = await small.crosstab({ base: b, targets });
      const x8 = await large.crosstab({ base: b, targets });
      expect(x1.targets.filter((cell) => cell.respondents > 0).length).toBeGreaterThan(targets.length / 2);
      for (const [i, cell] of [x1.base, ...x1.targets].entries()) {
        const scaled = [x8.base, ...x8.targets][i]!;
        const what = i === 0 ? `base ${b}` : `${b} AND ${targets[i - 1]}`;
        expect(scaled.respondents, what).toBe(COPIES * cell.respondents);
        expect(scaled.weighted, what).toBe(COPIES * cell.weighted);
        expect(scaled.sumSqWeights, what).toBe(COPIES * cell.sumSqWeights);
      }
    }
  });

  it('the same variables, values and skipped columns as the 1x dataset', () => {
    expect(large.info.variables.map((v) => [v.name, v.kind, v.distinct])).toEqual(small.info.variables.map((v) => [v.name, v.kind, v.distinct]));
    expect(large.info.skipped.map((s) => s.column)).toEqual(small.info.skipped.map((s) => s.column));
  });
});
