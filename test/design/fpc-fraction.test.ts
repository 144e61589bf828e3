// A Taylor design whose fpc column holds sampling fractions as R writes them with
// sprintf("%.17g") (0.20000000000000001): the column is numeric, and totals, column
// percentages and their SEs equal R's svydesign(fpc = ~FPCFRAC) on the same file
// (scripts/fpc-fraction-fixtures.R). The build refused such a column before ("must hold
// positive numbers": the 17-digit fractions made it text).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset, tableStatistics } from '../../src/index.js';
import { repoRoot } from '../support/paths.js';
import { relative } from '../support/r-weights.js';

interface Figure { row: string; column: string; weighted: number; totalSE: number; columnPct: number; columnPctSE: number }
const folder = join(repoRoot, 'test', 'fixtures', 'fpc-fraction');
const fixture = JSON.parse(readFileSync(join(folder, 'nhanes-fpcfrac.json'), 'utf8')) as {
  file: string; weight: string; strata: string; psu: string; fpc: string; rows: string; columns: string; fractions: string[]; r: { figures: Figure[] };
};
const dir = mkdtempSync(join(tmpdir(), 'fpc-fraction-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('an fpc column of sampling fractions written with 17 digits', () => {
  it("builds, and gives R's totals, column percentages and their SEs", async () => {
    // The file holds fractions a float does not hold exactly as written.
    expect(fixture.fractions.filter((text) => String(Number(text)) !== text).length).toBeGreaterThan(5);
    const out = join(dir, 'fpc.arrow');
    await buildDataset(join(folder, fixture.file), { weights: [fixture.weight], survey: 'NHANES', out, design: { strata: fixture.strata, psu: fixture.psu, nest: true, fpc: fixture.fpc } });
    const dataset = await openDataset(out);
    try {
      expect(dataset.info.variables.find((variable) => variable.name === fixture.fpc)!.kind).toBe('numeric');
      const result = await dataset.table({ base: '*', rows: [{ variable: fixture.rows }], columns: [{ variable: fixture.columns }] });
      const statistics = tableStatistics(result, { stats: 'all' });
      const width = result.columns.length;
      expect(fixture.r.figures.length).toBe(12);
      for (const cell of fixture.r.figures) {
        const r = result.rows.findIndex((row) => row.expr === `${fixture.rows}=${cell.row}`);
        const c = result.columns.findIndex((column) => column.expr === `${fixture.columns}=${cell.column}`);
        expect(r, cell.row).toBeGreaterThanOrEqual(0);
        expect(c, cell.column).toBeGreaterThanOrEqual(0);
        const at = r * width + c;
        const where = `${cell.row} x ${cell.column}`;
        expect(relative(result.weighted[at]!, cell.weighted), `${where} total`).toBeLessThan(1e-12);
        expect(relative(statistics.weightedSE![at]!, cell.totalSE), `${where} total SE`).toBeLessThan(1e-9);
        expect(relative(statistics.columnPct![at]!, cell.columnPct), `${where} column %`).toBeLessThan(1e-12);
        expect(relative(statistics.columnPctSE![at]!, cell.columnPctSE), `${where} column % SE`).toBeLessThan(1e-9);
      }
    } finally {
      dataset.close();
    }
  });
});
