// A multi-response variable with many values as table columns: its default group's pairs
// (k(k-1)/2) are counted only while they fit one table (at most an axis's entries, per-PSU
// sums under the engine's cap); past that the table still comes, without the counts, and its
// column tests are refused naming what to do, while an explicit smaller group is tested.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDataset, CrosstabError, ErrorCode, openDataset, tableStatistics, type BuildOptions } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'multi-many-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Seeded respondents: a group of `groups` values, strata of 10 PSUs, a set of up to 6 of `values` brands. */
function writeCsv(respondents: number, values: number, groups: number): string {
  let seed = 5;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const lines = ['id,w,st,psu,grp,brands'];
  for (let i = 0; i < respondents; i++) {
    const set = new Set<number>();
    for (let j = Math.floor(next() * 7); j > 0; j--) set.add(1 + Math.floor(next() * values));
    const psu = Math.floor(i / 4);
    lines.push([i, (0.5 + next() * 2).toFixed(3), Math.floor(psu / 10), psu, 1 + (i % groups), [...set].join(';')].join(','));
  }
  const file = join(dir, `b${values}-${respondents}-${groups}.csv`);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

async function refusal(run: () => unknown): Promise<CrosstabError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(CrosstabError);
    return error as CrosstabError;
  }
  throw new Error('expected a refusal');
}

describe.each(['inline', 'pool'] as const)('a multi-response variable with many values as columns, %s', (execution) => {
  const cases: Array<[string, number, number, number, Partial<BuildOptions>]> = [
    // 102 values: 5,151 pairs, more than an axis takes.
    ['more pairs than an axis takes (simple design)', 4000, 102, 3, {}],
    // 60 values, 20 rows, 2,500 PSUs: the pairs' per-PSU sums pass the engine's cap, the table's do not.
    ['pairs whose per-PSU sums pass the cap (strata and PSUs)', 10000, 60, 20, { design: { strata: 'st', psu: 'psu', nest: true } }],
  ];
  it.each(cases)('%s: the table comes, its column tests are refused, a smaller explicit group is tested', async (_name, respondents, values, groups, build) => {
    const out = join(dir, `b${values}-${execution}.arrow`);
    await buildDataset(writeCsv(respondents, values, groups), { weights: ['w'], survey: 'B', out, multi: [{ column: 'brands', delimiter: ';' }], ...build });
    const ds = await openDataset(out, { execution });
    try {
      const query = { base: '*', rows: [{ variable: 'grp' }], columns: [{ variable: 'brands' }], missing: 'hide' as const };
      const result = await ds.table(query);
      expect(result.columns.length).toBe(values + 1);
      expect(result.overlaps).toBeUndefined();
      expect(tableStatistics(result, { stats: ['vpct', 'chisq'] }).raoScottNotDefined).toEqual([{ group: 0, reason: 'overlapping-columns' }]);
      const error = await refusal(() => tableStatistics(result, { stats: ['sig'] }));
      expect(error.code).toBe(ErrorCode.invalidOption);
      expect(error.details.field).toBe('columnGroups');
      expect(error.details.hint).toContain(`brands's ${values} values make too many pairs`);
      const few = await ds.table({ ...query, columnGroups: [[0, 1, 2, 3]] });
      const statistics = tableStatistics(few, { stats: ['sig'] });
      expect(statistics.comparisons!.length).toBe(groups * 6);
      expect(statistics.comparisons!.some((pair) => pair.respondentsInBoth! > 0)).toBe(true);
    } finally {
      ds.close();
    }
  }, 300_000);
});
