// Column comparisons under replicate weights when one column of the group is empty under some
// replicate, against R (scripts/replicate-pair-fixtures.R, test/fixtures/r/replicate-pairs.reference.json).
// The SE of p_A − p_B is the replicate variance of that difference: only the replicates under
// which A or B is empty are dropped, never one under which a third column of the group is
// (which R's svyby or svyratio over the whole group with covmat = TRUE drops for every pair;
// the fixture holds that figure too, to show the case tells the two apart).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tableStatistics } from '../../src/report/index.js';
import { repoRoot } from '../support/paths.js';
import { closeDesignDatasets, designFixture, openDesignDataset, type DesignTable } from './support.js';

interface Pair {
  columnA: number;
  columnB: number;
  difference: number;
  se: number;
  groupSE: number;
}
interface Cell {
  column: number;
  proportion: number;
  se: number;
  emptyReplicates: number[];
}
interface Columns {
  cells: Cell[];
  pairs: Pair[];
}
const fixture = JSON.parse(readFileSync(join(repoRoot, 'test', 'fixtures', 'r', 'replicate-pairs.reference.json'), 'utf8')) as {
  base: string;
  row: string;
  disjointColumns: string;
  overlappingColumns: string[];
  designs: Array<{ type: string; mse: boolean; disjoint: Columns; overlapping: Columns }>;
};

const TOLERANCE = 1e-9;
// Relative error; absolute below 1e-6 (race 4's proportion has SE 0 in R: its respondents of the base are in one PSU).
const relative = (ours: number, reference: number) => Math.abs(ours - reference) / Math.max(Math.abs(reference), 1e-6);

afterAll(() => closeDesignDatasets());

describe.each(fixture.designs)('$type replicates (mse $mse): a pair of columns when another column is empty under a replicate', ({ type, mse, disjoint, overlapping }) => {
  const table = designFixture.tables.find((t) => t.build.replicateType === type && t.build.givenDegf === undefined)!;
  const design: DesignTable = { ...table, build: { ...table.build, mse } };

  it('the case is one where the whole group would drop a replicate for every pair', () => {
    for (const columns of [disjoint, overlapping]) {
      expect(columns.cells.some((cell) => cell.emptyReplicates.length > 0)).toBe(true);
      expect(columns.pairs.some((pair) => relative(pair.groupSE, pair.se) > 0.05)).toBe(true);
    }
  });

  it.each(['inline', 'pool'] as const)('%s: disjoint columns (the values of race) equal R per pair', async (execution) => {
    const ds = await openDesignDataset(design, execution);
    const result = await ds.table({ base: fixture.base, rows: [fixture.row], columns: [{ variable: fixture.disjointColumns }], missing: 'hide' });
    const statistics = tableStatistics(result, { stats: 'all' });
    const columnOf = (k: number) => result.columns.findIndex((column) => column.value === String(k + 1));
    for (const cell of disjoint.cells) {
      expect(relative(statistics.columnPct![columnOf(cell.column)]!, cell.proportion)).toBeLessThan(TOLERANCE);
      expect(relative(statistics.columnPctSE![columnOf(cell.column)]!, cell.se)).toBeLessThan(TOLERANCE);
    }
    for (const pair of disjoint.pairs) {
      const ours = statistics.comparisons!.find((c) => c.row === 0 && c.columnA === columnOf(pair.columnA) && c.columnB === columnOf(pair.columnB))!;
      expect(ours, `pair ${pair.columnA}-${pair.columnB}`).toBeDefined();
      expect(relative(ours.difference, pair.difference), `difference ${pair.columnA}-${pair.columnB}`).toBeLessThan(TOLERANCE);
      expect(relative(ours.standardError, pair.se), `SE ${pair.columnA}-${pair.columnB}: ours ${ours.standardError}, R ${pair.se} (whole group ${pair.groupSE})`).toBeLessThan(TOLERANCE);
    }
  });

  it.each(['inline', 'pool'] as const)('%s: overlapping expression columns equal R per pair', async (execution) => {
    const ds = await openDesignDataset(design, execution);
    const result = await ds.table({ base: fixture.base, rows: [fixture.row], columns: fixture.overlappingColumns, columnGroups: [[0, 1, 2]] });
    const statistics = tableStatistics(result, { stats: 'all' });
    for (const cell of overlapping.cells) {
      expect(relative(statistics.columnPct![cell.column]!, cell.proportion)).toBeLessThan(TOLERANCE);
      expect(relative(statistics.columnPctSE![cell.column]!, cell.se)).toBeLessThan(TOLERANCE);
    }
    for (const pair of overlapping.pairs) {
      const ours = statistics.comparisons!.find((c) => c.row === 0 && c.columnA === pair.columnA && c.columnB === pair.columnB)!;
      expect(ours, `pair ${pair.columnA}-${pair.columnB}`).toBeDefined();
      expect(ours.respondentsInBoth).toBeDefined();
      expect(relative(ours.difference, pair.difference), `difference ${pair.columnA}-${pair.columnB}`).toBeLessThan(TOLERANCE);
      expect(relative(ours.standardError, pair.se), `SE ${pair.columnA}-${pair.columnB}: ours ${ours.standardError}, R ${pair.se} (whole group ${pair.groupSE})`).toBeLessThan(TOLERANCE);
    }
  });
});
