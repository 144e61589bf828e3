// Column tests on the columns of an SPSS multiple-response dichotomy set (MRSETS, written by
// Debian's pspp into a .sav file): the set as whole-variable columns must give the figures,
// pairs and letters of the same table over its member dummy columns with an explicit column
// group (that path is checked against R in test/report/overlap-columns.test.ts).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset, tableStatistics } from '../src/index.js';
import { hasPspp, skipWithoutPspp } from './support/pspp.js';

const noPspp = skipWithoutPspp('test/multi-response-sav-columns.test.ts');

const dir = mkdtempSync(join(tmpdir(), 'multi-sav-columns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Seeded respondents: a group 1..3, a weight, three dichotomies (1 yes, 0 no, all blank = no answer). */
function writeSav(): string {
  let seed = 29;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const lines: string[] = [];
  for (let id = 1; id <= 500; id++) {
    const grp = 1 + Math.floor(next() * 3);
    const blank = next() < 0.08;
    const dich = [0.7, 0.45, 0.3].map((p) => (blank ? '.' : next() < p + 0.05 * grp ? '1' : '0'));
    lines.push([id, grp, (0.5 + next() * 2).toFixed(2), ...dich].join(' '));
  }
  const syntax = join(dir, 'cover.sps');
  const out = join(dir, 'cover.sav');
  writeFileSync(syntax, [
    'DATA LIST LIST /id grp w hicov privcov pubcov.',
    'BEGIN DATA',
    ...lines,
    'END DATA.',
    "VALUE LABELS grp 1 'North' 2 'Centre' 3 'South'.",
    "MRSETS /MDGROUP NAME=$cover LABEL='Health coverage' VARIABLES=hicov privcov pubcov VALUE=1.",
    `SAVE OUTFILE='${out}'.`,
    '',
  ].join('\n'));
  execFileSync('pspp', ['-O', 'format=txt', '-o', join(dir, 'cover.txt'), syntax]);
  return out;
}

describe.skipIf(noPspp)('a pspp-written MRSETS dichotomy set as columns', () => {
  it('gives the column tests of its member dummy columns in one explicit group', async () => {
    if (!hasPspp) throw new Error('this test needs Debian\'s pspp (apt-get install pspp); CI installs it');
    const out = join(dir, 'cover.arrow');
    await buildDataset(writeSav(), { weights: ['w'], survey: 'SAVMR', out, threads: 0 });
    const ds = await openDataset(out);
    try {
      const rows = [{ variable: 'grp' }];
      const multi = await ds.table({ base: '*', rows, columns: [{ variable: '$cover' }], missing: 'hide' });
      const dummies = await ds.table({ base: '*', rows, columns: ['hicov=1', 'privcov=1', 'pubcov=1'], columnGroups: [[0, 1, 2]], missing: 'hide' });
      expect(multi.columns.map((column) => column.expr)).toEqual(['$cover=1', '$cover=2', '$cover=3', '$cover=1..3']);
      for (const options of [{ stats: ['vpct', 'se', 'sig'] as const }, { stats: ['sig'] as const, correction: 'holm' as const }]) {
        const ours = tableStatistics(multi, { ...options, stats: [...options.stats] });
        const reference = tableStatistics(dummies, { ...options, stats: [...options.stats] });
        expect(ours.comparisons!.length).toBe(9);
        expect(ours.comparisons!.every((pair) => (pair.respondentsInBoth ?? 0) > 0)).toBe(true);
        expect(ours.comparisons).toEqual(reference.comparisons);
        for (let r = 0; r < multi.rows.length; r++) {
          for (let c = 0; c < 3; c++) {
            expect(ours.letters![r * 4 + c]).toBe(reference.letters![r * 3 + c]);
            if (ours.columnPctSE) expect(ours.columnPctSE[r * 4 + c]).toBe(reference.columnPctSE![r * 3 + c]);
          }
        }
        expect(ours.columnLetters).toEqual(['A', 'B', 'C', null]);
      }
    } finally {
      ds.close();
    }
  });
});
