import { readSync } from 'node:fs';
import type { Schema } from 'apache-arrow';
import { Footer } from 'apache-arrow/ipc/metadata/file';
import { Message, type RecordBatch } from 'apache-arrow/ipc/metadata/message';

const MAGIC = 'ARROW1';

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
 */
export function readArrowStructure(fd: number, size: number): { schema: Schema; batches: BatchLocation[] } {
  if (size < 12 || latin1(readAt(fd, 0, 6)) !== MAGIC) throw new ArrowFileProblem('signature');
  const tail = readAt(fd, size - 10, 10);
  if (latin1(tail.subarray(4)) !== MAGIC) throw new ArrowFileProblem('truncated');
  const footerLength = new DataView(tail.buffer, tail.byteOffset).getInt32(0, true);
  if (footerLength <= 0 || footerLength > size - 18) throw new ArrowFileProblem('the footer length is out of range');
  let footer: Footer;
  try {
    footer = Footer.decode(readAt(fd, size - 10 - footerLength, footerLength));
  } catch (error) {
    throw new ArrowFileProblem(`the footer cannot be decoded (${(error as Error).message})`);
  }
  const batches: BatchLocation[] = [];
  for (const block of footer.recordBatches()) {
    if (block.offset < 8 || block.metaDataLength < 8 || block.offset + block.metaDataLength + block.bodyLength > size) {
      throw new ArrowFileProblem('a record batch lies outside the file');
    }
    const prefix = readAt(fd, block.offset, block.metaDataLength);
    const view = new DataView(prefix.buffer, prefix.byteOffset);
    const continued = view.getInt32(0, true) === -1;
    const length = view.getInt32(continued ? 4 : 0, true);
    const start = continued ? 8 : 4;
    if (length <= 0 || start + length > prefix.byteLength) throw new ArrowFileProblem('a record batch message has a bad length');
    let message: Message;
    try {
      message = Message.decode(prefix.subarray(start, start + length));
    } catch (error) {
      throw new ArrowFileProblem(`a record batch message cannot be decoded (${(error as Error).message})`);
    }
    if (!message.isRecordBatch()) throw new ArrowFileProblem('a record batch block holds another kind of message');
    const header = message.header() as RecordBatch;
    if (header.compression !== null) throw new ArrowFileProblem('a record batch is compressed');
    const body = block.offset + block.metaDataLength;
    if (header.nodes.length !== footer.schema.fields.length) throw new ArrowFileProblem('a record batch does not match the schema');
    let next = 0;
    const fields = footer.schema.fields.map((field, i) => {
      const node = header.nodes[i]!;
      if (node.nullCount !== 0 || node.length !== header.length) throw new ArrowFileProblem(`column ${field.name} has nulls or a wrong length`);
      const count = bufferCount(field.type.typeId);
      const regions = header.buffers.slice(next, next + count).map((region) => ({ offset: body + region.offset, length: region.length }));
      next += count;
      if (regions.length !== count || regions.some((region) => region.offset + region.length > body + block.bodyLength)) {
        throw new ArrowFileProblem(`column ${field.name} lies outside its record batch`);
      }
      return regions;
    });
    batches.push({ rows: header.length, fields });
  }
  return { schema: footer.schema, batches };
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
