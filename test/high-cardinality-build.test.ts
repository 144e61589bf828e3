// Builds of many high-cardinality numeric columns (replicate weights: thousands of distinct
// values each): the compiler's numeric order (the distinct floats sorted once, ranks found by
// search) and collision check (only where two texts share a float), and the writer, which
// gathers small buffers into large writes. Each against a statement of what it must give.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordBatchReader } from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';
import { compileDataset } from '../src/dataset/build/compile.js';
import { BufferKind } from '../src/dataset/format.js';
import { readCsv } from '../src/dataset/input/read-csv.js';
import { writeDataset } from '../src/dataset/file/writer.js';

/** A seeded generator of numbers in [0, 1). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const dir = mkdtempSync(join(tmpdir(), 'high-cardinality-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Texts of one float written several ways, and a few floats of their own. */
const spellings = [['0', '-0', '0.0', '0e5', '-0.000'], ['1', '1.0', '1e0', '10e-1', '1.00'], ['2.5', '2.50', '25e-1'], ['-7', '-7.0', '-70e-1'], ['100', '1e2', '100.0'], ['0.001', '1e-3'], ['3.25']];

/** A CSV of `rows` rows: a weight and the given columns of texts by row. */
function csvOf(name: string, columns: Record<string, string[]>, rows: number): string {
  const names = Object.keys(columns);
  const lines = [['w', ...names].join(',')];
  for (let row = 0; row < rows; row++) lines.push(['1', ...names.map((column) => columns[column]![row]!)].join(','));
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/**
 * What a numeric column's variable must hold: its distinct floats in ascending order, each
 * shown as the text the file first has for it, and each row's rank (1-based; 0 blank).
 */
function expected(texts: string[]): { values: string[]; ranks: number[] } {
  const firstText = new Map<number, string>();
  for (const text of texts) if (text !== '' && !firstText.has(Number(text) + 0)) firstText.set(Number(text) + 0, text);
  const floats = [...firstText.keys()].sort((a, b) => a - b);
  const rankOf = new Map(floats.map((float, index) => [float, index + 1]));
  return { values: floats.map((float) => firstText.get(float)!), ranks: texts.map((text) => (text === '' ? 0 : rankOf.get(Number(text) + 0)!)) };
}

describe('numeric columns of many values', () => {
  it('rank every row by its float and show each float as the text first seen, however the texts spell it', async () => {
    const random = mulberry32(20261129);
    const rows = 6000;
    const columns: Record<string, string[]> = {};
    for (let c = 0; c < 6; c++) {
      // Thousands of distinct values (17 digits, as R writes replicate weights), some rows a
      // spelling of a shared float, some blank.
      columns[`R${c}`] = Array.from({ length: rows }, () => {
        const pick = random();
        if (pick < 0.02) return '';
        if (pick < 0.2) {
          const spelled = spellings[Math.floor(random() * spellings.length)]!;
          return spelled[Math.floor(random() * spelled.length)]!;
        }
        return (random() * 160000 - 1000).toPrecision(17).replace(/0+$/, '').replace(/\.$/, '');
      });
    }
    const path = csvOf('spellings.csv', columns, rows);
    const compiled = compileDataset(await readCsv(path, { weights: ['w'] }), { survey: 'T' });
    for (const [name, texts] of Object.entries(columns)) {
      const variable = compiled.meta.variables.find((candidate) => candidate.name === name)!;
      const want = expected(texts);
      expect(variable.kind, name).toBe('numeric');
      expect(variable.values.length, name).toBeGreaterThan(4000);
      expect(variable.values, name).toEqual(want.values);
      expect([...compiled.inputRanks(name)], name).toEqual(want.ranks);
    }
  });

  it('are text when two of thousands of values are different numbers of one float, with a note naming both', async () => {
    const rows = 5000;
    const texts = Array.from({ length: rows }, (_, row) => `${row * 3 + 0.5}`);
    texts[1234] = '0.1';
    texts[4321] = '0.10000000000000001';
    // Same float, same number: no collision.
    const alike = Array.from({ length: rows }, (_, row) => (row === 77 ? '12.50' : `${row / 2}`));
    const path = csvOf('collision.csv', { C: texts, D: alike }, rows);
    const table = await readCsv(path, { weights: ['w'] });
    const compiled = compileDataset(table, { survey: 'T' });
    const byName = new Map(compiled.meta.variables.map((variable) => [variable.name, variable]));
    expect(byName.get('C')?.kind).toBe('text');
    expect(table.notes?.some((note) => note.includes('column C') && note.includes('0.1 and 0.10000000000000001'))).toBe(true);
    expect(byName.get('D')?.kind).toBe('numeric');
    expect(byName.get('D')?.values).toEqual(expected(alike).values);
  });
});

describe('the dataset writer', () => {
  it('writes buffers of every size, small ones gathered, each stored byte for byte with its padding', async () => {
    // Sizes around the writer's 1 MiB blocks: many small buffers, one that ends a block,
    // ones larger than a block (written past the gathered bytes), odd sizes needing padding.
    // Around its 8 MiB staging buffers too (past the page cache: written in 4096-byte blocks
    // where the file system allows, the last partial block through it): one of exactly 8 MiB,
    // ones larger, so the file's size is no multiple of 4096.
    const sizes = [5, 64, 1 << 20, 3 * (1 << 20) + 7, 1, 1048576 - 37, ...Array.from({ length: 6000 }, (_, i) => 1 + ((i * 37) % 300)), 2 << 20, 13, 8 << 20, 17 * (1 << 20) + 4099, 3];
    const buffers = sizes.map((size, index) => {
      const bytes = new Uint8Array(size);
      for (let i = 0; i < size; i++) bytes[i] = (i * 31 + index * 7 + (i >>> 8)) & 0xff;
      return bytes;
    });
    const specs = buffers.map((bytes, i) => ({ name: `b${i}`, kind: BufferKind.sparse, count: i, bytes: bytes.byteLength }));
    const out = join(dir, 'sizes.arrow');
    await writeDataset({ meta: { format: 'test' }, specs, data: () => buffers }, out);
    const reader = RecordBatchReader.from(readFileSync(out));
    // Past the page cache (as an append writes), the same bytes.
    const direct = join(dir, 'sizes-direct.arrow');
    await writeDataset({ meta: { format: 'test' }, specs, data: () => buffers }, direct, undefined, { direct: true });
    expect(readFileSync(direct).equals(readFileSync(out))).toBe(true);
    let at = 0;
    for (const batch of reader) {
      const data = batch.getChild('data')!;
      const names = batch.getChild('name')!;
      const counts = batch.getChild('count')!;
      for (let row = 0; row < batch.numRows; row++, at++) {
        const stored = data.get(row) as Uint8Array;
        const padded = new Uint8Array(Math.ceil(sizes[at]! / 64) * 64);
        padded.set(buffers[at]!);
        expect(names.get(row)).toBe(`b${at}`);
        expect(counts.get(row)).toBe(at);
        expect(Buffer.from(stored).equals(Buffer.from(padded)), `buffer ${at} of ${sizes[at]} bytes`).toBe(true);
      }
    }
    expect(at).toBe(sizes.length);
  });
});
