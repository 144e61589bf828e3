// The default large dataset of the inline and pool suites: 300,001 generated respondents,
// more than two 2,048-word (131,072-respondent) chunks of the kernel's cache-blocked tile
// loop, so every plan crosses chunk boundaries and ends on a partial chunk. Generated from a
// fixed seed on every run (global setup builds it once), never committed.
import { compileDataset } from '../../src/dataset/build/compile.js';
import { writeDataset } from '../../src/dataset/file/writer.js';
import { rawTable } from './make-dataset.js';
import type { ReferenceTable } from './reference-engine.js';

export const LARGE_ROWS = 300_001;

/** A seeded generator (mulberry32) so the data is the same on every run. */
export function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface LargeData {
  /**
   * big: numeric, > 5,000 values (no per-value containers), 5% blank; mid: numeric 0-299 (u16
   * index); cat: five letters; rare: 1-3 on 0.2% of respondents (sparse codes); zip: zero-padded
   * text.
   */
  columns: Record<'big' | 'mid' | 'cat' | 'rare' | 'zip', string[]>;
  /** Integer weights 0-2300: sums are exact in f64, whatever the order. */
  weights: number[];
  /** Fractional weights 0-3 (`w2`): sums agree to rounding only. */
  weights2: number[];
}

let cached: LargeData | undefined;

export function largeData(): LargeData {
  if (cached) return cached;
  const next = seededRandom(42);
  const columns: LargeData['columns'] = { big: [], mid: [], cat: [], rare: [], zip: [] };
  const weights: number[] = [];
  const weights2: number[] = [];
  for (let row = 0; row < LARGE_ROWS; row++) {
    columns.big.push(next() < 0.05 ? '' : String(Math.floor(next() * 7000)));
    columns.mid.push(String(Math.floor(next() * 300)));
    columns.cat.push('ABCDE'[Math.floor(next() * 5)]!);
    columns.rare.push(next() < 0.002 ? String(1 + Math.floor(next() * 3)) : '');
    columns.zip.push(String(Math.floor(next() * 40)).padStart(5, '0'));
    weights.push(Math.round(next() * 2300));
    weights2.push(next() * 3);
  }
  cached = { columns, weights, weights2 };
  return cached;
}

/** The data as the reference engine's table, under weight `w` or `w2`. */
export function largeReference(weight: 'w' | 'w2' = 'w'): ReferenceTable {
  const data = largeData();
  return { columns: data.columns, weights: weight === 'w' ? data.weights : data.weights2, numeric: new Set(['big', 'mid', 'rare']) };
}

/** Compiles the data (weights `w`, `w2`) and writes it to `out`. */
export async function writeLargeDataset(out: string): Promise<void> {
  const data = largeData();
  const raw = rawTable(data.columns, data.weights);
  raw.weights.push({ name: 'w2', values: Float64Array.from(data.weights2) });
  await writeDataset(compileDataset(raw, { survey: 'LARGE' }), out);
}
