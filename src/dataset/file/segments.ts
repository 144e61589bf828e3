/**
 * A dataset file in segments (SEGMENTED_FORMAT_VERSION): each buffer of the dataset is put
 * together from its parts, the stored buffers of its segments (StoredSegments), into kernel
 * memory. The result is, byte for byte, the buffer a file of all the respondents stores
 * (`crosstab append --compact`): the same loops place the respondents (respondent-bits.ts).
 * Each part is checked against its own hash as it is read, unless the dataset is opened
 * with verify: false.
 */
import { bitsetWords } from '../../kernel/exports.js';
import type { Kernel } from '../../kernel/kernel.js';
import { checksumInKernel, StreamingChecksum } from '../../kernel/checksum.js';
import { paddedSize } from '../build/compile.js';
import { BufferKind, type StoredSegments } from '../format.js';
import type { BufferRow } from './dataset-checksum.js';
import { listBits, orBitsAt, readIndex, remapRanks, setBitsAfter, zeroFrom } from './respondent-bits.js';

/** A buffer of a dataset in segments: its parts, each a row of the file's buffer table. */
export interface SegmentedBuffer {
  parts: Array<{ segment: number; row: number; map?: Uint32Array }>;
}

/** A row of a file's buffer table with where its bytes are (lazy-buffers.ts's BufferEntry is one). */
interface BufferEntry extends Omit<BufferRow, 'kind'> {
  kind: BufferKind;
  ptr: number;
  fileOffset: number;
}

/** Where each segment's respondents start, and how many it holds. */
export interface SegmentRange {
  first: number;
  count: number;
}

const INDEX_KINDS: readonly number[] = [BufferKind.indexU8, BufferKind.indexU16, BufferKind.indexU32];
const CONTAINER_KINDS: readonly number[] = [BufferKind.dense, BufferKind.sparse];

export function indexWidthOf(kind: number): number {
  return kind === BufferKind.indexU8 ? 1 : kind === BufferKind.indexU16 ? 2 : 4;
}

/** Bytes per respondent of a buffer whose parts are laid one after the other (weights, input rows, index columns); 0 for the others. */
function slotBytes(kind: number): number {
  if (kind === BufferKind.weights) return 8;
  if (kind === BufferKind.inputRows) return 4;
  return INDEX_KINDS.includes(kind) ? indexWidthOf(kind) : 0;
}

/**
 * The buffers of a file in segments, checked against its buffer table (`stored`, the parts)
 * and `respondents`: returns, per buffer, its row as the dataset's buffer table would have it
 * (no hash: each part has its own) and its parts; or the problem, for a `corrupt_dataset` error.
 */
export function readSegments(segments: StoredSegments, stored: BufferEntry[], respondents: number, expectedBytes: (kind: BufferKind, count: number, words: number) => number | undefined): { ranges: SegmentRange[]; rows: Array<BufferEntry & SegmentedBuffer> } | string {
  if (!Array.isArray(segments.respondents) || !Array.isArray(segments.buffers) || !Array.isArray(segments.maps)) return 'its segment table is malformed';
  const ranges: SegmentRange[] = [];
  let first = 0;
  for (const count of segments.respondents) {
    if (!Number.isInteger(count) || count < 0) return 'its segment table has a malformed segment';
    ranges.push({ first, count });
    first += count;
  }
  if (first !== respondents) return `its segments hold ${first} respondents where its metadata says ${respondents}`;
  const words = bitsetWords(respondents);
  const maps = segments.maps.map((map) => Uint32Array.from(map));
  const rows: Array<BufferEntry & SegmentedBuffer> = [];
  for (const [index, buffer] of segments.buffers.entries()) {
    const bytes = expectedBytes(buffer.kind, buffer.count, words);
    if (bytes === undefined || !Array.isArray(buffer.parts)) return `its segment table has a malformed buffer ${index}`;
    let last = -1;
    let listed = 0;
    const parts: SegmentedBuffer['parts'] = [];
    for (const part of buffer.parts) {
      const entry = stored[part.row];
      const range = ranges[part.segment];
      const problem = `its segment table has a malformed part of buffer ${index} (${buffer.name})`;
      if (entry === undefined || range === undefined || part.segment <= last) return problem;
      last = part.segment;
      if (paddedSize(expectedBytes(entry.kind, entry.count, bitsetWords(range.count)) ?? -1) !== entry.stored) return problem;
      const fits = CONTAINER_KINDS.includes(buffer.kind) ? CONTAINER_KINDS.includes(entry.kind) : INDEX_KINDS.includes(buffer.kind) ? INDEX_KINDS.includes(entry.kind) : entry.kind === buffer.kind;
      if (!fits) return problem;
      if (buffer.kind === BufferKind.inputRows && entry.count !== range.count) return problem;
      if (CONTAINER_KINDS.includes(buffer.kind)) listed += entry.count;
      const map = part.map === undefined ? undefined : maps[part.map];
      if (part.map !== undefined && (map === undefined || !INDEX_KINDS.includes(buffer.kind))) return problem;
      // Ranks past the width of the index column would be cut: the map's, or the stored ones as they are.
      const widest = map === undefined ? 256 ** indexWidthOf(entry.kind) - 1 : Math.max(0, ...map);
      if (INDEX_KINDS.includes(buffer.kind) && widest > 256 ** indexWidthOf(buffer.kind) - 1) return problem;
      parts.push(map === undefined ? { segment: part.segment, row: part.row } : { segment: part.segment, row: part.row, map });
    }
    // Every segment has its part of a buffer with a slot per respondent, and the id column's.
    if ((slotBytes(buffer.kind) > 0 || buffer.kind === BufferKind.idTexts) && parts.length !== ranges.length) return `its segment table lacks a part of buffer ${index} (${buffer.name})`;
    if (CONTAINER_KINDS.includes(buffer.kind) && listed !== buffer.count) return `its segment table's parts of buffer ${index} (${buffer.name}) hold ${listed} respondents where it says ${buffer.count}`;
    rows.push({ name: buffer.name, kind: buffer.kind, count: buffer.count, stored: paddedSize(bytes), hash: '', ptr: 0, fileOffset: -1, parts });
  }
  return { ranges, rows };
}

/**
 * Puts buffers together from their parts. `readPart(row, into)` reads the stored bytes of
 * buffer table row `row` into `into`; `checkPart` says whether their hash is checked (it
 * throws `damaged(row)` where it fails).
 */
export class SegmentAssembler {
  private readonly checksums: StreamingChecksum;
  /** Parts read ahead into kernel memory (prefetch): stored row → where its bytes are. */
  private readonly prefetched = new Map<number, number>();
  /** The kernel memory of the parts read ahead that are not read into their buffer's place. */
  private scratch: { ptr: number; bytes: number } | undefined;
  /** The parts prefetch() read into their buffer's place: row → how many of their first bytes (a multiple of 32) the assembly leaves as they are. */
  private readonly inPlaceRows = new Map<number, number>();
  /**
   * Parts read ahead, assembled with their check left for later (assemble(..., 'later')): one
   * read into its place, its bytes that the assembly changes kept aside; one read elsewhere,
   * whether its hash matched.
   */
  private readonly later = new Map<number, { keep: number; tail: Uint8Array } | { matches: boolean }>();

  constructor(
    private readonly kernel: Kernel,
    private readonly ranges: SegmentRange[],
    private readonly stored: BufferEntry[],
    private readonly readPart: (row: number, into: Uint8Array) => void,
    private readonly damaged: (row: number) => Error,
    private readonly malformed: (what: string) => Error,
  ) {
    this.checksums = new StreamingChecksum(kernel);
  }

  /**
   * Writes `buffer` into `target` (its stored bytes, padding included), its parts checked when
   * `check`; `'later'`: the parts read ahead by prefetch() are checked by checkLater() (as a
   * compact file's buffer is checked at its first use), the others now. Returns whether
   * every part was checked.
   */
  assemble(buffer: BufferEntry & SegmentedBuffer, target: Uint8Array, check: boolean | 'later'): boolean {
    const { kind } = buffer;
    let checked = true;
    const part = (row: number, into?: Uint8Array): Uint8Array => {
      const { bytes, ahead } = this.fetch(row, into);
      if (check === 'later' && ahead === 'place') this.later.set(row, { keep: this.inPlaceRows.get(row)!, tail: bytes.slice(this.inPlaceRows.get(row)!) });
      else if (check === 'later' && ahead === 'region') this.later.set(row, { matches: this.hash(bytes) === this.stored[row]!.hash });
      else if (check !== false && this.hash(bytes) !== this.stored[row]!.hash) throw this.damaged(row);
      if (check === 'later' && ahead !== undefined) checked = false;
      return bytes;
    };
    const slot = slotBytes(kind);
    if (slot > 0) this.slots(buffer, target, slot, part);
    else if (kind === BufferKind.dense) this.bits(buffer, target, part);
    else if (kind === BufferKind.sparse) this.list(buffer, target, part);
    else this.texts(buffer, target, part);
    return checked;
  }

  /** Where the parts of `buffer` are in the file, in segment order: each one's offset and count (its segment's respondents, for a buffer with a slot per respondent). */
  partsInFile(buffer: SegmentedBuffer): Array<{ fileOffset: number; count: number }> {
    return buffer.parts.map((part) => ({ fileOffset: this.stored[part.row]!.fileOffset, count: this.stored[part.row]!.count }));
  }

  /**
   * Checks the parts of `buffer`, assembled at `ptr` in kernel memory with its check left for
   * later, each against its own hash (throws `damaged(row)` where one fails); false when a
   * part was not left for later (assemble it again, checked).
   */
  checkLater(buffer: BufferEntry & SegmentedBuffer, ptr: number): boolean {
    const kept = buffer.parts.map((part) => this.later.get(part.row));
    if (kept.some((entry) => entry === undefined)) return false;
    for (const [index, part] of buffer.parts.entries()) {
      const entry = kept[index]!;
      const matches = 'matches' in entry ? entry.matches : this.checksums.ofKernelThen(ptr, entry.keep, entry.tail) === this.stored[part.row]!.hash;
      if (!matches) throw this.damaged(part.row);
    }
    for (const part of buffer.parts) this.later.delete(part.row);
    return true;
  }

  /**
   * Reads ahead every part of `buffers` with `read` (stretches of the file into kernel
   * memory, read in parallel pieces): a part that is its buffer's first bytes as they are
   * (inPlace) straight into its buffer's place, the others into one region of kernel memory,
   * where they are hashed without a copy. assemble() then takes them from there; release()
   * gives the region back.
   */
  async prefetch(buffers: Array<BufferEntry & SegmentedBuffer>, read: (stretches: Array<{ fileOffset: number; into: Uint8Array }>) => Promise<void>): Promise<void> {
    this.release();
    const uses = new Map<number, number>();
    for (const buffer of buffers) for (const part of buffer.parts) uses.set(part.row, (uses.get(part.row) ?? 0) + 1);
    const places: Array<{ row: number; ptr: number }> = [];
    const elsewhere = new Set<number>();
    for (const buffer of buffers) {
      const head = this.inPlace(buffer);
      for (const part of buffer.parts) {
        // A part its table names twice (a malformed table) is read into the region: its buffer's assembly would change it.
        if (part === head && uses.get(part.row) === 1) {
          places.push({ row: part.row, ptr: buffer.ptr });
          this.inPlaceRows.set(part.row, this.untouched(buffer, head));
        } else elsewhere.add(part.row);
      }
    }
    const bytes = [...elsewhere].reduce((sum, row) => sum + this.stored[row]!.stored, 0);
    if (bytes > 0) this.scratch = { ptr: this.kernel.memory.alloc(bytes, false), bytes };
    let at = this.scratch?.ptr ?? 0;
    for (const row of elsewhere) {
      places.push({ row, ptr: at });
      at += this.stored[row]!.stored;
    }
    const memory = this.kernel.memory.memory.buffer;
    await read(places.map(({ row, ptr }) => ({ fileOffset: this.stored[row]!.fileOffset, into: new Uint8Array(memory, ptr, this.stored[row]!.stored) })));
    for (const { row, ptr } of places) this.prefetched.set(row, ptr);
  }

  /** Gives back the kernel memory of the parts read ahead (later assemblies read the file). */
  release(): void {
    if (this.scratch) this.kernel.memory.release(this.scratch.ptr, this.scratch.bytes);
    this.scratch = undefined;
    this.prefetched.clear();
    this.inPlaceRows.clear();
  }

  dispose(): void {
    this.release();
    this.later.clear();
    this.checksums.dispose();
  }

  /**
   * The stored bytes of part `row` (in `into` when given), and where they were: read ahead by
   * prefetch() into their buffer's place or into the region, else read now (undefined).
   */
  private fetch(row: number, into?: Uint8Array): { bytes: Uint8Array; ahead?: 'place' | 'region' } {
    const length = this.stored[row]!.stored;
    const at = this.prefetched.get(row);
    if (at === undefined) {
      const bytes = into ?? new Uint8Array(length);
      this.readPart(row, bytes);
      return { bytes };
    }
    const read = this.kernel.memory.bytes(at, length);
    const ahead = this.inPlaceRows.has(row) ? 'place' : 'region';
    // A part read into its buffer's place: the assembly changes its bytes after it, a later use reads the file.
    if (ahead === 'place') this.prefetched.delete(row);
    if (into === undefined) return { bytes: read, ahead };
    if (!(into.buffer instanceof SharedArrayBuffer && into.byteOffset === at)) into.set(read);
    return { bytes: into, ahead };
  }

  /** How many first bytes of `head` (read into its place) the assembly of `buffer` leaves as they are, rounded down to 32 (XXH64's stripe). */
  private untouched(buffer: BufferEntry & SegmentedBuffer, head: SegmentedBuffer['parts'][number]): number {
    const { count } = this.ranges[head.segment]!;
    const slot = slotBytes(buffer.kind);
    // Slots and a list: the next part's respondents start after the head's; a bitset: in the word of its last respondent.
    const before = slot > 0 ? count * slot : buffer.kind === BufferKind.dense ? Math.floor(count / 64) * 8 : this.stored[head.row]!.count * 4;
    return Math.floor(Math.min(before, this.stored[head.row]!.stored) / 32) * 32;
  }

  /**
   * The part of `buffer` whose stored bytes are its first bytes as they are (the first
   * segment's, when they need no mapping or widening): read straight into the buffer's place.
   */
  private inPlace(buffer: BufferEntry & SegmentedBuffer): SegmentedBuffer['parts'][number] | undefined {
    const head = buffer.parts[0];
    if (head === undefined || this.ranges[head.segment]!.first !== 0) return undefined;
    const stored = this.stored[head.row]!.kind;
    if (slotBytes(buffer.kind) > 0) return head.map === undefined && (!INDEX_KINDS.includes(buffer.kind) || stored === buffer.kind) ? head : undefined;
    if (buffer.kind === BufferKind.dense || buffer.kind === BufferKind.sparse) return stored === buffer.kind ? head : undefined;
    return undefined;
  }

  /**
   * XXH64 of a part's bytes: where it was read straight into its buffer's place in kernel
   * memory, hashed there; else streamed through the checksum's window (a typed array's copy
   * over shared memory goes element by element: it cost more than the hash itself).
   */
  private hash(bytes: Uint8Array): string {
    return bytes.buffer === this.kernel.memory.memory.buffer ? checksumInKernel(this.kernel, bytes.byteOffset, bytes.byteLength) : this.checksums.of(bytes);
  }

  /** How many segments the file has. */
  get segments(): number {
    return this.ranges.length;
  }

  private zero(bytes: Uint8Array, from: number): void {
    if (bytes.buffer instanceof SharedArrayBuffer) zeroFrom(this.kernel, bytes, from);
    else bytes.fill(0, from);
  }

  /** Weights, input rows, index columns: each part's respondents at their slots (ranks mapped and widened where their part says). */
  private slots(buffer: BufferEntry & SegmentedBuffer, target: Uint8Array, slot: number, part: (row: number, into?: Uint8Array) => Uint8Array): void {
    const head = this.inPlace(buffer);
    const rest = buffer.parts.filter((entry) => entry !== head);
    const asStored = (entry: { row: number; map?: Uint32Array }) => entry.map === undefined && (!INDEX_KINDS.includes(buffer.kind) || this.stored[entry.row]!.kind === buffer.kind);
    let from = 0;
    if (head !== undefined) {
      part(head.row, target.subarray(0, this.stored[head.row]!.stored));
      from = this.ranges[head.segment]!.count * slot;
    }
    this.zero(target, from);
    for (const entry of rest) {
      const { first, count } = this.ranges[entry.segment]!;
      const bytes = part(entry.row);
      if (asStored(entry)) target.set(bytes.subarray(0, count * slot), first * slot);
      else {
        const width = indexWidthOf(this.stored[entry.row]!.kind);
        const ranks = readIndex(target.subarray(first * slot, (first + count) * slot), slot);
        const identity = entry.map ?? Uint32Array.from({ length: 256 ** width }, (_, rank) => rank);
        remapRanks(ranks, readIndex(bytes, width), identity, count);
      }
    }
  }

  /** A dense container: each part's respondents set at their place (a bitset part shifted, a list part's respondents one by one). */
  private bits(buffer: BufferEntry & SegmentedBuffer, target: Uint8Array, part: (row: number, into?: Uint8Array) => Uint8Array): void {
    const head = this.inPlace(buffer);
    const rest = buffer.parts.filter((entry) => entry !== head);
    let from = 0;
    if (head !== undefined) {
      from = this.stored[head.row]!.stored;
      part(head.row, target.subarray(0, from));
    }
    this.zero(target, from);
    const bits = words32(target);
    for (const entry of rest) {
      const { first, count } = this.ranges[entry.segment]!;
      const stored = this.stored[entry.row]!;
      const bytes = part(entry.row);
      if (stored.kind === BufferKind.dense) orBitsAt(bits, words32(bytes).subarray(0, bitsetWords(count) * 2), first);
      else setBitsAfter(bits, words32(bytes).subarray(0, stored.count), first);
    }
  }

  /** A list container: each part's respondents after the parts before (a bitset part's listed). */
  private list(buffer: BufferEntry & SegmentedBuffer, target: Uint8Array, part: (row: number, into?: Uint8Array) => Uint8Array): void {
    const list = words32(target);
    let at = 0;
    for (const entry of buffer.parts) {
      const { first, count } = this.ranges[entry.segment]!;
      const stored = this.stored[entry.row]!;
      if (at + stored.count > buffer.count) throw this.malformed(`its parts of buffer ${buffer.name} hold more respondents than it`);
      if (first === 0 && at === 0 && stored.kind === BufferKind.sparse) part(entry.row, target.subarray(0, stored.stored));
      else {
        const bytes = part(entry.row);
        if (stored.kind === BufferKind.sparse) {
          const listed = words32(bytes).subarray(0, stored.count);
          for (let i = 0; i < listed.length; i++) list[at + i] = listed[i]! + first;
        } else if (listBits(list.subarray(0, buffer.count), at, words32(bytes).subarray(0, bitsetWords(count) * 2), first) !== at + stored.count) {
          throw this.malformed(`its part in row ${entry.row} of buffer ${buffer.name} holds another count of respondents than it says`);
        }
      }
      at += stored.count;
    }
    this.zero(target, at * 4);
  }

  /** The id column: the parts' offsets, each moved past the texts before it, then their texts. */
  private texts(buffer: BufferEntry & SegmentedBuffer, target: Uint8Array, part: (row: number, into?: Uint8Array) => Uint8Array): void {
    const rows = this.ranges.reduce((sum, range) => sum + range.count, 0);
    const offsets = new Uint32Array(rows + 1);
    const texts: Uint8Array[] = [];
    let textBytes = 0;
    for (const entry of buffer.parts) {
      const { first, count } = this.ranges[entry.segment]!;
      const bytes = part(entry.row);
      const own = new Uint32Array(bytes.buffer, bytes.byteOffset, count + 1);
      for (let row = 1; row <= count; row++) offsets[first + row] = textBytes + own[row]!;
      texts.push(bytes.subarray((count + 1) * 4, (count + 1) * 4 + own[count]!));
      textBytes += own[count]!;
    }
    if ((rows + 1) * 4 + textBytes !== buffer.count) throw this.malformed(`its parts of buffer ${buffer.name} hold ${(rows + 1) * 4 + textBytes} bytes where it says ${buffer.count}`);
    target.set(new Uint8Array(offsets.buffer), 0);
    let at = (rows + 1) * 4;
    for (const text of texts) {
      target.set(text, at);
      at += text.byteLength;
    }
    this.zero(target, at);
  }
}

function words32(bytes: Uint8Array): Uint32Array {
  return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >>> 2);
}
