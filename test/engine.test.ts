// The engine on a synthetic dataset big enough to use every storage path: u8 and u16 index
// columns, a variable with more values than get code containers, dense and sparse codes.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileDataset } from '../src/dataset/compile.js';
import { writeDataset } from '../src/dataset/writer.js';
import { openDataset, type Dataset } from '../src/facade/dataset.js';
import { parseExpression } from '../src/query/parse.js';
import { makeDataset, rawTable } from './support/make-dataset.js';
import { referenceCell, type ReferenceTable } from './support/reference-engine.js';

const ROWS = 70_001;
// A seeded generator (mulberry32) so the data is the same on every run.
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const next = random(42);
const columns: Record<string, string[]> = { big: [], mid: [], cat: [], rare: [], zip: [] };
const weights: number[] = [];
const weights2: number[] = [];
for (let row = 0; row < ROWS; row++) {
  columns.big!.push(next() < 0.05 ? '' : String(Math.floor(next() * 7000)));
  columns.mid!.push(String(Math.floor(next() * 300)));
  columns.cat!.push('ABCDE'[Math.floor(next() * 5)]!);
  columns.rare!.push(next() < 0.002 ? String(1 + Math.floor(next() * 3)) : '');
  columns.zip!.push(String(Math.floor(next() * 40)).padStart(5, '0'));
  weights.push(Math.round(next() * 2300));
  weights2.push(next() * 3);
}
const table: ReferenceTable = { columns, weights, numeric: new Set(['big', 'mid', 'rare']) };

const QUERIES: Array<[string, string]> = [
  ['*', '*'],
  ['big=100..2000', 'cat=A'],
  ['big=3500', 'mid=1..299'],
  ['NOT big=NA', 'big=NA'],
  ['mid=7', 'rare=2'],
  ['rare=1,3', 'cat=B,C OR mid=..20'],
  ['zip=00007,00011', 'NOT (cat=E AND mid=150..)'],
  ['big=..6998', 'big=6000.. AND NOT mid=0,1,2,3,4,5,6,7,8,9,10'],
  ['cat=A OR cat=B OR cat=C', 'big=NA OR rare=NA'],
  ['big=-1000..-1', '*'],
];

describe('a 70,001-respondent synthetic dataset', () => {
  let ds: Dataset;
  beforeAll(async () => {
    ds = await makeDataset(columns, weights);
    return () => ds.close();
  });

  it('stores each variable as expected', () => {
    const byName = Object.fromEntries(ds.info.variables.map((v) => [v.name, v]));
    expect(byName.big!.distinct).toBeGreaterThan(5000);
    expect(byName.big!.values).toBeUndefined();
    expect(byName.zip!.kind).toBe('text');
    expect(byName.zip!.values!.map((v) => v.value)).toContain('00007');
    expect(byName.rare!.missing).toBe(columns.rare!.filter((v) => v === '').length);
    expect(byName.mid!.min).toBe(0);
    expect(byName.mid!.max).toBe(299);
  });

  it.each(QUERIES)('base %s, target %s matches the reference', async (base, target) => {
    const result = await ds.crosstab({ base, targets: [target] });
    const expected = referenceCell(table, parseExpression(base), parseExpression(target));
    const cell = result.targets[0]!;
    expect(cell.respondents).toBe(expected.respondents);
    expect(cell.weighted).toBe(expected.weighted); // integer weights: exact in f64
    expect(cell.sumSqWeights).toBe(expected.sumSqWeights);
  });

  it('stability levels follow the 60 / 30 thresholds', async () => {
    const result = await ds.crosstab({ base: '*', targets: ['rare=1', 'mid=5 AND cat=A', 'mid=5'] });
    const levels = result.targets.map((cell) => [cell.respondents, cell.stability] as const);
    for (const [respondents, level] of levels) {
      expect(level).toBe(respondents <= 30 ? 'very-unstable' : respondents <= 60 ? 'caution' : 'stable');
    }
    expect(levels.map(([, level]) => level)).toContain('stable');
  });

  it('unweighted counts each respondent once', async () => {
    const result = await ds.crosstab({ base: 'cat=A', targets: ['mid=..99'], weight: null });
    expect(result.weight).toBeNull();
    expect(result.targets[0]!.weighted).toBe(result.targets[0]!.respondents);
    expect(result.targets[0]!.sumSqWeights).toBe(result.targets[0]!.respondents);
  });
});

describe('several weights', () => {
  it('each weight column is chosen per query', async () => {
    const raw = rawTable({ cat: columns.cat!.slice(0, 500) }, weights.slice(0, 500));
    raw.weights.push({ name: 'w2', values: Float64Array.from(weights2.slice(0, 500)) });
    const out = join(mkdtempSync(join(tmpdir(), 'crosstab-w2-')), 'w2.arrow');
    await writeDataset(compileDataset(raw, { survey: 'W' }), out);
    const ds = await openDataset(out);
    try {
      expect(ds.info.weights).toEqual(['w', 'w2']);
      const second = await ds.crosstab({ base: '*', targets: ['cat=C'], weight: 'w2' });
      const expected = referenceCell({ ...table, columns: { cat: columns.cat!.slice(0, 500) }, weights: weights2.slice(0, 500) }, { all: true }, { var: 'cat', in: ['C'] });
      expect(second.weight).toBe('w2');
      expect(second.targets[0]!.weighted).toBeCloseTo(expected.weighted, 9);
      const first = await ds.crosstab({ base: '*', targets: ['cat=C'] });
      expect(first.weight).toBe('w');
      expect(first.targets[0]!.weighted).not.toBeCloseTo(second.targets[0]!.weighted, 3);
    } finally {
      ds.close();
    }
  });
});
