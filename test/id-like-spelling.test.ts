// Whether a column of numbers is skipped as id-like (one distinct integer per row) depends on
// its values, not on how they are spelled: the same ids written 12 or 12.0 or 1.2e1 in a CSV,
// or stored as Parquet DOUBLE or Arrow Float64, build the same dataset; and two spellings of
// one number (7 and 007, 12 and 12.0) are that number twice, as a typed file holds it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Float64, Table, Utf8, vectorFromArray, tableToIPC } from 'apache-arrow';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset } from '../src/index.js';
// @ts-expect-error: a plain-JavaScript bench helper without types
import { buildFingerprint } from '../bench/lib/build-fingerprint.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-id-spelling-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Skipped as id-like integers from this many rows. */
const ROWS = 1000;
const codes = Array.from({ length: ROWS }, (_, r) => ['a', 'b', 'c'][r % 3]!);
const weights = Array.from({ length: ROWS }, (_, r) => 1 + (r % 7) / 4);
const options = { weights: ['w'], survey: 'T', rangeIndex: 'none' as const };

async function build(name: string, write: (path: string) => void): Promise<{ fingerprint: string; variables: string[]; skipped: string[] }> {
  const input = join(dir, name);
  write(input);
  const out = join(dir, `${name}.arrow`);
  await buildDataset(input, { ...options, out });
  const ds = await openDataset(out);
  try {
    return { fingerprint: await buildFingerprint(out), variables: ds.info.variables.map((variable) => variable.name), skipped: (ds.info.skipped ?? []).map((entry) => `${entry.column}: ${entry.reason}`) };
  } finally {
    await ds.close();
  }
}

const csv = (ids: string[]) => (path: string) => writeFileSync(path, `id,code,w\n${ids.map((id, r) => `${id},${codes[r]},${weights[r]}`).join('\n')}\n`);
const parquet = (ids: number[]) => (path: string) =>
  writeFileSync(path, Buffer.from(parquetWriteBuffer({ columnData: [{ name: 'id', type: 'DOUBLE', data: ids }, { name: 'code', type: 'STRING', data: codes }, { name: 'w', type: 'DOUBLE', data: weights }] })));
const arrow = (ids: number[]) => (path: string) =>
  writeFileSync(path, tableToIPC(new Table({ id: vectorFromArray(ids, new Float64()), code: vectorFromArray(codes, new Utf8()), w: vectorFromArray(weights, new Float64()) }), 'file'));

describe('id-like integers are told by their values', () => {
  it('the same distinct integers spelled 12, 12.0 or 1.2e1, or stored as doubles, are skipped alike', async () => {
    const ids = Array.from({ length: ROWS }, (_, r) => r * 3 + 10);
    const plain = await build('plain.csv', csv(ids.map(String)));
    expect(plain.skipped).toEqual([`id: id-like: ${ROWS} distinct integers, one per row`]);
    for (const [name, write] of [
      ['point-zero.csv', csv(ids.map((id) => `${id}.0`))],
      ['mixed.csv', csv(ids.map((id, r) => [`${id}.0`, id.toExponential(), `${id}`, `${id}.00`][r % 4]!))],
      ['doubles.parquet', parquet(ids)],
      ['doubles.arrow', arrow(ids)],
    ] as const) {
      const other = await build(name, write);
      expect(other.skipped, name).toEqual(plain.skipped);
      expect(other.fingerprint, name).toBe(plain.fingerprint);
    }
  }, 120_000);

  it('two spellings of one number (7 and 007, 12 and 12.0) are one value twice: a variable, as a typed file holds it', async () => {
    const ids = Array.from({ length: ROWS }, (_, r) => (r === ROWS - 1 ? 10 : r * 3 + 10));
    const typed = await build('repeat.parquet', parquet(ids));
    expect(typed.variables).toContain('id');
    expect(typed.skipped).toEqual([]);
    for (const last of ['010', '10.0', '1e1']) {
      const spelled = await build(`repeat-${last}.csv`, csv(ids.map((id, r) => (r === ROWS - 1 ? last : String(id)))));
      expect(spelled.skipped, last).toEqual([]);
      expect(spelled.variables, last).toContain('id');
    }
  }, 120_000);
});
