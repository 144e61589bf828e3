// The writer's flatbuffers (src/dataset/file/arrow-encode.ts) against apache-arrow's encoders
// of the same record batch messages and footers: byte for byte, so that a dataset file is the
// one the writer wrote with apache-arrow, and apache-arrow reads it.
import { MetadataVersion } from 'apache-arrow/enum';
import { FileBlock, Footer } from 'apache-arrow/ipc/metadata/file';
import { BufferRegion, FieldNode, Message, RecordBatch } from 'apache-arrow/ipc/metadata/message';
import { Schema } from 'apache-arrow/schema';
import { describe, expect, it } from 'vitest';
import { bufferFieldTypes, encodeFooter, encodeRecordBatchMessage } from '../src/dataset/file/arrow-encode.js';
import { bufferFields } from '../src/dataset/file/buffer-table.js';
import { CHECKSUM_KEY, FORMAT_KEY, META_KEY } from '../src/dataset/format.js';
import { seededRandom } from './support/large-dataset.js';

const random = seededRandom(4242);
const integer = (below: number) => Math.floor(random() * below);
/** Numbers of every size a file has: small, past 2^31 and 2^32, up to 2^53 - 1. */
const size = () => [integer(64), integer(1 << 20), 2 ** 31 + integer(1000), 2 ** 32 + integer(1 << 30), Number.MAX_SAFE_INTEGER - integer(1000)][integer(5)]!;

describe('the writer’s flatbuffers', () => {
  it('encode a record batch message as apache-arrow does', () => {
    for (let run = 0; run < 200; run++) {
      const rows = run === 0 ? 0 : run === 1 ? 100_000 : integer(5000);
      const fields = bufferFieldTypes.length;
      const nodes = Array.from({ length: fields }, () => ({ length: rows, nullCount: run % 3 === 0 ? integer(rows + 1) : 0 }));
      const regions = Array.from({ length: run === 2 ? 0 : 13 }, () => ({ offset: size(), length: size() }));
      const body = size();
      const ours = encodeRecordBatchMessage(rows, nodes, regions, body);
      const theirs = Message.encode(
        Message.from(
          new RecordBatch(
            rows,
            nodes.map((node) => new FieldNode(node.length, node.nullCount)),
            regions.map((region) => new BufferRegion(region.offset, region.length)),
            null,
          ),
          body,
        ) as Message,
      );
      expect(Buffer.from(ours).equals(Buffer.from(theirs)), `run ${run}`).toBe(true);
    }
  });

  it('encode a footer (schema, its metadata, the blocks) as apache-arrow does', () => {
    const texts = ['', 'crosstab-dataset/1', '{"survey":"ACS","labels":{"é":"Ünïcödé ✓","𝄞":"\\u0000"}}', 'x'.repeat(70_000), '0123456789abcdef'.repeat(4)];
    for (let run = 0; run < 100; run++) {
      const blocks = Array.from({ length: run === 0 ? 0 : run === 1 ? 2000 : integer(40) }, () => ({ offset: size(), metaDataLength: integer(1 << 20), bodyLength: size() }));
      const metadata: Array<[string, string]> = [
        [FORMAT_KEY, texts[integer(texts.length)]!],
        [META_KEY, texts[integer(texts.length)]! + String(run)],
        [CHECKSUM_KEY, texts[integer(texts.length)]!],
      ];
      const ours = encodeFooter(bufferFieldTypes, metadata, blocks);
      const schema = new Schema(bufferFields, new Map(metadata));
      const theirs = Footer.encode(new Footer(schema, MetadataVersion.V5, blocks.map((block) => new FileBlock(block.metaDataLength, block.bodyLength, block.offset)), []));
      expect(Buffer.from(ours).equals(Buffer.from(theirs)), `run ${run}`).toBe(true);
    }
  });

  it('describe the buffer table with the fields buffer-table.ts gives apache-arrow', () => {
    expect(bufferFieldTypes.map((field) => field.name)).toEqual(bufferFields.map((field) => field.name));
    expect(bufferFieldTypes.map((field) => field.nullable)).toEqual(bufferFields.map((field) => field.nullable));
    expect(bufferFieldTypes.map((field) => (typeof field.type === 'string' ? field.type : `${field.type.signed ? 'int' : 'uint'}${field.type.bitWidth}`))).toEqual(
      bufferFields.map((field) => String(field.type).toLowerCase()),
    );
  });
});
