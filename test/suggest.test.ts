// "Did you mean": near names as people mistype them (swapped letters, a full word for an
// abbreviated name, a shared stem), and answers in bounded work whatever the length of the
// misspelt name or of the values it is compared with.
import { describe, expect, it } from 'vitest';
import type { CrosstabError } from '../src/index.js';
import { suggest } from '../src/text/suggest.js';
import { makeDataset } from './support/make-dataset.js';

const GSS = ['year', 'id', 'ballot', 'age', 'race', 'sex', 'degree', 'padeg', 'madeg', 'relig', 'polviews', 'fefam', 'vpsu', 'vstrat', 'oversamp', 'formwt', 'wtssall', 'sampcode', 'sample'];

describe('suggest', () => {
  it('counts two swapped neighbours as one edit', () => {
    expect(suggest('yaer', GSS)).toEqual(['year']);
    expect(suggest('sxe', GSS)).toEqual(['sex']);
    expect(suggest('dgeree', GSS)).toEqual(['degree']);
  });

  it('finds an abbreviated name from the misspelt full word, after closer names', () => {
    expect(suggest('relgion', GSS)).toEqual(['relig']);
    expect(suggest('religion', GSS)).toEqual(['relig']);
    expect(suggest('polviewss', GSS)[0]).toBe('polviews');
  });

  it('finds a name sharing a long stem', () => {
    expect(suggest('wtssall', ['wtssps'])).toEqual(['wtssps']);
    expect(suggest('sampling', GSS)).toContain('sample');
  });

  it('still finds nothing for unrelated names', () => {
    expect(suggest('zzz', GSS)).toEqual([]);
    expect(suggest('income', GSS)).toEqual([]);
  });

  it('suggests nothing for a name of absurd length, however close a candidate is', () => {
    const value = 'a'.repeat(100_000);
    expect(suggest(`${value}b`, [`${value}c`, value])).toEqual([]);
  });

  it('compares names up to the longest suggested length, one edit apart', () => {
    const value = 'x'.repeat(199);
    const candidates = Array.from({ length: 2_000 }, (_, i) => `${value}${String.fromCharCode(0x4e00 + i)}`);
    expect(suggest(`${value}y`, candidates)).toEqual(candidates.slice(0, 3));
  });
});

describe('an unknown value of absurd length', () => {
  it('is answered unknown_value without suggestions; neither message nor hint echoes a long value whole', async () => {
    const long = 'v'.repeat(100_000);
    const ds = await makeDataset({ answer: [long, `${long}w`, 'short'] }, [1, 1, 1]);
    try {
      const error = (await ds.crosstab({ base: '*', targets: [`answer=${long}x`] }).catch((caught: CrosstabError) => caught)) as CrosstabError;
      expect(error.code).toBe('unknown_value');
      expect(error.details.suggestions).toEqual([]);
      expect(error.message.length).toBeLessThan(500);
      expect(error.details.hint!.length).toBeLessThan(500);
      // A short misspelling of a short value is still suggested.
      const near = (await ds.crosstab({ base: '*', targets: ['answer=shrot'] }).catch((caught: CrosstabError) => caught)) as CrosstabError;
      expect(near.details.suggestions).toEqual(['short']);
    } finally {
      ds.close();
    }
  });
});
