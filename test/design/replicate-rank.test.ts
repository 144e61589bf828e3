// The rank behind a replicate design's degrees of freedom (R: qr(weights(design, "analysis"),
// tol = 1e-5)$rank), over the whole file and over a domain's rows.
import { describe, expect, it } from 'vitest';
import { replicateRank } from '../../src/stats/replicate-rank.js';

/** JKn replicate weights of `strata` strata with two PSUs of `perPsu` respondents each: one replicate per PSU. */
function jackknife(strata: number, perPsu: number): { columns: Float64Array[]; stratumOf: number[] } {
  const n = strata * 2 * perPsu;
  const stratumOf = Array.from({ length: n }, (_, i) => Math.floor(i / (2 * perPsu)));
  const psuOf = (i: number) => Math.floor(i / perPsu);
  const weight = (i: number) => 1 + (i % 7);
  const columns: Float64Array[] = [];
  for (let psu = 0; psu < strata * 2; psu++) {
    const stratum = Math.floor(psu / 2);
    columns.push(Float64Array.from({ length: n }, (_, i) => (stratumOf[i] !== stratum ? weight(i) : psuOf(i) === psu ? 0 : 2 * weight(i))));
  }
  return { columns, stratumOf };
}

describe('replicateRank', () => {
  it('counts one dimension per stratum plus one over the file, and per reached stratum plus one in a domain', () => {
    const { columns, stratumOf } = jackknife(6, 5);
    expect(replicateRank(columns, stratumOf.length)).toBe(7);
    const twoStrata = Uint32Array.from(stratumOf.flatMap((stratum, i) => (stratum === 1 || stratum === 4 ? [i] : [])));
    expect(replicateRank(columns, twoStrata)).toBe(3);
    const oneStratum = Uint32Array.from(stratumOf.flatMap((stratum, i) => (stratum === 2 ? [i] : [])));
    expect(replicateRank(columns, oneStratum)).toBe(2);
    expect(replicateRank(columns, new Uint32Array(0))).toBe(0);
  });

  it('keeps a column whose own part is 1e-5 of its norm or more, drops one below (R tol = 1e-5)', () => {
    const n = 1000;
    const base = Float64Array.from({ length: n }, (_, i) => 1 + (i % 3));
    const norm = Math.hypot(...base);
    const nudged = (size: number) => Float64Array.from(base, (value, i) => (i === 0 ? value + size * norm : value));
    expect(replicateRank([base, nudged(2e-5)], n)).toBe(2);
    expect(replicateRank([base, nudged(5e-6)], n)).toBe(1);
  });

  it('stops reading rows once the rank reaches the limit, and reads them all below it', () => {
    const n = 100_000;
    let reads = 0;
    const counted = (column: Float64Array) => new Proxy(column, { get: (target, key) => (typeof key === 'string' && /^\d+$/.test(key) && reads++, Reflect.get(target, key)) });
    const independent = Array.from({ length: 4 }, (_, r) => counted(Float64Array.from({ length: n }, (_, i) => 1 + ((i * (r + 2)) % 11))));
    expect(replicateRank(independent, n, 4)).toBe(4);
    expect(reads).toBeLessThan(4 * 1024);
    reads = 0;
    const collapsed = [independent[0]!, independent[0]!, independent[1]!];
    expect(replicateRank(collapsed, n)).toBe(2);
    expect(reads).toBe(3 * n);
  });
});
