// The engine on the generated 300,001-respondent dataset (test/support/large-dataset.ts), big
// enough to use every storage path (u8 and u16 index columns, a variable with more values than
// get code containers, dense and sparse codes) and to span several kernel chunks, against the
// plain-JS reference engine.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { compileDataset } from '../src/dataset/build/compile.js';
import { writeDataset } from '../src/dataset/file/writer.js';
import { openDataset, type Dataset } from '../src/facade/dataset.js';
import { parseExpression } from '../src/query/parse.js';
import { largeData, largeReference, LARGE_ROWS } from './support/large-dataset.js';
import { rawTable } from './support/make-dataset.js';
import { referenceCell } from './support/reference-engine.js';

const { columns, weights, weights2 } = largeData();
const table = largeReference('w');

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

// crosstab() always runs on the calling thread; table.test.ts runs the same dataset's tables
// inline and pooled.
describe('crosstab() on the 300,001-respondent generated dataset', () => {
  let ds: Dataset;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').large);
    return () => ds.close();
  });

  it('has more respondents than two kernel chunks of 2,048 words', () => {
    expect(ds.info.respondents).toBe(LARGE_ROWS);
    expect(LARGE_ROWS).toBeGreaterThan(2 * 2048 * 64);
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

  it.each(QUERIES.slice(0, 5))('fractional weight w2: base %s, target %s equals plain f64 sums to 1e-9', async (base, target) => {
    const result = await ds.crosstab({ base, targets: [target], weight: 'w2' });
    const expected = referenceCell(largeReference('w2'), parseExpression(base), parseExpression(target));
    const cell = result.targets[0]!;
    expect(cell.respondents).toBe(expected.respondents);
    expect(Math.abs(cell.weighted - expected.weighted)).toBeLessThanOrEqual(1e-9 * Math.max(1, expected.weighted));
    expect(Math.abs(cell.sumSqWeights - expected.sumSqWeights)).toBeLessThanOrEqual(1e-9 * Math.max(1, expected.sumSqWeights));
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
