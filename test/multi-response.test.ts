// Multi-response variables (codebook dichotomies, --multi delimited columns) against the same
// data as dummy columns: every count and weighted sum of a multi-response expression must
// equal that of the dummy-column expression it stands for (`cover=2,3` = `B=1 OR C=1`).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, CrosstabError, ErrorCode, openDataset, tableStatistics, valueExpression, type Dataset } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'multi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A seeded generator (mulberry32), so the data is the same on every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ROWS = 3000;
/**
 * Respondents with three dichotomies A, B, C (1 = yes, 2 = no, blank in all three = no
 * answer), a delimited column `brands` of codes 1..5 ("" = no answer, ";" = none of them)
 * and its dummy columns b1..b5 (blank when `brands` is blank).
 */
function writeData(): string {
  const next = random(7);
  const lines = ['id,w,sex,A,B,C,brands,b1,b2,b3,b4,b5'];
  for (let row = 0; row < ROWS; row++) {
    const noAnswer = next() < 0.08;
    const dich = [0, 1, 2].map(() => (noAnswer ? '' : next() < 0.4 ? '1' : '2'));
    const unanswered = next() < 0.1;
    const chosen = [1, 2, 3, 4, 5].filter(() => next() < 0.3);
    const brands = unanswered ? '' : chosen.length === 0 ? ';' : chosen.join(';');
    const dummies = [1, 2, 3, 4, 5].map((code) => (unanswered ? '' : chosen.includes(code) ? '1' : '0'));
    const weight = (0.5 + next() * 3).toFixed(3);
    lines.push([row + 1, weight, next() < 0.5 ? 1 : 2, ...dich, brands, ...dummies].join(','));
  }
  const path = join(dir, 'multi.csv');
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

let ds: Dataset;
let threaded: Dataset;
beforeAll(async () => {
  const csv = writeData();
  const codebook = join(dir, 'codebook.json');
  writeFileSync(
    codebook,
    JSON.stringify({
      variables: { A: { label: 'Any insurance' }, B: { label: 'Private' }, C: { label: 'Public' }, brands: { values: { '3': 'Brand three' } } },
      multi: { name: 'cover', columns: ['A', 'B', 'C'], counted: '1', label: 'Coverage' },
    }),
  );
  const out = join(dir, 'multi.arrow');
  await buildDataset(csv, { weights: ['w'], survey: 'MULTI', out, codebook, multi: [{ column: 'brands' }], threads: 0 });
  ds = await openDataset(out);
  // The build's worker path makes the variables' buffers apart from the multi-response ones.
  const outThreaded = join(dir, 'multi-threaded.arrow');
  await buildDataset(csv, { weights: ['w'], survey: 'MULTI', out: outThreaded, codebook, multi: [{ column: 'brands' }], threads: 2 });
  threaded = await openDataset(outThreaded);
});
afterAll(() => {
  ds?.close();
  threaded?.close();
});

/** Each pair: a multi-response expression and the dummy-column expression it means. */
const EQUIVALENT: Array<[string, string]> = [
  ['cover=1', 'A=1'],
  ['cover=2,3', 'B=1 OR C=1'],
  ['cover=1..2', 'A=1 OR B=1'],
  ['cover=all(2,3)', 'B=1 AND C=1'],
  ['cover=all(1,2,3)', 'A=1 AND B=1 AND C=1'],
  ['cover=none(2,3)', 'NOT (B=1 OR C=1) AND NOT (A=NA AND B=NA AND C=NA)'],
  ['NOT cover=2,3', 'NOT (B=1 OR C=1)'],
  ['cover=NA', 'A=NA AND B=NA AND C=NA'],
  ['cover=1,NA', 'A=1 OR (A=NA AND B=NA AND C=NA)'],
  ['cover="Private"', 'B=1'],
  ['brands=3', 'b3=1'],
  ['brands=1,2,3,4,5', 'b1=1 OR b2=1 OR b3=1 OR b4=1 OR b5=1'],
  ['brands=all(1,5)', 'b1=1 AND b5=1'],
  ['brands=none(1,2,3,4,5)', 'b1=0 AND b2=0 AND b3=0 AND b4=0 AND b5=0'],
  ['brands=NA', 'b1=NA'],
  ['brands="Brand three"', 'b3=1'],
  ['brands=2..4 AND cover=1', '(b2=1 OR b3=1 OR b4=1) AND A=1'],
];

describe('multi-response variables equal their dummy columns', () => {
  for (const weight of [undefined, null] as const) {
    for (const base of ['*', 'sex=2', 'cover=3']) {
      it(`base ${base}, ${weight === null ? 'unweighted' : 'weighted'}`, async () => {
        const targets = EQUIVALENT.flatMap(([multi, dummies]) => [multi, dummies]);
        const result = await ds.crosstab({ base, targets, ...(weight === null ? { weight: null } : {}) });
        EQUIVALENT.forEach(([multi], i) => {
          const [a, b] = [result.targets[2 * i]!, result.targets[2 * i + 1]!];
          expect({ multi, respondents: a.respondents, weighted: a.weighted }).toEqual({ multi, respondents: b.respondents, weighted: b.weighted });
          if (base === '*') expect(a.respondents).toBeGreaterThan(0);
        });
      });
    }
  }
});

describe('a threaded build', () => {
  it('stores the same respondents', async () => {
    const targets = EQUIVALENT.map(([multi]) => multi);
    expect((await threaded.crosstab({ base: '*', targets })).targets).toEqual((await ds.crosstab({ base: '*', targets })).targets);
  });
});

describe('info lists multi-response variables', () => {
  it('with their values, labels and no-answer count, each value parsing back to its respondents', async () => {
    const cover = ds.info.variables.find((v) => v.name === 'cover')!;
    expect(cover.kind).toBe('multi');
    expect(cover.label).toBe('Coverage');
    expect(cover.multi).toEqual({ numeric: true, columns: ['A', 'B', 'C'], counted: '1' });
    expect(cover.values!.map((v) => [v.value, v.label])).toEqual([['1', 'Any insurance'], ['2', 'Private'], ['3', 'Public']]);
    const brands = ds.info.variables.find((v) => v.name === 'brands')!;
    expect(brands.kind).toBe('multi');
    expect(brands.values!.map((v) => v.value)).toEqual(['1', '2', '3', '4', '5']);
    expect(ds.info.format).toBe('crosstab-engine/3');
    for (const variable of [cover, brands]) {
      const targets = [...variable.values!.map((v) => valueExpression(variable.name, v.value)), `${variable.name}=NA`];
      const result = await ds.crosstab({ base: '*', targets, weight: null });
      expect(result.targets.map((t) => t.respondents)).toEqual([...variable.values!.map((v) => v.respondents), variable.missing]);
    }
  });
});

describe('misuse of multi-response expressions', () => {
  const refusal = async (expr: string) => {
    try {
      await ds.crosstab({ base: '*', targets: [expr] });
    } catch (error) {
      expect(error).toBeInstanceOf(CrosstabError);
      return error as CrosstabError;
    }
    throw new Error(`${expr} was accepted`);
  };
  it('all(...) on a single-coded variable names it and says what to write', async () => {
    const error = await refusal('sex=all(1,2)');
    expect(error.code).toBe(ErrorCode.invalidExpression);
    expect(error.message).toContain('sex holds one value per respondent');
    expect(error.details.hint).toContain('sex=1,2');
  });
  it('an unknown value of a multi-response variable', async () => {
    const error = await refusal('cover=all(2,9)');
    expect(error.code).toBe(ErrorCode.unknownValue);
    expect(error.message).toContain('cover=9');
  });
  it('ranges and NA inside all(...)', async () => {
    expect((await refusal('cover=all(1..2)')).details.hint).toContain('cover=all(v1,v2)');
    expect((await refusal('cover=none(NA)')).details.hint).toContain('cover=NA');
    expect((await refusal('cover=all(1),2')).code).toBe(ErrorCode.invalidExpression);
  });
});

describe('tables with multi-response axes', () => {
  const rowDummies = ['b1=1', 'b2=1', 'b3=1', 'b4=1', 'b5=1', 'b1=1 OR b2=1 OR b3=1 OR b4=1 OR b5=1', 'b1=NA'];
  const columnDummies = ['A=1', 'B=1', 'C=1', 'A=1 OR B=1 OR C=1', 'A=NA AND B=NA AND C=NA'];
  it('have a row per value, a net and a "No answer" entry, each cell equal to the dummy columns', async () => {
    const result = await ds.table({ base: '*', rows: [{ variable: 'brands' }], columns: [{ variable: 'cover' }] });
    expect(result.rows.map((entry) => entry.label)).toEqual(['1', '2', 'Brand three', '4', '5', 'Any (net)', 'No answer']);
    expect(result.columns.map((entry) => entry.label)).toEqual(['Any insurance', 'Private', 'Public', 'Any (net)', 'No answer']);
    const targets = rowDummies.flatMap((row) => columnDummies.map((column) => `(${row}) AND (${column})`));
    const truth = await ds.crosstab({ base: '*', targets });
    targets.forEach((target, at) => {
      expect({ target, weighted: result.weighted[at], respondents: result.respondents[at] }).toEqual({ target, weighted: truth.targets[at]!.weighted, respondents: truth.targets[at]!.respondents });
    });
    const margins = await ds.crosstab({ base: '*', targets: rowDummies });
    expect(result.rowTotals.map((cell) => cell.weighted)).toEqual(margins.targets.map((cell) => cell.weighted));
    const columnPct = tableStatistics(result, { stats: ['vpct'] }).columnPct!;
    // Percentages of the column's base respondents: the value rows of a column add up to more than 100%.
    expect(columnPct[0]).toBeCloseTo(truth.targets[0]!.weighted / result.columnTotals[0]!.weighted, 12);
  });
  it('say the Rao-Scott test is not defined, test columns, and refuse valid percentages naming the variable', async () => {
    const result = await ds.table({ base: '*', rows: [{ variable: 'brands' }], columns: [{ variable: 'sex' }] });
    const statistics = tableStatistics(result, { stats: ['chisq', 'sig'] });
    expect(statistics.raoScott).toEqual([]);
    expect(statistics.raoScottNotDefined).toEqual([{ group: 0, reason: 'overlapping-rows', rowVariable: 'brands' }]);
    expect(statistics.comparisons!.length).toBeGreaterThan(0);
    expect(() => tableStatistics(result, { stats: ['vpct'], percentBase: 'valid' })).toThrow(/multi-response variable brands/);
  });
});
