import { readSync } from 'node:fs';

const MAGIC = 'ARROW1';

/**
 * A field of an Arrow schema, as much as a dataset reader checks: its name and type id
 * (the Arrow format's Type enum: 2 Int, 4 Binary, 5 Utf8), and for Int its width and sign.
 */
export interface ArrowField {
  name: string;
  typeId: number;
  bitWidth?: number;
  isSigned?: boolean;
}

/** The schema of an Arrow IPC file: its fields and custom metadata. */
export interface ArrowSchema {
  fields: ArrowField[];
  metadata: Map<string, string>;
}

/** Where one record batch of an Arrow IPC file lies: its rows and its buffers' file ranges. */
export interface BatchLocation {
  rows: number;
  /** Per field of the schema, its buffers (validity first) as absolute file ranges. */
  fields: Array<Array<{ offset: number; length: number }>>;
}

/** Why an Arrow IPC file cannot be read; the caller words it for its own file kind. */
export class ArrowFileProblem extends Error {}

/**
 * Reads the structure of an Arrow IPC file without its bodies: the footer (schema and
 * metadata) and each record batch's message, so that a reader can then fetch exactly the
 * bytes it needs, where it needs them. Only flat (non-nested) columns without nulls or
 * compression are described.
 *
 * The flatbuffers are read here, by hand, rather than with apache-arrow: importing that
 * library costs a cold `crosstab query` more time than opening the dataset, and
 * a dataset's footer uses a handful of tables (Footer, Schema, Field, Int, KeyValue,
 * Message, RecordBatch) of the Arrow format's File.fbs, Schema.fbs and Message.fbs.
 */
export function readArrowStructure(fd: number, size: number): { schema: ArrowSchema; batches: BatchLocation[]; blocks: ArrowBlock[] } {
  if (size < 12 || latin1(readAt(fd, 0, 6)) !== MAGIC) throw new ArrowFileProblem('signature');
  const tail = readAt(fd, size - 10, 10);
  if (latin1(tail.subarray(4)) !== MAGIC) throw new ArrowFileProblem('truncated');
  const footerLength = new DataView(tail.buffer, tail.byteOffset).getInt32(0, true);
  if (footerLength <= 0 || footerLength > size - 18) throw new ArrowFileProblem('the footer length is out of range');
  let footer: { schema: ArrowSchema; blocks: Array<{ offset: number; metaDataLength: number; bodyLength: number }> };
  try {
    footer = decodeFooter(new FlatBuffer(readAt(fd, size - 10 - footerLength, footerLength)));
  } catch (error) {
    throw new ArrowFileProblem(`the footer cannot be decoded (${(error as Error).message})`);
  }
  const { schema } = footer;
  const batches: BatchLocation[] = [];
  for (const block of footer.blocks) {
    if (block.offset < 8 || block.metaDataLength < 8 || block.offset + block.metaDataLength + block.bodyLength > size) {
      throw new ArrowFileProblem('a record batch lies outside the file');
    }
    const prefix = readAt(fd, block.offset, block.metaDataLength);
    const view = new DataView(prefix.buffer, prefix.byteOffset);
    const continued = view.getInt32(0, true) === -1;
    const length = view.getInt32(continued ? 4 : 0, true);
    const start = continued ? 8 : 4;
    if (length <= 0 || start + length > prefix.byteLength) throw new ArrowFileProblem('a record batch message has a bad length');
    let header: RecordBatchHeader;
    try {
      header = decodeRecordBatchMessage(new FlatBuffer(prefix.subarray(start, start + length)));
    } catch (error) {
      if (error instanceof ArrowFileProblem) throw error;
      throw new ArrowFileProblem(`a record batch message cannot be decoded (${(error as Error).message})`);
    }
    if (header.compressed) throw new ArrowFileProblem('a record batch is compressed');
    const body = block.offset + block.metaDataLength;
    if (header.nodes.length !== schema.fields.length) throw new ArrowFileProblem('a record batch does not match the schema');
    let next = 0;
    const fields = schema.fields.map((field, i) => {
      const node = header.nodes[i]!;
      if (node.nullCount !== 0 || node.length !== header.length) throw new ArrowFileProblem(`column ${field.name} has nulls or a wrong length`);
      const count = bufferCount(field.typeId);
      const regions = header.buffers.slice(next, next + count).map((region) => ({ offset: body + region.offset, length: region.length }));
      next += count;
      if (regions.length !== count || regions.some((region) => region.offset + region.length > body + block.bodyLength)) {
        throw new ArrowFileProblem(`column ${field.name} lies outside its record batch`);
      }
      return regions;
    });
    batches.push({ rows: header.length, fields });
  }
  return { schema, batches, blocks: footer.blocks };
}

/** A record batch's block in the footer: where its message starts, and its lengths. */
export interface ArrowBlock {
  offset: number;
  metaDataLength: number;
  bodyLength: number;
}

/** Buffers per column of a flat type: validity and values, plus offsets for variable width. */
function bufferCount(typeId: number): number {
  // Type ids of the Arrow format: 5 Utf8 and 4 Binary carry offsets.
  return typeId === 5 || typeId === 4 ? 3 : 2;
}

/** `length` bytes at `position` of file descriptor `fd`, or a problem if the file ends first. */
export function readAt(fd: number, position: number, length: number, into?: Uint8Array): Uint8Array {
  const bytes = into ?? new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const bytesRead = readSync(fd, bytes, done, Math.min(length - done, 1 << 30), position + done);
    if (bytesRead === 0) throw new ArrowFileProblem('truncated');
    done += bytesRead;
  }
  return bytes;
}

function latin1(bytes: Uint8Array): string {
  return String.fromCharCode(...bytes);
}

// ---------------------------------------------------------------------------------------
// Flatbuffers, read-only: a table is an int32 offset back to its vtable (u16 vtable size, u16
// table size, then a u16 offset per field, 0 = absent); offset fields (tables, vectors,
// strings) hold a u32 forward offset from where they are stored; a vector is a u32 length then
// its elements. DataView throws on a position outside the buffer, which the callers report as
// an undecodable footer or message.

class FlatBuffer {
  private readonly view: DataView;
  private readonly text = new TextDecoder('utf-8', { fatal: true });

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** The root table. */
  root(): number {
    return this.view.getUint32(0, true);
  }

  /** Where field `index` of the table at `table` is stored, or 0 when absent. */
  field(table: number, index: number): number {
    const vtable = table - this.view.getInt32(table, true);
    const entry = 4 + 2 * index;
    if (entry >= this.view.getUint16(vtable, true)) return 0;
    const offset = this.view.getUint16(vtable + entry, true);
    return offset === 0 ? 0 : table + offset;
  }

  /** The table, vector or string an offset field points at (0 when the field is absent). */
  target(table: number, index: number): number {
    const at = this.field(table, index);
    return at === 0 ? 0 : at + this.view.getUint32(at, true);
  }

  u8(table: number, index: number, otherwise = 0): number {
    const at = this.field(table, index);
    return at === 0 ? otherwise : this.view.getUint8(at);
  }

  i32(table: number, index: number, otherwise = 0): number {
    const at = this.field(table, index);
    return at === 0 ? otherwise : this.view.getInt32(at, true);
  }

  i64(table: number, index: number, otherwise = 0): number {
    const at = this.field(table, index);
    return at === 0 ? otherwise : this.long(at);
  }

  /** A little-endian int32 at an absolute position. */
  int(at: number): number {
    return this.view.getInt32(at, true);
  }

  /** A little-endian int64 at an absolute position, as a number (exact below 2^53). */
  long(at: number): number {
    const value = this.view.getBigInt64(at, true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < -BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`an int64 at ${at} is out of range`);
    return Number(value);
  }

  string(table: number, index: number): string | undefined {
    const at = this.target(table, index);
    if (at === 0) return undefined;
    const length = this.view.getUint32(at, true);
    if (at + 4 + length > this.bytes.byteLength) throw new Error(`a string at ${at} runs past the end`);
    return this.text.decode(this.bytes.subarray(at + 4, at + 4 + length));
  }

  /** A vector field: its element count and where its first element is (count 0 when absent). */
  vector(table: number, index: number): { count: number; start: number } {
    const at = this.target(table, index);
    if (at === 0) return { count: 0, start: 0 };
    const count = this.view.getUint32(at, true);
    if (count > this.bytes.byteLength) throw new Error(`a vector at ${at} is longer than the buffer`);
    return { count, start: at + 4 };
  }

  /** The table element `i` of a vector of tables. */
  tableAt(start: number, i: number): number {
    const at = start + 4 * i;
    return at + this.view.getUint32(at, true);
  }
}

// Field indexes, in the order of the Arrow format's .fbs files.
const FOOTER = { schema: 1, recordBatches: 3 };
const SCHEMA = { fields: 1, customMetadata: 2 };
const FIELD = { name: 0, typeType: 2, type: 3 };
const INT = { bitWidth: 0, isSigned: 1 };
const KEY_VALUE = { key: 0, value: 1 };
const MESSAGE = { headerType: 1, header: 2 };
const RECORD_BATCH = { length: 0, nodes: 1, buffers: 2, compression: 3 };
const TYPE_INT = 2;
const HEADER_RECORD_BATCH = 3;
/** Struct sizes: Block {offset: i64, metaDataLength: i32, pad, bodyLength: i64}; FieldNode and Buffer, two i64. */
const BLOCK_BYTES = 24;
const PAIR_BYTES = 16;

function decodeFooter(fb: FlatBuffer) {
  const footer = fb.root();
  const schemaTable = fb.target(footer, FOOTER.schema);
  if (schemaTable === 0) throw new Error('the footer has no schema');
  const fields: ArrowField[] = [];
  const fieldVector = fb.vector(schemaTable, SCHEMA.fields);
  for (let i = 0; i < fieldVector.count; i++) {
    const field = fb.tableAt(fieldVector.start, i);
    const typeId = fb.u8(field, FIELD.typeType);
    const decoded: ArrowField = { name: fb.string(field, FIELD.name) ?? '', typeId };
    if (typeId === TYPE_INT) {
      const type = fb.target(field, FIELD.type);
      if (type === 0) throw new Error(`field ${decoded.name} has no Int type table`);
      decoded.bitWidth = fb.i32(type, INT.bitWidth);
      decoded.isSigned = fb.u8(type, INT.isSigned) !== 0;
    }
    fields.push(decoded);
  }
  const metadata = new Map<string, string>();
  const pairs = fb.vector(schemaTable, SCHEMA.customMetadata);
  for (let i = 0; i < pairs.count; i++) {
    const pair = fb.tableAt(pairs.start, i);
    metadata.set(fb.string(pair, KEY_VALUE.key) ?? '', fb.string(pair, KEY_VALUE.value) ?? '');
  }
  const blockVector = fb.vector(footer, FOOTER.recordBatches);
  const blocks = Array.from({ length: blockVector.count }, (_, i) => {
    const at = blockVector.start + i * BLOCK_BYTES;
    return { offset: fb.long(at), metaDataLength: fb.int(at + 8), bodyLength: fb.long(at + 16) };
  });
  return { schema: { fields, metadata }, blocks };
}

interface RecordBatchHeader {
  length: number;
  nodes: Array<{ length: number; nullCount: number }>;
  buffers: Array<{ offset: number; length: number }>;
  compressed: boolean;
}

function decodeRecordBatchMessage(fb: FlatBuffer): RecordBatchHeader {
  const message = fb.root();
  if (fb.u8(message, MESSAGE.headerType) !== HEADER_RECORD_BATCH) throw new ArrowFileProblem('a record batch block holds another kind of message');
  const batch = fb.target(message, MESSAGE.header);
  if (batch === 0) throw new Error('the message has no header');
  const pairs = (index: number) => {
    const vector = fb.vector(batch, index);
    return Array.from({ length: vector.count }, (_, i) => [fb.long(vector.start + i * PAIR_BYTES), fb.long(vector.start + i * PAIR_BYTES + 8)] as const);
  };
  return {
    length: fb.i64(batch, RECORD_BATCH.length),
    nodes: pairs(RECORD_BATCH.nodes).map(([length, nullCount]) => ({ length, nullCount })),
    buffers: pairs(RECORD_BATCH.buffers).map(([offset, length]) => ({ offset, length })),
    compressed: fb.target(batch, RECORD_BATCH.compression) !== 0,
  };
}
