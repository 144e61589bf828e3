import { Writable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { CrosstabError, ErrorCode } from '../../errors.js';
import { CSV_ENCODER_ABI, csvEncoderModule } from '../../kernel/wasm-module.js';
import type { CsvRecords } from './csv-records.js';
import { DeferredTexts } from './deferred-texts.js';
import type { ColumnEncoder, WeightEncoder } from './table-encoder.js';
import { workerFile } from './worker-file.js';
import { chunkEncoder, type ChunkMessage, type ChunkResult } from './csv-chunk-encoder.js';

/** What the CSV reader's table builder offers once it knows the header. */
export interface EncodedRowsTarget {
  /** Header width and the encoders by header position; undefined until the header is read. */
  layout(): { width: number; columns: Array<{ position: number; encoder: ColumnEncoder }>; weights: Array<{ position: number; encoder: WeightEncoder }> } | undefined;
  /** Rows so far (the next row's number). */
  readonly rows: number;
  /** The physical line on which the next row starts. */
  readonly nextLine: number;
  /** Counts `rows` rows encoded here, one physical line each. */
  addEncodedRows(rows: number): void;
}

/** Chunks sent to the workers and not yet merged, at most. */
const chunksInFlight = 4;

export interface CsvChunksOptions {
  /** Worker threads encoding chunks (>= 1); 0: one encoder on this thread (no worker started). */
  threads: number;
  /** Bytes of whole lines per chunk handed to a worker. */
  chunkBytes: number;
  /** The file read, named by a failure of the encoder. */
  file: string;
  /** The compiled encoder (default: build/csv.wasm's, csvEncoderModule()). */
  module?: WebAssembly.Module;
}

/** What encodes a share's chunks: a worker thread, or the encoder on this thread. */
interface ShareEncoder {
  postMessage(message: ChunkMessage): void;
  terminate(): unknown;
  /** Where it runs, as a failure names it: "CSV build worker 2 of 4", "the CSV encoder on the reading thread (no build worker)". */
  where: string;
}

/** A worker's share of the columns: by its dictionary and weight numbers, the table's encoders. */
interface Share {
  worker: ShareEncoder;
  columns: ColumnEncoder[];
  weights: WeightEncoder[];
}

/**
 * The CSV reader's encoder path: the lines after the header go in chunks of whole lines to
 * worker threads running the WebAssembly encoder (assembly/csv.ts via csv-worker.js and
 * csv-chunk-encoder.js), or with `threads: 0` to that encoder on this thread (a smaller
 * file, where starting workers would cost more than they save), which tokenize,
 * dictionary-encode and parse weights over bytes. Every
 * worker reads every chunk and encodes its share of the columns, so each column's
 * dictionary lives in one worker and its ids need no mapping; this thread copies the
 * results into the table's encoders in file order. From the first chunk a worker cannot
 * take whole (a quote or '\r', a field count or weight to complain about, bytes that are
 * not UTF-8) to the end of the file, `records` reads the lines (the string path and
 * csv-parse), so the table or the error is the same as that path alone gives.
 */
export class CsvChunks extends Writable {
  /** Rows the workers encoded so far (the rest were read as text on this thread). */
  encodedRows = 0;
  private mode: 'header' | 'chunks' | 'records' = 'header';
  private leftover: Buffer | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private shares: Share[] = [];
  private seq = 0;
  private nextToMerge = 0;
  /** Chunks sent and not yet merged: their bytes, and the workers' results so far. */
  private readonly inFlight = new Map<number, { bytes: Buffer; results: ChunkResult[]; arrived: number }>();
  /** Chunk buffers no longer in use, for the next chunks. */
  private readonly spare: SharedArrayBuffer[] = [];
  /** Workers started. */
  private threads = 0;
  /** One encoder on this thread, no worker (CsvChunksOptions.threads 0). */
  private inline = false;
  private merging: Promise<void> = Promise.resolve();
  private failure: Error | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly records: CsvRecords,
    private readonly target: EncodedRowsTarget,
    private readonly options: CsvChunksOptions,
    private readonly onRows: () => void,
  ) {
    super({ highWaterMark: 1 << 20 });
    records.on('error', (error: Error) => this.fail(error));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.take(chunk).then(() => done(), (error: Error) => done(error));
  }

  override _final(done: (error?: Error | null) => void): void {
    this.finish().then(() => done(), (error: Error) => done(error));
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.stopWorkers();
    if (!this.records.destroyed) this.records.destroy();
    done(error);
  }

  private async take(chunk: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.mode === 'header') {
      // The header line goes to `records` (BOM, names, checks); every line after it to the workers.
      const data = this.afterLeftover(chunk);
      const end = data.indexOf(0x0a);
      if (end < 0) {
        this.leftover = Buffer.from(data);
        return;
      }
      await this.toRecords(data.subarray(0, end + 1));
      if (this.records.diverted || !this.records.pastFirstLine || this.target.layout() === undefined) {
        this.mode = 'records';
        return this.toRecords(data.subarray(end + 1));
      }
      this.startChunks(data.subarray(end + 1));
      chunk = data.subarray(end + 1);
    }
    if (this.mode === 'records') {
      // A worker met a quote or '\r': what is still with the workers or waiting goes to
      // csv-parse first, in file order.
      await this.drain();
      const rest = this.leftover;
      this.leftover = undefined;
      if (rest !== undefined && rest.length > 0) await this.toRecords(rest);
      return this.toRecords(chunk);
    }
    const data = this.afterLeftover(chunk);
    const end = data.lastIndexOf(0x0a);
    if (end < 0) {
      this.leftover = Buffer.from(data);
      return;
    }
    this.pending.push(data.subarray(0, end + 1));
    this.pendingBytes += end + 1;
    if (end + 1 < data.length) this.leftover = Buffer.from(data.subarray(end + 1));
    if (this.pendingBytes >= this.options.chunkBytes) this.dispatch();
    // A few chunks in flight: memory stays bounded however fast the input comes.
    while (this.seq - this.nextToMerge >= chunksInFlight && !this.failure) {
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    if (this.failure) throw this.failure;
  }

  /** `chunk` after the bytes of an unfinished line kept from before (which are let go). */
  private afterLeftover(chunk: Buffer): Buffer {
    const data = this.leftover ? Buffer.concat([this.leftover, chunk]) : chunk;
    this.leftover = undefined;
    return data;
  }

  private async finish(): Promise<void> {
    await this.drain();
    this.stopWorkers();
    const rest = this.leftover;
    this.leftover = undefined;
    if (rest !== undefined && rest.length > 0) await this.toRecords(rest);
    await new Promise<void>((resolve, reject) => {
      this.records.once('error', reject);
      this.records.end(() => resolve());
    });
    if (this.failure) throw this.failure;
  }

  /** Sends what waits for a full chunk, then waits until every chunk sent is merged. */
  private async drain(): Promise<void> {
    this.dispatch();
    while (this.nextToMerge < this.seq && !this.failure) await new Promise<void>((resolve) => (this.wake = resolve));
    await this.merging;
    if (this.failure) throw this.failure;
  }

  /** Starts the workers, dealing out the columns by their cost in `sample` (the first lines). */
  private startChunks(sample: Buffer): void {
    const layout = this.target.layout()!;
    const owned = [...layout.weights.map((weight) => ({ ...weight, kind: 2 })), ...layout.columns.map((column) => ({ ...column, kind: 1 }))];
    const inline = (this.inline = this.options.threads === 0);
    const threads = (this.threads = inline ? 1 : Math.min(this.options.threads, owned.length));
    // One encoder on this thread takes every column: no costs to deal them out by.
    const costs = inline ? new Array<number>(layout.width).fill(1) : columnCosts(sample, layout.width);
    // Costliest first, each to the least loaded worker (longest processing time first).
    owned.sort((a, b) => costs[b.position]! - costs[a.position]! || a.position - b.position);
    const shares = Array.from({ length: threads }, () => ({ cost: 0, columns: [] as typeof owned }));
    for (const column of owned) {
      const least = shares.reduce((best, share) => (share.cost < best.cost ? share : best));
      least.columns.push(column);
      least.cost += costs[column.position]!;
    }
    const path = inline ? undefined : workerFile('csv-worker.js', 'the CSV build worker', import.meta.url);
    for (let i = 0; i < threads; i++) {
      const mine = shares[i]!.columns.sort((a, b) => a.position - b.position);
      const kinds = new Uint8Array(layout.width);
      const slots = new Uint32Array(layout.width);
      const share: Omit<Share, 'worker'> = { columns: [], weights: [] };
      for (const column of mine) {
        kinds[column.position] = column.kind;
        if (column.kind === 1) slots[column.position] = share.columns.push(column.encoder as ColumnEncoder) - 1;
        else slots[column.position] = share.weights.push(column.encoder as WeightEncoder) - 1;
      }
      const workerData = { module: this.options.module ?? csvEncoderModule(), abi: CSV_ENCODER_ABI, kinds, slots, dictionaries: share.columns.length, weights: share.weights.length };
      this.shares.push({ worker: path === undefined ? this.inlineEncoder(workerData, i) : this.startWorker(path, workerData, i, threads), ...share });
    }
    this.mode = 'chunks';
  }

  private startWorker(path: string, workerData: Parameters<typeof chunkEncoder>[0], share: number, threads: number): ShareEncoder {
    const worker = new Worker(path, { workerData });
    const encoder: ShareEncoder = { postMessage: (message) => worker.postMessage(message), terminate: () => worker.terminate(), where: `CSV build worker ${share + 1} of ${threads}` };
    worker.on('message', (result: ChunkResult) => this.arrived(share, result));
    worker.on('error', (error) => this.fail(this.encoderFailed(encoder.where, error.message)));
    worker.on('exit', (code) => {
      // A worker stopped by stopWorkers() is no longer a share's.
      if (code !== 0 && this.shares.some((s) => s.worker === encoder)) this.fail(this.encoderFailed(encoder.where, `exit code ${code}`));
    });
    return encoder;
  }

  /** The encoder on this thread: each chunk encoded when sent, its result merged as a worker's would be. */
  private inlineEncoder(workerData: Parameters<typeof chunkEncoder>[0], share: number): ShareEncoder {
    const where = 'the CSV encoder on the reading thread (no build worker)';
    let encode: ReturnType<typeof chunkEncoder>;
    try {
      encode = chunkEncoder(workerData);
    } catch (error) {
      throw this.encoderFailed(where, error instanceof Error ? error.message : String(error));
    }
    return { postMessage: (message) => this.arrived(share, encode(message)), terminate: () => undefined, where };
  }

  private dispatch(): void {
    if (this.pendingBytes === 0 || this.shares.length === 0) return;
    if (this.inline) return this.dispatchInline();
    // One copy every worker reads, in a buffer of an earlier chunk when one is free and large enough.
    const free = this.spare.findIndex((buffer) => buffer.byteLength >= this.pendingBytes);
    const memory = free >= 0 ? this.spare.splice(free, 1)[0]! : new SharedArrayBuffer(Math.max(this.pendingBytes, this.options.chunkBytes * 2));
    const chunk = new Uint8Array(memory, 0, this.pendingBytes);
    let at = 0;
    for (const part of this.pending) {
      chunk.set(part, at);
      at += part.length;
    }
    this.pending = [];
    this.pendingBytes = 0;
    const seq = this.seq++;
    this.inFlight.set(seq, { bytes: Buffer.from(chunk.buffer, 0, chunk.length), results: [], arrived: 0 });
    for (const { worker } of this.shares) worker.postMessage({ seq, chunk, length: chunk.length });
  }

  /**
   * What waits, to the encoder on this thread in chunks of at most `chunkBytes` of whole lines
   * (a longer line alone): V8 runs a WebAssembly function as baseline code until its optimised
   * code is ready, and swaps that in between calls, never during one, so a wave read in one or
   * two large calls would run at baseline speed. Each chunk's bytes are its own (not recycled):
   * one that cannot be encoded whole is read again as text. The pieces waiting are each whole
   * lines (a read of the input, after the line it ended before), and are cut where they lie
   * (the input's buffers, which are not reused), not copied together first: the encoder copies
   * each chunk into its memory anyway, and a fresh copy of a megabyte of gunzip's output is a
   * page fault every 4 KiB.
   */
  private dispatchInline(): void {
    const pieces = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const size = this.options.chunkBytes;
    for (const bytes of pieces) {
      for (let start = 0; start < bytes.length; ) {
        // Every piece ends with a line feed, so its last chunk ends with it.
        let end = start + size >= bytes.length ? bytes.length : bytes.lastIndexOf(0x0a, start + size - 1) + 1;
        if (end <= start) end = bytes.indexOf(0x0a, start + size) + 1 || bytes.length;
        const chunk = bytes.subarray(start, end);
        const seq = this.seq++;
        this.inFlight.set(seq, { bytes: chunk, results: [], arrived: 0 });
        this.shares[0]!.worker.postMessage({ seq, chunk, length: chunk.length });
        start = end;
      }
    }
  }

  private arrived(worker: number, result: ChunkResult): void {
    const chunk = this.inFlight.get(result.seq);
    if (chunk === undefined) return;
    chunk.results[worker] = result;
    chunk.arrived++;
    this.merging = this.merging
      .then(async () => {
        for (let next = this.inFlight.get(this.nextToMerge); next !== undefined && next.arrived === this.threads; next = this.inFlight.get(this.nextToMerge)) {
          this.inFlight.delete(this.nextToMerge);
          if (!this.failure) await this.merge(next.bytes, next.results);
          // Every worker has copied it and the merge is done with it (text readers may keep parts: not theirs).
          if (this.mode === 'chunks' && !this.inline) this.spare.push(next.bytes.buffer as SharedArrayBuffer);
          this.nextToMerge++;
          this.wake?.();
        }
      })
      .catch((error: Error) => this.fail(error));
  }

  /** Adds the workers' rows to the table, or hands the chunk to `records` if one could not take it all. */
  private async merge(bytes: Buffer, results: ChunkResult[]): Promise<void> {
    const failed = results.findIndex((result) => result.error !== undefined);
    if (failed >= 0) throw this.encoderFailed(this.shares[failed]!.worker.where, results[failed]!.error!, this.target.nextLine);
    const fresh = this.mode === 'chunks' && results.every((result) => result.complete) ? results.map((result, i) => freshValues(result, this.shares[i]!.columns)) : [];
    if (fresh.length > 0 && fresh.every((values) => values !== undefined)) {
      const start = this.target.rows;
      const rows = results[0]!.rows;
      results.forEach((result, i) => {
        const share = this.shares[i]!;
        if (result.rows !== rows) throw this.encoderFailed(share.worker.where, `it encoded ${result.rows} rows of a chunk of which another share encoded ${rows}`, start === 0 ? undefined : this.target.nextLine);
        share.weights.forEach((encoder, slot) => encoder.setAll(start, result.weights[slot]!));
        share.columns.forEach((encoder, slot) => {
          const values = fresh[i]![slot]!;
          if (Array.isArray(values)) encoder.append(values);
          else if (values.lengths.length > 0) {
            const texts = encoder.deferredTexts ?? new DeferredTexts();
            texts.add(values.bytes, values.lengths);
            encoder.deferTexts(texts);
          }
          encoder.setIds(start, result.ids[slot]!);
        });
      });
      this.target.addEncodedRows(rows);
      this.records.skipLines(rows);
      this.encodedRows += rows;
      if (Math.floor(start / 65_536) !== Math.floor(this.target.rows / 65_536)) this.onRows();
      return;
    }
    // From here to the end, lines are read as text (the workers' dictionaries no longer see them all).
    this.mode = 'records';
    await this.toRecords(bytes);
  }

  private toRecords(bytes: Buffer): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // A problem `records` found (a malformed line...) is the error, not a later write to it.
      const failed = () => this.failure ?? this.records.errored ?? new Error('the CSV reader stopped');
      if (this.failure !== undefined || this.records.destroyed) return reject(failed());
      this.records.write(bytes, (error) => (error ? reject(this.failure ?? this.records.errored ?? error) : resolve()));
    });
  }

  /**
   * An internal failure of an encoder, naming the encoder and where it ran, the file, and
   * the line from which it was encoding (the chunk's first) when known.
   */
  private encoderFailed(where: string, message: string, line?: number): CrosstabError {
    const { file } = this.options;
    const at = line === undefined ? '' : ` (encoding the lines from ${line})`;
    return new CrosstabError(ErrorCode.internal, `${file}: ${where} failed${at}: ${message}`, {
      file,
      ...(line === undefined ? {} : { line }),
      hint: this.inline
        ? 'Run the command again; if it keeps failing, report it with the input file. The encoder is build/csv.wasm of the installed crosstab-engine: reinstalling it, or `npm run build` in a checkout, makes it again.'
        : 'Run the command again; if it keeps failing, report it with the input file (with --threads 0 it is read on one thread).',
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.stopWorkers();
    this.wake?.();
  }

  private stopWorkers(): void {
    const shares = this.shares;
    this.shares = [];
    for (const { worker } of shares) void worker.terminate();
  }
}

/**
 * Estimated work per column for a worker, from up to 2,000 lines: every field costs about
 * the same to pass over and to look up when its value repeats; a value seen for the first
 * time costs several times that (hashing into a growing table, copying, then crossing to
 * the main thread as text), so id-like columns (ACS SERIALNO) weigh most. Without a
 * usable sample (quotes, one long line) every column weighs the same.
 */
function columnCosts(sample: Buffer, width: number): number[] {
  const costs = new Array<number>(width).fill(1);
  const end = sample.lastIndexOf(0x0a, 1 << 20);
  if (end < 0) return costs;
  const text = sample.toString('utf8', 0, end);
  if (text.includes('"')) return costs;
  const lines = text.split('\n', 2000);
  const distinct = Array.from({ length: width }, () => new Set<string>());
  for (const line of lines) {
    const fields = line.split(',');
    if (fields.length !== width) continue;
    fields.forEach((field, column) => distinct[column]!.add(field));
  }
  return distinct.map((values) => 1 + (4 * values.size) / lines.length);
}

/**
 * A worker's new values per column, or undefined if some bytes are not UTF-8: two such values
 * may read as the same text, which must be one value, so the chunk is read as text instead.
 * A column with no values as text yet keeps them as bytes (DeferredTexts: the worker numbered
 * them over their bytes, which is the numbering over texts for bytes it keeps), made strings
 * when the dictionary is first read: an id-like column the build skips (ACS SERIALNO, 1.25
 * million values) never makes them. Else as text.
 */
function freshValues(result: ChunkResult, encoders: ColumnEncoder[]): Array<string[] | ChunkResult['fresh'][number]> | undefined {
  const columns: Array<string[] | ChunkResult['fresh'][number]> = [];
  for (const [slot, fresh] of result.fresh.entries()) {
    const { bytes, lengths } = fresh;
    const encoder = encoders[slot]!;
    if (encoder.dictionary.length === 0 && DeferredTexts.keeps(bytes)) {
      columns.push(fresh);
      continue;
    }
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const values = new Array<string>(lengths.length);
    let at = 0;
    for (let i = 0; i < lengths.length; i++) {
      const text = buffer.toString('utf8', at, (at += lengths[i]!));
      if (text.includes('\ufffd')) return undefined;
      values[i] = text;
    }
    columns.push(values);
  }
  return columns;
}
