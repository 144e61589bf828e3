import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDataset, weightDataset } from '../../src/index.js';
import { repoRoot } from '../support/paths.js';
import { expectRWeights, fixtureOptions, readFixtures, relative } from '../support/r-weights.js';

/**
 * The engine's weights against R's survey package (rake, postStratify, calibrate,
 * trimWeights), made by scripts/weight-fixtures.R: every respondent's new weight equals R's
 * to 1e-9 relative, and a table weighted with the new weight equals the same table
 * weighted with R's weights. (The ACS case: test/weighting/acs-weight.test.ts.)
 */
const fixtures = readFixtures().filter((fixture) => fixture.dataset !== 'ACS');
const out = mkdtempSync(join(tmpdir(), 'weight-r-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe.each(fixtures)('$case equals R', (fixture) => {
  const file = join(out, `${fixture.case}.arrow`);

  it("gives every respondent R's weight (1e-9 relative)", async () => {
    const report = await weightDataset(join(repoRoot, fixture.dataset), { targets: fixture.targets, method: fixture.method, name: 'wt_r', out: file, ...fixtureOptions(fixture) });
    expect(report.sets.every((set) => set.converged)).toBe(true);
    await expectRWeights(file, fixture);
  });

  // Only the cases whose fixture holds a table get this test (no skipped placeholders).
  if (fixture.r.table === null) return;
  it("tabulates with the new weight as R's weights do", async () => {
    const table = fixture.r.table!;
    const dataset = await openDataset(file);
    try {
      for (const cell of table.cells) {
        const result = await dataset.crosstab({ base: `${table.rows}=${cell.row}`, targets: [`${table.columns}=${cell.column}`], weight: 'wt_r' });
        expect(relative(result.targets[0]!.weighted, cell.weighted), `${table.rows}=${cell.row} x ${table.columns}=${cell.column}`).toBeLessThan(1e-9);
      }
    } finally {
      dataset.close();
    }
  });
});
