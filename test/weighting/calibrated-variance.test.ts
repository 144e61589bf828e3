import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset } from '../../src/build/build.js';
import { openDataset, weightDataset, type WeightOptions } from '../../src/index.js';
import { tableStatistics } from '../../src/report/index.js';
import { nhanesCsv, repoRoot } from '../support/paths.js';
import { relative } from '../support/r-weights.js';

/**
 * Standard errors of tables weighted with a weight from `crosstab weight`, against R's
 * survey package (scripts/weight-variance-fixtures.R): on NHANES with its strata and PSUs,
 * the SEs of every cell's total and column proportion equal those of R's raked,
 * post-stratified or calibrated design (the linearization over the calibration's
 * residuals) to 1e-9 relative; on the simple design they equal R's `svydesign(ids = ~1)`
 * with the new weight as a fixed weight. Fixtures with baseWeight null start from unit
 * weights, as R's svydesign() without weights.
 */
interface Figure { row: string; column: string; weighted: number; totalSE: number; columnPct: number; columnPctSE: number }
interface VarianceFixture {
  case: string;
  dataset: string;
  design: 'taylor' | 'simple';
  /** null: raked from unit weights (baseWeight: null; scripts/unit-weight-fixtures.R). */
  baseWeight: string | null;
  method: WeightOptions['method'];
  /** Base weight 0 for every k-th respondent (R's figures: the design without them). */
  zeroWeightEvery: number | null;
  options: { epsilon?: number; maxIterations?: number; bounds?: [number, number] } | [];
  targets: Record<string, unknown>;
  rows: string;
  columns: string;
  r: { calibrated: Figure[]; fixed: Figure[] };
}

const dir = join(repoRoot, 'test', 'fixtures', 'weight-variance');
const fixtures = readdirSync(dir).filter((file) => file.endsWith('.json')).map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as VarianceFixture);
const out = mkdtempSync(join(tmpdir(), 'weight-variance-'));
const simple = join(out, 'nhanes-simple.arrow');
/** NHANES with its design and one more weight, w0: WTMEC2YR with every k-th respondent's set to 0. */
const zeroWeights = (every: number) => join(out, `nhanes-zero-${every}.arrow`);
afterAll(() => rmSync(out, { recursive: true, force: true }));
beforeAll(async () => {
  await buildDataset(nhanesCsv, { weights: ['WTMEC2YR'], survey: 'NHANES', out: simple });
  for (const every of new Set(fixtures.flatMap((fixture) => (fixture.zeroWeightEvery ? [fixture.zeroWeightEvery] : [])))) {
    const [header, ...lines] = gunzipSync(readFileSync(nhanesCsv)).toString('utf8').trimEnd().split('\n');
    const weight = header!.split(',').indexOf('WTMEC2YR');
    const csv = join(out, `nhanes-zero-${every}.csv`);
    writeFileSync(csv, [`${header},w0`, ...lines.map((line, i) => `${line},${(i + 1) % every === 0 ? 0 : line.split(',')[weight]}`)].join('\n') + '\n');
    await buildDataset(csv, { weights: ['w0'], survey: 'NHANES', out: zeroWeights(every), design: { strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true } });
  }
}, 120_000);

describe.each(fixtures)('$case', (fixture) => {
  it(`gives R's ${fixture.design === 'taylor' ? 'calibrated-design' : 'ids = ~1'} SEs (1e-9 relative)`, async () => {
    const source = fixture.zeroWeightEvery ? zeroWeights(fixture.zeroWeightEvery) : fixture.design === 'taylor' ? join(repoRoot, fixture.dataset) : simple;
    const file = join(out, `${fixture.case}.arrow`);
    const options = Array.isArray(fixture.options) ? {} : fixture.options;
    await weightDataset(source, { targets: fixture.targets, method: fixture.method, name: 'wt_r', out: file, ...options, ...(fixture.baseWeight === null ? { baseWeight: null } : {}) });
    const dataset = await openDataset(file);
    try {
      const result = await dataset.table({ base: '*', rows: [{ variable: fixture.rows }], columns: [{ variable: fixture.columns }], weight: 'wt_r' });
      const statistics = tableStatistics(result, { stats: 'all' });
      const reference = fixture.design === 'taylor' ? fixture.r.calibrated : fixture.r.fixed;
      const width = result.columns.length;
      let worst = 0;
      for (const cell of reference) {
        const r = result.rows.findIndex((row) => row.expr === `${fixture.rows}=${cell.row}`);
        const c = result.columns.findIndex((column) => column.expr === `${fixture.columns}=${cell.column}`);
        expect(r, `row ${cell.row}`).toBeGreaterThanOrEqual(0);
        expect(c, `column ${cell.column}`).toBeGreaterThanOrEqual(0);
        const at = r * width + c;
        const where = `${fixture.rows}=${cell.row} x ${fixture.columns}=${cell.column}`;
        for (const [name, ours, theirs] of [
          ['total', result.weighted[at]!, cell.weighted],
          ['total SE', statistics.weightedSE![at]!, cell.totalSE],
          ['column %', statistics.columnPct![at]!, cell.columnPct],
          ['column % SE', statistics.columnPctSE![at]!, cell.columnPctSE],
        ] as const) {
          const error = relative(ours, theirs);
          worst = Math.max(worst, error);
          expect(error, `${where} ${name}: ours ${ours}, R ${theirs}`).toBeLessThan(1e-9);
        }
      }
      console.log(`${fixture.case}: worst relative error ${worst.toExponential(1)} over ${reference.length} cells`);
    } finally {
      dataset.close();
    }
  });
});
