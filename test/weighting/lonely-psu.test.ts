// A lonely stratum under a raked weight, against R (scripts/lonely-psu-fixtures.R): NHANES with
// stratum 75's two PSUs merged. The domain "not stratum 75" does not reach that stratum under
// the plain design, so lonelyPsu "fail" answers; under the raked weight the calibration's
// residuals reach it, so "fail" refuses, as R does, and "adjust" gives R's figure.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, CrosstabError, openDataset, tableStatistics, weightDataset, type Dataset, type TableResult } from '../../src/index.js';
import { nhanesCsv, repoRoot } from '../support/paths.js';
import { relative } from '../support/r-weights.js';

interface Figure { total: number; totalSE: number }
const fixture = JSON.parse(readFileSync(join(repoRoot, 'test', 'fixtures', 'lonely-psu', 'nhanes-stratum-75.json'), 'utf8')) as {
  mergedStratum: number;
  margins: Array<{ variable: string; proportions: Record<string, number> }>;
  epsilon: number;
  maxIterations: number;
  base: string;
  row: string;
  r: { plainFail: Figure; rakedFail: { error: string }; rakedAdjust: Figure };
};

const dir = mkdtempSync(join(tmpdir(), 'lonely-psu-'));
let dataset: Dataset;
afterAll(() => {
  dataset?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeAll(async () => {
  const [header, ...lines] = gunzipSync(readFileSync(nhanesCsv)).toString('utf8').trimEnd().split('\n');
  const names = header!.split(',');
  const [psu, stratum] = [names.indexOf('SDMVPSU'), names.indexOf('SDMVSTRA')];
  const merged = lines.map((line) => {
    const cells = line.split(',');
    if (Number(cells[stratum]) === fixture.mergedStratum) cells[psu] = '1';
    return cells.join(',');
  });
  writeFileSync(join(dir, 'nhanes.csv'), [header, ...merged].join('\n') + '\n');
  await buildDataset(join(dir, 'nhanes.csv'), { weights: ['WTMEC2YR'], survey: 'NHANES', out: join(dir, 'plain.arrow'), design: { strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true } });
  await weightDataset(join(dir, 'plain.arrow'), { targets: { margins: fixture.margins }, method: 'rake', name: 'raked', out: join(dir, 'raked.arrow'), epsilon: fixture.epsilon, maxIterations: fixture.maxIterations });
  dataset = await openDataset(join(dir, 'raked.arrow'));
}, 120_000);

async function figure(weight: string, lonelyPsu: 'fail' | 'adjust'): Promise<Figure> {
  const table: TableResult = await dataset.table({ base: fixture.base, rows: [fixture.row], columns: ['*'], weight });
  const statistics = tableStatistics(table, { stats: 'all', lonelyPsu });
  return { total: table.weighted[0]!, totalSE: statistics.weightedSE![0]! };
}

describe('a lonely stratum outside the base', () => {
  it('plain design, lonelyPsu "fail": the domain does not reach it, R\'s figure', async () => {
    const ours = await figure('WTMEC2YR', 'fail');
    expect(relative(ours.total, fixture.r.plainFail.total)).toBeLessThan(1e-12);
    expect(relative(ours.totalSE, fixture.r.plainFail.totalSE)).toBeLessThan(1e-9);
  });

  it('raked weight, lonelyPsu "fail": refused naming the stratum, as R refuses', async () => {
    expect(fixture.r.rakedFail.error).toContain(`Stratum (${fixture.mergedStratum}) has only one PSU`);
    const error = await figure('raked', 'fail').then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(CrosstabError);
    expect((error as CrosstabError).message).toContain(`stratum ${fixture.mergedStratum} has only one PSU`);
  });

  it('raked weight, lonelyPsu "adjust": R\'s figure', async () => {
    const ours = await figure('raked', 'adjust');
    expect(relative(ours.total, fixture.r.rakedAdjust.total)).toBeLessThan(1e-9);
    expect(relative(ours.totalSE, fixture.r.rakedAdjust.totalSE)).toBeLessThan(1e-9);
  });
});
