// The column builder (assembly/columns.ts through column-buffers.js) against a plain
// reference written here from the file format's definitions, each buffer as the file stores
// it (zero-padded to 64 bytes) and its XXH64 as the dataset writer computes it (the query
// kernel's, another module): for random columns (ids of 1,
// 2 and 4 bytes, blanks, ranks of 1 and 2 bytes, any mix of bitsets and lists, a range
// index or not, respondent counts off the 16- and 64-respondent boundaries, respondents in
// a random order), every buffer byte for byte, several columns in a row on one kernel (its
// scratch area holds what the column before left).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bitsetWords } from '../src/kernel/exports.js';
import { columnsModule } from '../src/kernel/wasm-module.js';
import { ColumnKernel, columnMemory, scratchBytes, type ColumnBuffersTask, type StoredBuffer } from '../src/dataset/build/column-buffers.js';
import { paddedSize } from '../src/dataset/build/compile.js';
import { StreamingChecksum } from '../src/kernel/checksum.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { seededRandom as mulberry32 } from './support/large-dataset.js';

const checksums = new StreamingChecksum(mainThreadKernel());

/** The buffers as the format defines them, one respondent at a time. */
function reference(task: ColumnBuffersTask, respondentOf: Uint32Array): Uint8Array[] {
  const { ids, remap, distinct, counts, dense, atLeast, words, rows } = task;
  const rank = new Array<number>(words * 64).fill(0);
  for (let row = 0; row < rows; row++) rank[respondentOf[row]!] = remap[ids[row]!]!;
  const width = distinct <= 0xff ? 1 : distinct <= 0xffff ? 2 : 4;
  const index = new Uint8Array(words * 64 * width);
  const view = new DataView(index.buffer);
  rank.forEach((value, r) => (width === 1 ? view.setUint8(r, value) : width === 2 ? view.setUint16(r * 2, value, true) : view.setUint32(r * 4, value, true)));
  const bitset = (holds: (value: number) => boolean) => {
    const bits = new Uint8Array(words * 8);
    rank.forEach((value, r) => {
      if (holds(value)) bits[r >> 3]! |= 1 << (r & 7);
    });
    return bits;
  };
  const out = [index];
  if (dense !== undefined) {
    // Respondents by rank, in respondent order.
    const lists = Array.from({ length: distinct + 1 }, () => [] as number[]);
    rank.forEach((value, r) => lists[value]!.push(r));
    for (let k = 1; k <= distinct; k++) {
      if (dense[k - 1]) out.push(bitset((value) => value === k));
      else {
        expect(lists[k]!.length).toBe(counts[k - 1]);
        out.push(new Uint8Array(Uint32Array.from(lists[k]!).buffer));
      }
    }
  }
  if (atLeast) for (let k = 1; k <= distinct; k++) out.push(bitset((value) => value >= k));
  return out;
}

interface Column {
  idBytes: 1 | 2 | 4;
  distinct: number;
  /** Per row: 0 blank, else a dictionary id (1-based). */
  ids: number[];
  /** Dictionary id -> rank: a permutation of 1..distinct over the first `distinct` ids, more ids sharing ranks. */
  remap: number[];
  dense: boolean[];
  codes: boolean;
  atLeast: boolean;
}

function columnArb(rows: number): fc.Arbitrary<Column> {
  return fc
    .record({
      idBytes: fc.constantFrom<1 | 2 | 4>(1, 2, 4),
      // Past 255 the index column has two bytes a rank.
      distinct: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 240, max: 300 })),
      extraIds: fc.integer({ min: 0, max: 5 }),
      blanks: fc.double({ min: 0, max: 0.5, noNaN: true }),
      codes: fc.boolean(),
      atLeast: fc.boolean(),
      seed: fc.integer(),
    })
    .map(({ idBytes, distinct, extraIds, blanks, codes, atLeast, seed }) => {
      const random = mulberry32(seed);
      const width = idBytes === 1 ? 0xff : idBytes === 2 ? 0xffff : 0xffffffff;
      const dictionary = Math.min(distinct + extraIds, width);
      const ranks = shuffle(Array.from({ length: distinct }, (_, i) => i + 1), random);
      const remap = [0, ...Array.from({ length: dictionary }, (_, id) => (id < distinct ? ranks[id]! : 1 + Math.floor(random() * distinct)))];
      // Skewed values: a few common (bitsets) and many rare (lists).
      const ids = Array.from({ length: rows }, () => (random() < blanks ? 0 : 1 + Math.floor(random() ** 3 * dictionary)));
      const dense = Array.from({ length: distinct }, () => random() < 0.3);
      return { idBytes, distinct, ids, remap, dense, codes, atLeast: codes && atLeast };
    });
}

function task(column: Column, rows: number): ColumnBuffersTask {
  const ids = column.idBytes === 1 ? Uint8Array.from(column.ids) : column.idBytes === 2 ? Uint16Array.from(column.ids) : Uint32Array.from(column.ids);
  const remap = Uint32Array.from(column.remap);
  const counts = new Array<number>(column.distinct).fill(0);
  for (const id of column.ids) if (remap[id]! > 0) counts[remap[id]! - 1]!++;
  return { ids, remap, distinct: column.distinct, counts, dense: column.codes ? column.dense : undefined, atLeast: column.atLeast, words: bitsetWords(rows), rows };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** Builds `tasks` in a row on one kernel over a fresh memory holding the order. */
function build(tasks: ColumnBuffersTask[], respondentOf: Uint32Array, rows: number): StoredBuffer[][] {
  const memory = columnMemory(rows, Math.max(...tasks.map(scratchBytes)), 1);
  memory.respondentOf.set(respondentOf);
  const kernel = new ColumnKernel(columnsModule(), { memory: memory.memory, orderAt: memory.orderAt, scratchAt: memory.scratchAt[0]! });
  return tasks.map((one) => kernel.columnBuffers(one));
}

const expectSame = (made: StoredBuffer[], expected: Uint8Array[]) => {
  expect(made.length).toBe(expected.length);
  made.forEach(({ stored, hash }, i) => {
    const padded = new Uint8Array(paddedSize(expected[i]!.byteLength));
    padded.set(expected[i]!);
    expect(Buffer.from(stored).equals(Buffer.from(padded)), `buffer ${i}`).toBe(true);
    expect(hash, `hash of buffer ${i}`).toBe(checksums.of(padded));
  });
};

describe('column builder = the reference', () => {
  it('random columns, several in a row on one kernel', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 700 }).chain((rows) => fc.tuple(fc.constant(rows), fc.array(columnArb(rows), { minLength: 1, maxLength: 4 }), fc.integer())),
        ([rows, columns, seed]) => {
          const respondentOf = Uint32Array.from(shuffle(Array.from({ length: rows }, (_, i) => i), mulberry32(seed)));
          const tasks = columns.map((column) => task(column, rows));
          const made = build(tasks, respondentOf, rows);
          tasks.forEach((one, i) => expectSame(made[i]!, reference(one, respondentOf)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('every rank dense, every rank a list, and four-byte ranks (no containers)', () => {
    const rows = 70_001;
    const random = mulberry32(7);
    const respondentOf = Uint32Array.from(shuffle(Array.from({ length: rows }, (_, i) => i), random));
    const few: Column = { idBytes: 1, distinct: 3, ids: Array.from({ length: rows }, (_, row) => row % 4), remap: [0, 1, 2, 3], dense: [true, true, true], codes: true, atLeast: true };
    const lists: Column = { ...few, idBytes: 2, dense: [false, false, false] };
    const wide: Column = { idBytes: 4, distinct: 70_000, ids: Array.from({ length: rows }, (_, row) => row % 70_001), remap: [0, ...Array.from({ length: 70_000 }, (_, id) => 70_000 - id)], dense: [], codes: false, atLeast: false };
    const tasks = [few, lists, wide].map((column) => task(column, rows));
    const made = build(tasks, respondentOf, rows);
    tasks.forEach((one, i) => expectSame(made[i]!, reference(one, respondentOf)));
  });
});
