import { describe, expect, it } from 'vitest';
import { formatNumber, formatNumberUpTo } from '../src/text/number-text.js';
import { seededRandom } from './support/large-dataset.js';

/** What the CLI printed before formatNumber stopped using Intl: its text must not change. */
const formats = Array.from({ length: 9 }, (_, digits) => new Intl.NumberFormat('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
const intl = (value: number, digits: number) => formats[digits]!.format(value);

describe('formatNumber (CLI figures without Intl)', () => {
  it('gives the text of toLocaleString("en-US") at the edges: ties, carries, grouping, tiny and huge values, negative zero', () => {
    const values = [
      0, -0, 1, -1, 0.5, 1.5, 2.5, -2.5, 0.05, 0.15, 0.25, 1.005, 1.045, 2.675, 0.045, 9.5, 99.5, 999.5, 999.96, 9999.95, 99999.95, -999.96,
      999, 1000, 9999, 10000, 123456, 999999, 1000000, 1234567.891, -1234567.891, 32_000_000.05, 2 ** 53, 2 ** 53 + 2, 1e20, 1e21, 1.5e22, Number.MAX_VALUE,
      5e-7, 4.9e-7, 1e-7, -1e-7, 1.23e-10, Number.MIN_VALUE, -0.01, -0.04, -0.05, 0.1 + 0.2, 1 / 3, 2 / 3, 123.456, 73_914.4875, 3.98,
    ];
    for (const value of values) for (let digits = 0; digits <= 8; digits++) expect([value, digits, formatNumber(value, digits)]).toEqual([value, digits, intl(value, digits)]);
    expect(formatNumber(1234.56)).toBe('1,234.6');
  });

  it('gives the text of toLocaleString("en-US") for 200,000 seeded values of every size', () => {
    const random = seededRandom(41);
    for (let i = 0; i < 200_000; i++) {
      const magnitude = 10 ** Math.floor(random() * 24 - 9);
      const raw = (random() - 0.3) * magnitude;
      // Half of them on a grid of decimals, where ties and carries are.
      const value = i % 2 === 0 ? raw : Math.round(raw * 1000) / 1000 + (i % 4 === 1 ? 0.0005 : 0);
      const digits = i % 5;
      const got = formatNumber(value, digits);
      if (got !== intl(value, digits)) expect([value, digits, got]).toEqual([value, digits, intl(value, digits)]);
    }
  });

  it('formatNumberUpTo gives the text of toLocaleString("en-US", { maximumFractionDigits }); NaN and infinities as en-US writes them', () => {
    const upTo = Array.from({ length: 9 }, (_, digits) => new Intl.NumberFormat('en-US', { maximumFractionDigits: digits }));
    const random = seededRandom(43);
    for (let i = 0; i < 50_000; i++) {
      const value = (random() - 0.3) * 10 ** Math.floor(random() * 16 - 6);
      const digits = i % 9;
      const got = formatNumberUpTo(value, digits);
      if (got !== upTo[digits]!.format(value)) expect([value, digits, got]).toEqual([value, digits, upTo[digits]!.format(value)]);
    }
    for (const value of [0, -0, 100, 1000.5, -0.0000001, 1234567.1000004]) expect(formatNumberUpTo(value, 6)).toBe(upTo[6]!.format(value));
    for (const value of [NaN, Infinity, -Infinity]) expect(formatNumber(value, 1)).toBe(intl(value, 1));
  });
});
