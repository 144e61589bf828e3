// The dataset reader decodes the Arrow IPC footer and record batch messages by hand
// (src/dataset/file/arrow-file.ts, so that opening a dataset does not load apache-arrow): it must
// read what apache-arrow reads, on files written by the writer and by apache-arrow itself.
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Binary, Field, Int32, makeData, RecordBatch, Schema, Struct, Table, tableFromIPC, tableToIPC, Uint8, Utf8, vectorFromArray } from 'apache-arrow';
import { Footer } from 'apache-arrow/ipc/metadata/file';
import { Message, type RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import { describe, expect, inject, it } from 'vitest';
import { readArrowStructure } from '../src/dataset/file/arrow-file.js';

function structure(path: string) {
  const fd = openSync(path, 'r');
  try {
    return readArrowStructure(fd, readFileSync(path).byteLength);
  } finally {
    closeSync(fd);
  }
}

/** The same structure through apache-arrow's own flatbuffers decoding. */
function arrowStructure(bytes: Uint8Array) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const footerLength = view.getInt32(bytes.byteLength - 10, true);
  const footer = Footer.decode(bytes.subarray(bytes.byteLength - 10 - footerLength, bytes.byteLength - 10));
  const fields = footer.schema.fields.map((field) => {
    const type = field.type as { typeId: number; bitWidth?: number; isSigned?: boolean };
    return { name: field.name, typeId: type.typeId, ...(type.typeId === 2 ? { bitWidth: type.bitWidth, isSigned: type.isSigned } : {}) };
  });
  const batches = [...footer.recordBatches()].map((block) => {
    const continued = view.getInt32(block.offset, true) === -1;
    const start = block.offset + (continued ? 8 : 4);
    const length = view.getInt32(block.offset + (continued ? 4 : 0), true);
    const header = Message.decode(bytes.subarray(start, start + length)).header() as RecordBatchHeader;
    const body = block.offset + block.metaDataLength;
    return { rows: header.length, buffers: header.buffers.map((region) => ({ offset: body + region.offset, length: region.length })) };
  });
  return { fields, metadata: new Map(footer.schema.metadata), batches };
}

function expectSame(path: string) {
  const ours = structure(path);
  const theirs = arrowStructure(readFileSync(path));
  expect(ours.schema.fields).toEqual(theirs.fields);
  expect(ours.schema.metadata).toEqual(theirs.metadata);
  expect(ours.batches.map((batch) => ({ rows: batch.rows, buffers: batch.fields.flat() }))).toEqual(theirs.batches);
}

describe('readArrowStructure agrees with apache-arrow', () => {
  it('on a dataset the writer made (GSS)', () => {
    expectSame(inject('testDatasets').gss);
    expect(structure(inject('testDatasets').gss).schema.metadata.get('crosstab.format')).toMatch(/^crosstab-engine\//);
  });

  it('on an Arrow IPC file of several batches, with metadata and signed and unsigned ints, written by apache-arrow', () => {
    const schema = new Schema(
      [new Field('data', new Binary(), false), new Field('name', new Utf8(), false), new Field('kind', new Uint8(), false), new Field('n', new Int32(), false)],
      new Map([['a', 'b'], ['é', 'ünïcode']]),
    );
    const batch = (offset: number, rows: number) => {
      const columns = {
        data: vectorFromArray(Array.from({ length: rows }, (_, i) => new Uint8Array(i % 7).fill(i)), new Binary()),
        name: vectorFromArray(Array.from({ length: rows }, (_, i) => `row ${offset + i}`), new Utf8()),
        kind: vectorFromArray(Array.from({ length: rows }, (_, i) => i % 200), new Uint8()),
        n: vectorFromArray(Array.from({ length: rows }, (_, i) => -i), new Int32()),
      };
      const data = makeData({ type: new Struct(schema.fields), length: rows, nullCount: 0, children: Object.values(columns).map((vector) => vector.data[0]!) });
      return new RecordBatch(schema, data);
    };
    const table = new Table(schema, [batch(0, 10), batch(10, 1000), batch(1010, 1)]);
    const path = join(mkdtempSync(join(tmpdir(), 'crosstab-arrow-file-')), 'three.arrow');
    writeFileSync(path, tableToIPC(table, 'file'));
    expect(tableFromIPC(readFileSync(path)).numRows).toBe(1011);
    expectSame(path);
    expect(structure(path).batches.map((b) => b.rows)).toEqual([10, 1000, 1]);
  });
});
