// SPSS multiple-response sets (MRSETS: dichotomy and category sets) written by Debian's pspp
// into .sav and .zsav files, read back as multi-response variables; each set's expressions
// must select the respondents of the member-column expressions they stand for.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset } from '../src/index.js';
import { hasPspp, skipWithoutPspp } from './support/pspp.js';

const noPspp = skipWithoutPspp('test/multi-response-sav.test.ts');

const dir = mkdtempSync(join(tmpdir(), 'multi-sav-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Seeded respondents: dichotomies (1 yes, 0 no, all blank = no answer) and two brand columns of codes 1..4 (blank = none chosen). */
function dataLines(): string[] {
  let seed = 11;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const lines: string[] = [];
  for (let id = 1; id <= 400; id++) {
    const blank = next() < 0.1;
    const dich = [0, 1, 2].map(() => (blank ? '.' : next() < 0.45 ? '1' : '0'));
    const brands = [0, 1].map(() => (next() < 0.3 ? '.' : String(1 + Math.floor(next() * 4))));
    lines.push([id, (0.5 + next() * 2).toFixed(2), ...dich, ...brands].join(' '));
  }
  return lines;
}

function writeSav(file: string, zcompressed: boolean): string {
  const syntax = join(dir, `${file}.sps`);
  const out = join(dir, file);
  writeFileSync(
    syntax,
    [
      'DATA LIST LIST /id w hicov privcov pubcov brand1 brand2.',
      'BEGIN DATA',
      ...dataLines(),
      'END DATA.',
      "VARIABLE LABELS hicov 'Any coverage' privcov 'Private coverage' pubcov 'Public coverage'.",
      "VALUE LABELS brand1 brand2 1 'Acme' 2 'Bolt' 3 'Crest' 4 'Dyno'.",
      "MRSETS /MDGROUP NAME=$cover LABEL='Health coverage' VARIABLES=hicov privcov pubcov VALUE=1",
      "  /MCGROUP NAME=$brands LABEL='Brands bought' VARIABLES=brand1 brand2.",
      `SAVE OUTFILE='${out}'${zcompressed ? ' /ZCOMPRESSED' : ''}.`,
      '',
    ].join('\n'),
  );
  execFileSync('pspp', ['-O', 'format=txt', '-o', join(dir, `${file}.txt`), syntax]);
  return out;
}

const EQUIVALENT: Array<[string, string]> = [
  ['$cover=1', 'hicov=1'],
  ['$cover=2,3', 'privcov=1 OR pubcov=1'],
  ['$cover=all(1,3)', 'hicov=1 AND pubcov=1'],
  ['$cover=none(1,2,3)', 'hicov=0 AND privcov=0 AND pubcov=0'],
  ['$cover=NA', 'hicov=NA AND privcov=NA AND pubcov=NA'],
  ['$cover="Private coverage"', 'privcov=1'],
  ['$brands=3', 'brand1=3 OR brand2=3'],
  ['$brands=Acme,Dyno', 'brand1=1,4 OR brand2=1,4'],
  ['$brands=all(1,2)', '(brand1=1 OR brand2=1) AND (brand1=2 OR brand2=2)'],
  ['$brands=NA', 'brand1=NA AND brand2=NA'],
];

describe.skipIf(noPspp).each(['sets.sav', 'sets.zsav'])('pspp-written %s', (file) => {
  it('holds its multiple-response sets as multi-response variables equal to their columns', async () => {
    if (!hasPspp) throw new Error('this test needs Debian\'s pspp (apt-get install pspp); CI installs it');
    const sav = writeSav(file, file.endsWith('.zsav'));
    const out = join(dir, `${file}.arrow`);
    await buildDataset(sav, { weights: ['w'], survey: 'SAVMR', out, threads: 0 });
    const ds = await openDataset(out);
    try {
      const cover = ds.info.variables.find((v) => v.name === '$cover')!;
      expect(cover.kind).toBe('multi');
      expect(cover.label).toBe('Health coverage');
      expect(cover.multi).toEqual({ numeric: true, columns: ['hicov', 'privcov', 'pubcov'], counted: '1' });
      expect(cover.values!.map((v) => v.label)).toEqual(['Any coverage', 'Private coverage', 'Public coverage']);
      const brands = ds.info.variables.find((v) => v.name === '$brands')!;
      expect(brands.multi).toEqual({ numeric: true, columns: ['brand1', 'brand2'] });
      expect(brands.values!.map((v) => [v.value, v.label])).toEqual([['1', 'Acme'], ['2', 'Bolt'], ['3', 'Crest'], ['4', 'Dyno']]);
      for (const weight of [undefined, null] as const) {
        const result = await ds.crosstab({ base: '*', targets: EQUIVALENT.flat(), ...(weight === null ? { weight: null } : {}) });
        EQUIVALENT.forEach(([multi], i) => {
          const [a, b] = [result.targets[2 * i]!, result.targets[2 * i + 1]!];
          expect({ multi, respondents: a.respondents, weighted: a.weighted }).toEqual({ multi, respondents: b.respondents, weighted: b.weighted });
          expect(a.respondents).toBeGreaterThan(0);
        });
      }
    } finally {
      ds.close();
    }
  });
});
