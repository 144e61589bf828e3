/**
 * The flatbuffers of a dataset file the writer writes (a record batch's message, the footer
 * with its schema), encoded with the flatbuffers builder alone. apache-arrow's encoders give
 * the same bytes (test/arrow-encode.test.ts compares them) but load some seventy modules, a
 * tenth of a second of CPU at the start of every `crosstab append`. The calls are made in
 * apache-arrow's order, so that the builder lays out the same bytes.
 */
import { Builder } from 'flatbuffers';

/** MetadataVersion.V5 (the default a reader assumes when absent is V1 = 0). */
const V5 = 4;
const V1 = 0;
/** MessageHeader.RecordBatch. */
const RECORD_BATCH = 3;
/** Type ids of the fields' types. */
const TYPE_INT = 2;
const TYPE_BINARY = 4;
const TYPE_UTF8 = 5;
/** Endianness.Little, the default. */
const LITTLE = 0;

/** A field of the schema: its name, nullability and type. */
export interface FieldType {
  name: string;
  nullable: boolean;
  type: 'binary' | 'utf8' | { bitWidth: number; signed: boolean };
}

export interface FieldNodeEntry {
  length: number;
  nullCount: number;
}

export interface BufferRegionEntry {
  offset: number;
  length: number;
}

export interface FileBlockEntry {
  offset: number;
  metaDataLength: number;
  bodyLength: number;
}

/** The columns of the buffer table (src/dataset/file/buffer-table.ts describes them as apache-arrow fields), in file order. */
export const bufferFieldTypes: FieldType[] = [
  { name: 'data', nullable: false, type: 'binary' },
  { name: 'name', nullable: false, type: 'utf8' },
  { name: 'kind', nullable: false, type: { bitWidth: 8, signed: false } },
  { name: 'count', nullable: false, type: { bitWidth: 32, signed: false } },
  { name: 'hash', nullable: false, type: 'utf8' },
];

/** The message of an uncompressed record batch of `length` rows: apache-arrow's Message.encode(Message.from(new RecordBatch(...), bodyLength)). */
export function encodeRecordBatchMessage(length: number, nodes: FieldNodeEntry[], regions: BufferRegionEntry[], bodyLength: number): Uint8Array {
  const b = new Builder();
  b.startVector(16, nodes.length, 8);
  for (let i = nodes.length - 1; i >= 0; i--) {
    b.prep(8, 16);
    b.writeInt64(BigInt(nodes[i]!.nullCount));
    b.writeInt64(BigInt(nodes[i]!.length));
  }
  const nodesVector = b.endVector();
  b.startVector(16, regions.length, 8);
  for (let i = regions.length - 1; i >= 0; i--) {
    b.prep(8, 16);
    b.writeInt64(BigInt(regions[i]!.length));
    b.writeInt64(BigInt(regions[i]!.offset));
  }
  const buffersVector = b.endVector();
  b.startObject(5);
  b.addFieldInt64(0, BigInt(length), 0n);
  b.addFieldOffset(1, nodesVector, 0);
  b.addFieldOffset(2, buffersVector, 0);
  const header = b.endObject();
  b.startObject(5);
  b.addFieldInt16(0, V5, V1);
  b.addFieldOffset(2, header, 0);
  b.addFieldInt8(1, RECORD_BATCH, 0);
  b.addFieldInt64(3, BigInt(bodyLength), 0n);
  b.finish(b.endObject());
  return b.asUint8Array();
}

/** The file footer: the schema of `fields` with `metadata` (key, value, in order) and the record batches' blocks: apache-arrow's Footer.encode. */
export function encodeFooter(fields: FieldType[], metadata: Array<[string, string]>, blocks: FileBlockEntry[]): Uint8Array {
  const b = new Builder();
  const fieldOffsets = fields.map((field) => encodeField(b, field));
  // apache-arrow starts the fields vector twice (startFieldsVector, then createFieldsVector): the same padding here.
  b.startVector(4, fieldOffsets.length, 4);
  const fieldsVector = offsetVector(b, fieldOffsets);
  const keyValues = metadata.map(([key, value]) => {
    const keyOffset = b.createString(key);
    const valueOffset = b.createString(value);
    b.startObject(2);
    b.addFieldOffset(0, keyOffset, 0);
    b.addFieldOffset(1, valueOffset, 0);
    return b.endObject();
  });
  const metadataVector = keyValues.length > 0 ? offsetVector(b, keyValues) : -1;
  b.startObject(4);
  b.addFieldOffset(1, fieldsVector, 0);
  b.addFieldInt16(0, LITTLE, LITTLE);
  if (metadataVector !== -1) b.addFieldOffset(2, metadataVector, 0);
  const schema = b.endObject();
  b.startVector(24, blocks.length, 8);
  for (let i = blocks.length - 1; i >= 0; i--) {
    const block = blocks[i]!;
    b.prep(8, 24);
    b.writeInt64(BigInt(block.bodyLength));
    b.pad(4);
    b.writeInt32(block.metaDataLength);
    b.writeInt64(BigInt(block.offset));
  }
  const recordBatches = b.endVector();
  b.startVector(24, 0, 8);
  const dictionaries = b.endVector();
  b.startObject(5);
  b.addFieldOffset(1, schema, 0);
  b.addFieldInt16(0, V5, V1);
  b.addFieldOffset(3, recordBatches, 0);
  b.addFieldOffset(2, dictionaries, 0);
  b.finish(b.endObject());
  return b.asUint8Array();
}

function encodeField(b: Builder, field: FieldType): number {
  let typeId: number;
  let typeOffset: number;
  if (field.type === 'binary' || field.type === 'utf8') {
    typeId = field.type === 'binary' ? TYPE_BINARY : TYPE_UTF8;
    b.startObject(0);
    typeOffset = b.endObject();
  } else {
    typeId = TYPE_INT;
    b.startObject(2);
    b.addFieldInt32(0, field.type.bitWidth, 0);
    b.addFieldInt8(1, field.type.signed ? 1 : 0, 0);
    typeOffset = b.endObject();
  }
  const children = offsetVector(b, []);
  const name = field.name ? b.createString(field.name) : -1;
  b.startObject(7);
  b.addFieldOffset(3, typeOffset, 0);
  b.addFieldInt8(2, typeId, 0);
  b.addFieldOffset(5, children, 0);
  b.addFieldInt8(1, field.nullable ? 1 : 0, 0);
  if (name !== -1) b.addFieldOffset(0, name, 0);
  return b.endObject();
}

/** A vector of table offsets, as the generated create...Vector functions write it. */
function offsetVector(b: Builder, offsets: number[]): number {
  b.startVector(4, offsets.length, 4);
  for (let i = offsets.length - 1; i >= 0; i--) b.addOffset(offsets[i]!);
  return b.endVector();
}
