// A variable's buffers in the dataset file: its index column (the rank of each stored
// respondent's value), one container per value (a dense bitset or a sorted list of
// respondent numbers) and its range index (per value, a bitset of the respondents of that
// value or more). Made by the column builder compiled to WebAssembly (assembly/columns.ts,
// build/columns.wasm) on the main thread (compile.ts, small builds) or in a build worker
// (compile-worker.js); plain JavaScript so that the worker runs the same file from src/
// (tests) and from the bundle (dist/). Types: column-buffers.d.ts.

/** Version of the column builder's exports this code calls (columnsAbi() in assembly/columns.ts). */
export const COLUMNS_ABI = 2;

const PAGE = 65536;
/** The module's own data (memoryBase()) fits below this; the respondents' order starts there. */
const RESERVED = PAGE;
const MAX_PAGES = 65536;
const align = (bytes) => Math.ceil(bytes / 64) * 64;
/** XXH64 as the file writes it: 16 lowercase hex digits. */
const hex = (hash) => BigInt.asUintN(64, hash).toString(16).padStart(16, '0');

/**
 * The memory the column builders of one build share: the respondents' order (`respondentOf`,
 * written there by the weight order and read by every column's scatter, never copied), then
 * a scratch area of `scratchBytes` per thread (see scratchBytes). Sized once: nothing grows it.
 */
export function columnMemory(rows, scratchBytes, threads) {
  const scratch = align(scratchBytes);
  const orderAt = RESERVED;
  const firstScratch = orderAt + align(rows * 4);
  const pages = Math.ceil((firstScratch + scratch * threads) / PAGE);
  if (pages > MAX_PAGES) throw new Error(`the column builder needs ${pages} pages of memory, more than the ${MAX_PAGES} of a WebAssembly memory`);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  return {
    memory,
    respondentOf: new Uint32Array(memory.buffer, orderAt, rows),
    orderAt,
    scratchAt: Array.from({ length: threads }, (_, i) => firstScratch + i * scratch),
  };
}

/** Where a column's inputs and outputs go in its thread's scratch area, and the file's layout. */
function layout({ ids, remap, distinct, counts, dense, atLeast, words }) {
  const rankBytes = distinct <= 0xff ? 1 : distinct <= 0xffff ? 2 : 4;
  const length = words * 64;
  const bitsetBytes = words * 8;
  const codes = dense ? counts.length : 0;
  // The buffers in file order as the file stores them (each zero-padded to 64 bytes): the
  // index column, the containers, the range index.
  const offsets = [0];
  const sizes = [length * rankBytes];
  let end = align(length * rankBytes);
  for (let rank = 0; rank < codes; rank++) {
    const bytes = dense[rank] ? bitsetBytes : counts[rank] * 4;
    offsets.push(end);
    sizes.push(bytes);
    end += align(bytes);
  }
  const containersEnd = end;
  if (atLeast) {
    for (let rank = 0; rank < distinct; rank++) {
      offsets.push(end + rank * align(bitsetBytes));
      sizes.push(bitsetBytes);
    }
    end += distinct * align(bitsetBytes);
  }
  // The scratch area: the hash state, ids, remap, the tables of codeContainers, the index and
  // containers as in the file, and the range index's one bitset (see rangeStep).
  const stateAt = 0;
  const idsAt = 64;
  const remapAt = idsAt + align(length * ids.BYTES_PER_ELEMENT);
  const denseRanksAt = remapAt + align(remap.length * 4);
  const denseAtAt = denseRanksAt + align(codes * 4);
  const listAtAt = denseAtAt + align(codes * 4);
  const out = listAtAt + align((codes + 1) * 4);
  const bitsAt = out + containersEnd;
  const scratch = bitsAt + (atLeast ? align(bitsetBytes) : 0);
  return { rankBytes, length, bitsetBytes, codes, offsets, sizes, end, containersEnd, stateAt, idsAt, remapAt, denseRanksAt, denseAtAt, listAtAt, out, bitsAt, scratch };
}

/** Bytes of scratch area a column's buffers take (its inputs as in a ColumnBuffersTask). */
export function scratchBytes(task) {
  return layout(task).scratch;
}

/**
 * The column builder of one thread: build/columns.wasm over the build's shared memory
 * (columnMemory), working in its own scratch area.
 */
export class ColumnKernel {
  constructor(module, { memory, orderAt, scratchAt }) {
    this.wasm = new WebAssembly.Instance(module, {
      env: {
        memory,
        abort() {
          throw new Error('column builder aborted');
        },
      },
    }).exports;
    const found = typeof this.wasm.columnsAbi === 'function' ? this.wasm.columnsAbi() : 0;
    if (found !== COLUMNS_ABI) {
      throw new Error(`build/columns.wasm has column builder ABI ${found}, this code expects ${COLUMNS_ABI}; the bundle and build/columns.wasm come from different builds: run \`npm run build\``);
    }
    if (this.wasm.memoryBase() > RESERVED) throw new Error('build/columns.wasm has more data than the column builder reserves for it');
    this.memory = memory;
    this.orderAt = orderAt;
    this.scratchAt = scratchAt;
  }

  /**
   * The index column and, if `dense` is given, the code containers, and if `atLeast` the
   * range index, in file order, as the file stores them (zero-padded) with their XXH64:
   * views of one ArrayBuffer of their own (the one allocation per column, transferable
   * whole). The scratch area must hold scratchBytes(task).
   */
  columnBuffers(task) {
    const { ids, remap, distinct, counts, dense, atLeast, rows } = task;
    const at = layout(task);
    const { rankBytes, length, bitsetBytes, codes, offsets, sizes, end, containersEnd } = at;
    if (atLeast && codes === 0) throw new Error('a range index needs the code containers');
    if (codes > 0 && rankBytes === 4) throw new Error('code containers need ranks of at most 2 bytes');
    const base = this.scratchAt;
    const [stateAt, idsAt, remapAt, denseRanksAt, denseAtAt, listAtAt, out, bitsAt] = [at.stateAt, at.idsAt, at.remapAt, at.denseRanksAt, at.denseAtAt, at.listAtAt, at.out, at.bitsAt].map((offset) => base + offset);
    const memory = this.memory.buffer;

    new ids.constructor(memory, idsAt, rows).set(ids.length === rows ? ids : ids.subarray(0, rows));
    new Uint32Array(memory, remapAt, remap.length).set(remap);
    // The index column past the last respondent is zero (no value).
    new Uint8Array(memory, out + rows * rankBytes, (length - rows) * rankBytes).fill(0);
    this.wasm.scatterRanks(idsAt, ids.BYTES_PER_ELEMENT, remapAt, this.orderAt, out, rankBytes, rows);

    /** Per rank (rank - 1): its container's address, and its list's length or -1 for a bitset. */
    const codeAt = new Uint32Array(codes);
    const listCount = new Int32Array(codes);
    if (codes > 0) {
      const denseRanks = new Uint32Array(memory, denseRanksAt, codes);
      const denseAt = new Uint32Array(memory, denseAtAt, codes);
      const listAt = new Uint32Array(memory, listAtAt, codes + 1).fill(0);
      let denseCount = 0;
      let lists = 0;
      for (let rank = 0; rank < codes; rank++) {
        const container = out + offsets[rank + 1];
        codeAt[rank] = container;
        if (dense[rank]) {
          denseRanks[denseCount] = rank + 1;
          denseAt[denseCount++] = container;
          listCount[rank] = -1;
        } else {
          listAt[rank + 1] = container;
          listCount[rank] = counts[rank];
          lists++;
        }
      }
      this.wasm.codeContainers(out, rankBytes, length, denseRanksAt, denseAtAt, denseCount, listAtAt, lists > 0 ? 1 : 0);
    }

    // Hashed where they are, padding zeroed (the scratch holds the column before's bytes).
    const bytes = new ArrayBuffer(end);
    const hashes = new Array(offsets.length);
    const containers = codes > 0 ? codes + 1 : 1;
    for (let i = 0; i < containers; i++) {
      const padded = align(sizes[i]);
      new Uint8Array(memory, out + offsets[i] + sizes[i], padded - sizes[i]).fill(0);
      hashes[i] = hex(this.wasm.xxh64(stateAt, out + offsets[i], padded));
    }
    const file = new Uint8Array(bytes);
    file.set(new Uint8Array(memory, out, containersEnd));
    if (atLeast) {
      const padded = align(bitsetBytes);
      const bits = new Uint8Array(memory, bitsAt, padded).fill(0);
      for (let rank = distinct - 1; rank >= 0; rank--) {
        this.wasm.rangeStep(bitsAt, bitsetBytes, codeAt[rank], listCount[rank]);
        hashes[containers + rank] = hex(this.wasm.xxh64(stateAt, bitsAt, padded));
        file.set(bits, offsets[containers + rank]);
      }
    }
    return offsets.map((offset, i) => ({ stored: new Uint8Array(bytes, offset, align(sizes[i])), hash: hashes[i] }));
  }
}
