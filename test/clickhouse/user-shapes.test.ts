// The shapes users write, from a seeded generator, over a small dataset made here (odd
// variable names, values with exponents and leading zeros, blanks, weights of 0): pushed to
// two ClickHouse shards, every figure equals the WASM engine's (counts exactly, sums to 1e-9)
// or both engines refuse the expression. Covers what the random property test does not
// write: quoted and keyword names, open ranges, NOT of blanks, long ORs (95 terms, 90 values; 220 values refused by both), and
// tables with "No answer" entries (missing: 'show') on both axes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tablePlans } from '../../src/facade/clickhouse-engine.js';
import { openDataset, type Dataset } from '../../src/index.js';
import { nameText, valueText } from '../../src/text/expression-text.js';
import { skipClickHouse, startCluster, type ClickHouseCluster } from '../support/clickhouse-server.js';
import { writeMadeDataset } from '../support/make-dataset.js';
import { expectSameCrosstab, expectSameTable, pushToCluster } from './support.js';

/** A small seeded generator (mulberry32): the same expressions on every run. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ROWS = 240;
const random = generator(20261130);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

// Values as users' files hold them; '' is a blank.
const pools: Record<string, string[]> = {
  'two words': ['007', '7', '1e3', '-0', '0', '12', ''],
  'with "quote"': ['a', 'b b', 'NA?', 'Ünï', ''],
  'back`tick': ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', ''],
  AND: ['x', 'y', ''],
  '2024': ['1.5', '2.25', '-3', '1e-2', ''],
  ünïcode: Array.from({ length: 230 }, (_, i) => String(i + 1)).concat(['']),
};
const columns: Record<string, string[]> = Object.fromEntries(Object.entries(pools).map(([name, pool]) => [name, Array.from({ length: ROWS }, () => pick(pool))]));
// Weights of 0 among them, and a wide range.
const weights = Array.from({ length: ROWS }, (_, i) => (i % 17 === 0 ? 0 : i % 5 === 0 ? 1e-3 * (1 + random()) : 1 + 999 * random()));

/** The values a variable has (not blank). */
const present = (name: string) => [...new Set(columns[name]!.filter((value) => value !== ''))];

function atom(): string {
  const name = pick(Object.keys(pools));
  const values = present(name);
  // "two words" holds 007 beside 7: a text variable, whose ranges both engines refuse.
  const numeric = values.every((value) => Number.isFinite(Number(value))) && (name !== 'two words' || random() < 0.1);
  const variable = nameText(name);
  switch (Math.floor(random() * 6)) {
    case 0:
      return `${variable}=NA`;
    case 1:
      return `NOT ${variable}=NA`;
    case 2: {
      if (!numeric) return `${variable}=${values.slice(0, 2).map(valueText).join(',')}`;
      const sorted = values.map(Number).sort((a, b) => a - b);
      const lo = pick(sorted);
      const form = Math.floor(random() * 3);
      return form === 0 ? `${variable}=${lo}..` : form === 1 ? `${variable}=..${lo}` : `${variable}=${lo}..${pick(sorted.filter((v) => v >= lo))}`;
    }
    case 3:
      return `${variable}=${Array.from({ length: 1 + Math.floor(random() * 3) }, () => valueText(pick(values))).join(',')}`;
    default:
      return `${variable}=${valueText(pick(values))}`;
  }
}

function expression(depth = 0): string {
  const roll = random();
  if (depth >= 2 || roll < 0.35) return atom();
  if (roll < 0.5) return `NOT (${expression(depth + 1)})`;
  const items = Array.from({ length: 2 + Math.floor(random() * 3) }, () => expression(depth + 1));
  return `(${items.join(roll < 0.75 ? ' AND ' : ' OR ')})`;
}

/** One value list of `count` values (repeats included) OR a few terms: past 100 values, both engines refuse it (an expression takes 100 terms). */
function valueList(count: number): string {
  const list = Array.from({ length: count }, () => valueText(pick(present('ünïcode'))));
  return `ünïcode=${list.join(',')} OR ${orChain(3)}`;
}

/** An OR of `count` single values, of one variable or several. */
function orChain(count: number): string {
  const names = ['ünïcode', 'back`tick', 'two words'];
  return Array.from({ length: count }, () => {
    const name = random() < 0.7 ? 'ünïcode' : pick(names);
    return `${nameText(name)}=${valueText(pick(present(name)))}`;
  }).join(' OR ');
}

describe.skipIf(skipClickHouse)('ClickHouse vs the WASM engine on the shapes users write', () => {
  const defaultLimit = tablePlans.cellAggregatesMax;
  let cluster: ClickHouseCluster;
  let local: Dataset;
  let remote: Dataset;
  beforeAll(async () => {
    cluster = await startCluster(2);
    const path = await writeMadeDataset(columns, weights);
    local = await openDataset(path);
    remote = await openDataset(await pushToCluster(cluster, path));
  }, 120_000);
  afterAll(() => {
    tablePlans.cellAggregatesMax = defaultLimit;
    local?.close();
    remote?.close();
    cluster?.stop();
  });

  /** Both answer the same figures, or both refuse with the same code. */
  async function same<T>(ask: (dataset: Dataset) => Promise<T>, compare: (remote: T, local: T) => void, what: string): Promise<'answered' | 'refused'> {
    const [a, b] = await Promise.allSettled([ask(remote), ask(local)]);
    if (b.status === 'rejected') {
      expect(a.status, `${what}: local refused (${String((b.reason as Error).message)}), ClickHouse did not`).toBe('rejected');
      expect((a as PromiseRejectedResult).reason.code, what).toBe((b.reason as { code: string }).code);
      return 'refused';
    }
    expect(a.status, `${what}: ClickHouse refused: ${a.status === 'rejected' ? String((a.reason as Error).message) : ''}`).toBe('fulfilled');
    compare((a as PromiseFulfilledResult<T>).value, b.value);
    return 'answered';
  }

  it('crosstabs: every base and target equal, weighted and not', async () => {
    const answered = { answered: 0, refused: 0 };
    for (let i = 0; i < 60; i++) {
      const base = i % 4 === 0 ? '*' : expression();
      const targets = [expression(), expression(), i % 10 === 0 ? valueList(i % 20 === 0 ? 220 : 90) : i % 10 === 5 ? orChain(95) : atom()];
      for (const weight of [undefined, null] as const) {
        const query = { base, targets, ...(weight === null ? { weight } : {}) };
        answered[await same((dataset) => dataset.crosstab(query), expectSameCrosstab, `base ${base} targets ${targets.join(' | ').slice(0, 300)}`)]++;
      }
    }
    expect(answered.answered).toBeGreaterThan(100);
    expect(answered.refused).toBeGreaterThan(0);
  }, 120_000);

  it('tables with "No answer" entries, expression entries and long OR chains on both axes: every cell and margin equal', async () => {
    const variables = Object.keys(pools).filter((name) => name !== 'ünïcode');
    for (let i = 0; i < 16; i++) {
      const axis = () => [
        { variable: pick(variables) },
        ...(random() < 0.5 ? [{ expr: expression(), label: 'e' }] : []),
        ...(random() < 0.3 ? [{ expr: random() < 0.5 ? valueList(90) : orChain(90), label: 'chain' }] : []),
      ];
      const table = { base: i % 3 === 0 ? '*' : expression(), rows: axis(), columns: axis(), missing: i % 2 === 0 ? 'show' : 'hide' } as const;
      for (const limit of [0, defaultLimit]) {
        tablePlans.cellAggregatesMax = limit; // 0: the arrayJoin GROUP BY plan; default: countIf per cell for small tables
        await same((dataset) => dataset.table(table), expectSameTable, JSON.stringify(table).slice(0, 400));
      }
    }
  }, 120_000);
});
