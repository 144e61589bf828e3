// The encoder's table of numbers already numbered answers as a Map keyed by the same numbers
// does (SameValueZero: -0 is 0), through growth and colliding patterns.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NumberIds } from '../src/dataset/input/number-ids.js';

describe('NumberIds', () => {
  it('finds every number it was given, and no other, as a Map does', () => {
    const number = fc.oneof(
      fc.double({ noNaN: true }),
      fc.integer({ min: -5, max: 5 }),
      fc.constantFrom(0, -0, 2 ** 53 - 1, -(2 ** 53), 2 ** 32, 2 ** 32 + 1, 0.5, 1e-300, Infinity, -Infinity),
      fc.integer({ min: 0, max: 1 << 20 }).map((n) => n * 4294967296),
    );
    fc.assert(
      fc.property(fc.array(number, { maxLength: 3000 }), fc.array(number, { maxLength: 50 }), (values, probes) => {
        const table = new NumberIds();
        const map = new Map<number, number>();
        for (const value of values) {
          const found = table.get(value);
          expect(found).toBe(map.get(value) ?? 0);
          if (found === 0) {
            map.set(value, map.size + 1);
            table.set(value, map.size);
          }
        }
        for (const probe of probes) expect(table.get(probe)).toBe(map.get(probe) ?? 0);
      }),
      { numRuns: 200 },
    );
  });
});
