import type { FileHandle } from 'node:fs/promises';
import { type Data, type Field, makeVector, type MetadataVersion, type RecordBatch, type Vector } from 'apache-arrow';
import type { FileBlock } from 'apache-arrow/ipc/metadata/file';
import { Message, type RecordBatch as BatchHeader } from 'apache-arrow/ipc/metadata/message';
import { VectorLoader } from 'apache-arrow/visitor/vectorloader';
import type { ColumnPlan, FileRange } from './arrow-direct.js';
import { type NumberKind, numberWidth } from './typed-numbers.js';

/**
 * Some columns of one record batch of an Arrow IPC file, reading only their buffers' bytes
 * (each thread of an Arrow build needs its share of the columns, not the whole batch).
 *
 * apache-arrow's loader walks a batch's field nodes and buffers in schema order; it is run
 * twice over stand-ins for the batch's body: first one that records which body ranges each
 * wanted field asks for, then one that hands out those ranges, read from the file. Other
 * fields come out empty and are dropped. Returns undefined for a compressed batch, which
 * the caller reads whole.
 */
export async function readBatchColumns(handle: FileHandle, block: FileBlock, fields: Field[], positions: number[], dictionaries: Map<number, Vector>, version: MetadataVersion, direct?: { kinds: Map<number, NumberKind | 'utf8'>; fileSize: number }): Promise<BatchColumns | undefined> {
  const { header, bodyLength } = await batchMessage(handle, block);
  if (header.compression != null) return undefined;
  const body = block.offset + block.metaDataLength;
  // Columns read straight into WebAssembly memory: only where their buffers lie.
  const plans = direct === undefined ? new Map<number, ColumnPlan>() : planColumns(header, block, bodyLength, fields, new Map(positions.flatMap((i) => (direct.kinds.has(i) ? [[i, direct.kinds.get(i)!]] : []))), dictionaries, version, direct.fileSize);
  const wanted = new Set(positions.filter((i) => !plans.has(i)));
  // Pass 1: the body ranges of each wanted field's buffers.
  const spans = wanted.size === 0 ? new Map<number, { start: number; end: number }>() : fieldSpans(header, fields, dictionaries, version, wanted);
  // Pass 2: each wanted field's bytes, one read per field (its buffers lie together).
  const bytes = new Map<number, { start: number; data: Uint8Array }>();
  for (const [i, span] of spans) bytes.set(i, { start: span.start, data: await readAt(handle, body + span.start, span.end - span.start) });
  let field = -1;
  const source = {
    subarray(from: number, to: number): Uint8Array {
      const read = bytes.get(field);
      if (read === undefined || to <= from) return new Uint8Array(0);
      return read.data.subarray(from - read.start, to - read.start);
    },
  };
  const vectors = new Map<number, Vector>();
  if (wanted.size > 0) {
    walk(source, header, fields, dictionaries, version, (i) => (field = i), (i, data) => {
      if (wanted.has(i)) vectors.set(i, makeVector(data));
    });
  }
  return {
    rows: Number(header.length),
    vectorAt(position) {
      const vector = vectors.get(position);
      if (vector === undefined) throw new Error(`column ${position + 1} was not read from its record batch`);
      return vector;
    },
    planAt: (position) => plans.get(position),
  };
}

/**
 * Where the buffers of the columns of `kinds` (schema position: how its values are stored)
 * lie in the file, from the batch's message: each checked to lie inside the batch's body (in
 * the file), to be as long as the batch's rows need, and the body's length the same in the
 * footer and the message, so that a damaged file is refused, never read as other bytes.
 */
function planColumns(header: BatchHeader, block: FileBlock, bodyLength: number, fields: Field[], kinds: Map<number, NumberKind | 'utf8'>, dictionaries: Map<number, Vector>, version: MetadataVersion, fileSize: number): Map<number, ColumnPlan> {
  const plans = new Map<number, ColumnPlan>();
  if (kinds.size === 0) return plans;
  const rows = Number(header.length);
  const body = block.offset + block.metaDataLength;
  if (block.bodyLength !== bodyLength) throw new Error(`a record batch's body is ${block.bodyLength} bytes in the file's footer where its message says ${bodyLength}`);
  if (body + bodyLength > fileSize) throw new Error(`a record batch's body (${bodyLength} bytes at ${body}) runs past the end of the file (${fileSize} bytes)`);
  const loader = new VectorLoader({ subarray: () => new Uint8Array(0) } as unknown as Uint8Array, header.nodes, header.buffers, dictionaries, version, header.variadicBufferCounts);
  // The loader's place in the message's field nodes and buffers (the last it took), before and after each field.
  const at = loader as unknown as { nodesIndex: number; buffersIndex: number };
  fields.forEach((field, i) => {
    const node = at.nodesIndex + 1;
    const buffer = at.buffersIndex + 1;
    loader.visit(field);
    const kind = kinds.get(i);
    if (kind === undefined) return;
    const bad = (what: string) => new Error(`column "${field.name}": ${what}`);
    const count = at.buffersIndex + 1 - buffer;
    if (at.nodesIndex + 1 - node !== 1 || count !== (kind === 'utf8' ? 3 : 2)) throw bad('its record batch message does not list the buffers its type has');
    const { length, nullCount } = header.nodes[node]!;
    if (length !== rows) throw bad(`its record batch message gives it ${length} rows where the batch has ${rows}`);
    if (!(nullCount >= 0 && nullCount <= rows)) throw bad(`its record batch message gives it ${nullCount} nulls in ${rows} rows`);
    const range = (k: number, least: number, what: string): FileRange => {
      const { offset, length } = header.buffers[buffer + k]!;
      if (!(offset >= 0 && length >= 0 && offset + length <= bodyLength)) throw bad(`its ${what} (${length} bytes at ${offset}) runs past its record batch's body (${bodyLength} bytes)`);
      if (length < least) throw bad(`its ${what} holds ${length} bytes where its ${rows} rows need ${least}`);
      return { offset: body + offset, length };
    };
    const plan: ColumnPlan = { kind, rows, data: range(count - 1, kind === 'utf8' ? 0 : rows * numberWidth[kind], 'values buffer') };
    if (nullCount > 0) plan.validity = range(0, (rows + 7) >> 3, 'validity bitmap');
    if (kind === 'utf8') plan.offsets = range(1, rows === 0 ? 0 : (rows + 1) * 4, 'offsets buffer');
    plans.set(i, plan);
  });
  return plans;
}

/** A batch's rows and the bytes of each field's buffers, without reading them; undefined for a compressed batch. */
export async function batchFieldBytes(handle: FileHandle, block: FileBlock, fields: Field[], dictionaries: Map<number, Vector>, version: MetadataVersion): Promise<{ rows: number; bytes: Map<number, number> } | undefined> {
  const { header } = await batchMessage(handle, block);
  if (header.compression != null) return undefined;
  const spans = fieldSpans(header, fields, dictionaries, version, new Set(fields.keys()));
  return { rows: Number(header.length), bytes: new Map([...spans].map(([i, span]) => [i, span.end - span.start])) };
}

/** Rows of the record batch of `block` (its message only is read). */
export async function batchRows(handle: FileHandle, block: FileBlock): Promise<number> {
  return Number((await batchMessage(handle, block)).header.length);
}

/** A record batch's columns, as many as were read. */
export interface BatchColumns {
  rows: number;
  vectorAt(position: number): Vector;
  /** Where a column to be read straight into WebAssembly memory lies (see arrow-direct.ts); undefined for a column read as a vector. */
  planAt(position: number): ColumnPlan | undefined;
}

/** A record batch read whole as BatchColumns. */
export function wholeBatch(batch: RecordBatch): BatchColumns {
  return { rows: batch.numRows, vectorAt: (position) => batch.getChildAt(position)!, planAt: () => undefined };
}

/** The record batch message of `block`: its header and the body length it gives. */
async function batchMessage(handle: FileHandle, block: FileBlock): Promise<{ header: BatchHeader; bodyLength: number }> {
  const prefix = await readAt(handle, block.offset, block.metaDataLength);
  const view = new DataView(prefix.buffer, prefix.byteOffset, prefix.byteLength);
  const continued = view.getInt32(0, true) === -1;
  const length = view.getInt32(continued ? 4 : 0, true);
  const start = continued ? 8 : 4;
  if (!(length > 0 && start + length <= prefix.byteLength)) throw new Error('a record batch message has a bad length');
  const message = Message.decode(prefix.subarray(start, start + length));
  if (!message.isRecordBatch()) throw new Error('a record batch block does not hold a record batch');
  return { header: message.header() as BatchHeader, bodyLength: Number(message.bodyLength) };
}

/** The body range that each `wanted` field's buffers span (fields without buffer bytes left out). */
function fieldSpans(header: BatchHeader, fields: Field[], dictionaries: Map<number, Vector>, version: MetadataVersion, wanted: Set<number>): Map<number, { start: number; end: number }> {
  const spans = new Map<number, { start: number; end: number }>();
  let field = -1;
  const recorder = {
    subarray(from: number, to: number): Uint8Array {
      if (wanted.has(field) && to > from) {
        const span = spans.get(field);
        spans.set(field, span === undefined ? { start: from, end: to } : { start: Math.min(span.start, from), end: Math.max(span.end, to) });
      }
      return new Uint8Array(0);
    },
  };
  walk(recorder, header, fields, dictionaries, version, (i) => (field = i));
  return spans;
}

/** Runs apache-arrow's loader over every field of a batch, `bytes` standing for its body. */
function walk(bytes: { subarray(from: number, to: number): Uint8Array }, header: BatchHeader, fields: Field[], dictionaries: Map<number, Vector>, version: MetadataVersion, at: (i: number) => void, loaded?: (i: number, data: Data) => void): void {
  const loader = new VectorLoader(bytes as Uint8Array, header.nodes, header.buffers, dictionaries, version, header.variadicBufferCounts);
  fields.forEach((field, i) => {
    at(i);
    const data = loader.visit(field);
    loaded?.(i, data);
  });
}

/** `length` bytes at `position`, or an error if the file ends first. */
async function readAt(handle: FileHandle, position: number, length: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(bytes, filled, length - filled, position + filled);
    if (bytesRead === 0) throw new Error('the file ends inside a record batch');
    filled += bytesRead;
  }
  return bytes;
}
