// mergedRanks() (src/build/merged-ranks.ts): a variable's values and a wave's merged as a
// build sorts them, the old ones searched in their stored order, against a reference that
// sorts every distinct value (by number, or by UTF-16 code units; texts of one number are
// one value, the old text kept) and looks each up. Old values in the order a build stores
// them, and in any other order (a dataset of an earlier build).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergedRanks } from '../src/build/merged-ranks.js';

function reference(old: string[], dictionary: string[], numeric: boolean) {
  const key = (text: string): string | number => (numeric ? Number(text) : text);
  const textOf = new Map<string | number, string>();
  for (const text of old) textOf.set(key(text), text);
  const added: string[] = [];
  for (const text of dictionary) {
    if (!textOf.has(key(text))) {
      textOf.set(key(text), text);
      added.push(text);
    }
  }
  const keys = [...textOf.keys()].sort((a, b) => (numeric ? (a as number) - (b as number) : a < b ? -1 : a > b ? 1 : 0));
  const rank = (text: string) => keys.indexOf(key(text)) + 1;
  return { merged: keys.map((k) => textOf.get(k)!), added, rankNow: [0, ...old.map(rank)], rankOfId: [0, ...dictionary.map(rank)] };
}

const numberText = fc.oneof(
  fc.integer({ min: -50, max: 50 }).map(String),
  fc.integer({ min: 0, max: 50 }).map((n) => `0${n}`),
  fc.constantFrom('-0', '0.5', '.5', '1e1', '10.0', '-0.25'),
);
const text = fc.oneof(fc.constantFrom('a', 'b', 'A', 'é', 'm', '06', '6', 'x y', 'z', '日本', '😀', ''), fc.string({ maxLength: 3 }));

/** Distinct values, one text per number for a numeric variable (a build's dictionary holds no two). */
function distinctValues(texts: string[], numeric: boolean): string[] {
  const seen = new Set<string | number>();
  return texts.filter((t) => {
    const k = numeric ? Number(t) : t;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

describe('mergedRanks', () => {
  it.each([true, false])('numeric %s: the reference merge, old values sorted or not', (numeric) => {
    const value = numeric ? numberText : text;
    fc.assert(
      fc.property(fc.array(value, { maxLength: 40 }), fc.array(value, { maxLength: 40 }), fc.boolean(), (oldTexts, waveTexts, sorted) => {
        let old = distinctValues(oldTexts, numeric);
        if (sorted) old = reference(old, [], numeric).merged;
        // A wave's dictionary: distinct texts (two texts of one number may both be there).
        const dictionary = [...new Set(waveTexts)];
        const got = mergedRanks(old, dictionary, numeric);
        const want = reference(old, dictionary, numeric);
        expect(got.merged).toEqual(want.merged);
        expect(got.added).toEqual(want.added);
        expect(Array.from(got.rankNow)).toEqual(want.rankNow);
        expect(Array.from(got.rankOfId)).toEqual(want.rankOfId);
      }),
      { numRuns: 2000 },
    );
  });
});
