// Tables whose weight is 0 for some respondents, against R (scripts/zero-weight-fixtures.R:
// NHANES with every 50th respondent's WTMEC2YR at 0, simple and Taylor designs). Totals,
// column percentages and their SEs equal R's; design effects, which R computes over the
// respondents with a weight above 0 only, are not given (the cells' counts cannot tell those
// apart), and the statistics say why.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset, tableStatistics, tableToJSON, tableToText } from '../../src/index.js';
import { nhanesCsv, repoRoot } from '../support/paths.js';
import { relative } from '../support/r-weights.js';

interface Figure { row: string; column: string; weighted: number; totalSE: number; columnPct: number; columnPctSE: number; deff: number }
const fixture = JSON.parse(readFileSync(join(repoRoot, 'test', 'fixtures', 'zero-weights', 'nhanes-every-50.json'), 'utf8')) as {
  every: number;
  weight: string;
  rows: string;
  columns: string;
  zeroWeights: number;
  r: { simple: Figure[]; taylor: Figure[] };
};

const dir = mkdtempSync(join(tmpdir(), 'zero-weights-'));
const paths = { simple: join(dir, 'simple.arrow'), taylor: join(dir, 'taylor.arrow') };
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(async () => {
  const [header, ...lines] = gunzipSync(readFileSync(nhanesCsv)).toString('utf8').trimEnd().split('\n');
  const weight = header!.split(',').indexOf(fixture.weight);
  const zeroed = lines.map((line, i) => {
    if ((i + 1) % fixture.every !== 0) return line;
    const cells = line.split(',');
    cells[weight] = '0';
    return cells.join(',');
  });
  const csv = join(dir, 'nhanes.csv');
  writeFileSync(csv, [header, ...zeroed].join('\n') + '\n');
  await buildDataset(csv, { weights: [fixture.weight], survey: 'NHANES', out: paths.simple });
  await buildDataset(csv, { weights: [fixture.weight], survey: 'NHANES', out: paths.taylor, design: { strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true } });
}, 120_000);

describe.each(['simple', 'taylor'] as const)('%s design, every 50th weight 0', (design) => {
  it("totals, column percentages and their SEs are R's; design effects are not given, and the statistics say why", async () => {
    const dataset = await openDataset(paths[design]);
    try {
      const result = await dataset.table({ base: '*', rows: [{ variable: fixture.rows }], columns: [{ variable: fixture.columns }] });
      const statistics = tableStatistics(result, { stats: 'all', deff: 'replace' });
      const width = result.columns.length;
      for (const cell of fixture.r[design]) {
        const at = result.rows.findIndex((row) => row.expr === `${fixture.rows}=${cell.row}`) * width + result.columns.findIndex((column) => column.expr === `${fixture.columns}=${cell.column}`);
        const where = `${cell.row} x ${cell.column}`;
        expect(relative(result.weighted[at]!, cell.weighted), `${where} total`).toBeLessThan(1e-12);
        expect(relative(statistics.weightedSE![at]!, cell.totalSE), `${where} total SE`).toBeLessThan(1e-9);
        expect(relative(statistics.columnPct![at]!, cell.columnPct), `${where} column %`).toBeLessThan(1e-12);
        expect(relative(statistics.columnPctSE![at]!, cell.columnPctSE), `${where} column % SE`).toBeLessThan(1e-9);
        // R's design effect exists; the engine's would count the zero-weight respondents in n: none is given.
        expect(Number.isFinite(cell.deff)).toBe(true);
        expect(statistics.designEffect![at]).toBeNaN();
      }
      expect(statistics.designEffectNotDefined).toEqual({ reason: 'zero-weights', respondents: fixture.zeroWeights });
      expect(tableToJSON(result, statistics).designEffectNotDefined).toEqual({ reason: 'zero-weights', respondents: fixture.zeroWeights });
      expect(tableToText(result, statistics)).toContain(`Design effects: not given, ${fixture.zeroWeights} base respondents have weight 0`);
    } finally {
      dataset.close();
    }
  });
});
