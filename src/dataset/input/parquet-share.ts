import type { ColumnMetaData, FileMetaData } from 'hyparquet';
import { defaultBuildThreads, PARALLEL_BUILD_MIN_ROWS } from './build-threads.js';
import { chunkRange, unreadEncoding } from './parquet-chunk.js';
import type { FlatType } from './parquet-pages.js';
import type { FileIdentity } from './file-identity.js';
import { builtWorkerFile, dealByCost, type ShareResult, ShareWorkers } from './column-shares.js';

export type { ShareResult } from './column-shares.js';

/** Parquet columns decoded in worker threads (parquet-worker.ts; see column-shares.ts). */

/** One column chunk of a share: where its pages are and which rows they hold. */
export interface ShareChunk {
  /** 0-based row group, for messages. */
  group: number;
  firstRow: number;
  rows: number;
  start: number;
  end: number;
  meta: ColumnMetaData;
}

export interface ShareColumn {
  /** The column's position in the file's schema (the encoder's column). */
  position: number;
  name: string;
  type: FlatType;
  optional: boolean;
  /** Every row group's chunk, in order. */
  chunks: ShareChunk[];
}

export interface ShareTask {
  path: string;
  /** The file the reader opened: a worker that opens another (replaced since) refuses it. */
  identity: FileIdentity;
  rows: number;
  columns: ShareColumn[];
}

/**
 * Deals `columns` out to `parts` threads by cost (see dealByCost). A column costs its
 * uncompressed bytes plus half a byte per row: measured on the ACS file, a 13-byte id
 * column of PLAIN pages costs about 19 one-byte dictionary columns, not 32.
 */
export function dealColumns(columns: ShareColumn[], parts: number, ownCost: number): ShareColumn[][] {
  const cost = (column: ShareColumn) => column.chunks.reduce((sum, chunk) => sum + Number(chunk.meta.total_uncompressed_size) + chunk.rows / 2, 0);
  return dealByCost(columns, cost, parts, ownCost);
}

/** The built worker's file, or undefined when running from the sources (tests), where it is not built. */
export function parquetWorkerFile(): string | undefined {
  return builtWorkerFile('parquet-worker.js');
}

/** A flat column the calling thread would read: its name, position and type. */
export interface FlatColumnAt {
  position: number;
  type: FlatType;
  optional: boolean;
  /** A weight: always read on the calling thread (its errors name rows as it reads them). */
  weight: boolean;
}

/**
 * Files of this many bytes or more start their workers before the metadata is read
 * (startWorkers): a Parquet file of PARALLEL_BUILD_MIN_ROWS rows takes a few MB.
 */
const EARLY_START_BYTES = 1 << 20;

/**
 * The workers handOutColumns will most likely use, started now, before the file's metadata
 * is read (their start-up then overlaps that read): `threads` of them if given, else one
 * per core (at most 4) for a file of EARLY_START_BYTES or more; undefined otherwise, or when
 * the worker is not built. handOutColumns ends those it does not need.
 */
export function startWorkers(size: number, threads: number | undefined): ShareWorkers | undefined {
  const count = threads ?? (size >= EARLY_START_BYTES ? defaultBuildThreads() : 0);
  const file = count > 0 ? parquetWorkerFile() : undefined;
  return file === undefined ? undefined : new ShareWorkers(file, count, 'Parquet');
}

/**
 * Gives worker threads a share of `flat`'s columns (those whose every chunk this decoder
 * reads) when the file is large enough and `threads` (default: one per core, at most 4)
 * allows; the calling thread keeps a share. The workers are `started` (startWorkers) when
 * they are as many as needed, else started here; those not needed are ended. Returns the
 * columns handed out and their results, or undefined when everything is read on the
 * calling thread.
 */
export function handOutColumns(path: string, identity: FileIdentity, metadata: FileMetaData, flat: Map<string, FlatColumnAt>, threads: number | undefined, started?: ShareWorkers): { names: Set<string>; results: Promise<ShareResult[]>; stop: () => Promise<void> } | undefined {
  const rows = Number(metadata.num_rows);
  const workers = threads ?? (rows >= PARALLEL_BUILD_MIN_ROWS ? defaultBuildThreads() : 0);
  const file = workers > 0 ? parquetWorkerFile() : undefined;
  if (file === undefined) {
    void started?.stop();
    return undefined;
  }
  const columns = new Map<string, ShareColumn>();
  const refused = new Set<string>();
  let ownCost = 0;
  let firstRow = 0;
  metadata.row_groups.forEach((group, index) => {
    const groupRows = Number(group.num_rows);
    const seen = new Set<string>();
    for (const chunk of group.columns) {
      const meta = chunk.meta_data;
      const name = meta?.path_in_schema.join('.') ?? '';
      const column = flat.get(name);
      if (meta === undefined || column === undefined) continue;
      seen.add(name);
      // Text without a dictionary page has many distinct values (an id column): copying its
      // strings back from a worker would cost this thread about what reading them does.
      const manyTexts = column.type === 'BYTE_ARRAY' && meta.dictionary_page_offset === undefined;
      if (column.weight || manyTexts || chunk.file_path !== undefined || unreadEncoding(meta) !== undefined) {
        refused.add(name);
        ownCost += Number(meta.total_uncompressed_size) + groupRows / 2;
        continue;
      }
      const share = columns.get(name) ?? { position: column.position, name, type: column.type, optional: column.optional, chunks: [] };
      columns.set(name, share);
      share.chunks.push({ group: index, firstRow, rows: groupRows, ...chunkRange(meta), meta });
    }
    // A column without a chunk in some row group is read here, where that is refused as it always was.
    for (const name of flat.keys()) if (!seen.has(name)) refused.add(name);
    firstRow += groupRows;
  });
  const handed = [...columns.values()].filter((column) => !refused.has(column.name));
  if (handed.length === 0) {
    void started?.stop();
    return undefined;
  }
  const [, ...shares] = dealColumns(handed, workers + 1, ownCost);
  const tasks = shares.filter((share) => share.length > 0).map((share) => ({ path, identity, rows, columns: share }));
  let threadsUsed = started;
  if (threadsUsed === undefined || threadsUsed.count < tasks.length) {
    void started?.stop();
    threadsUsed = new ShareWorkers(file, tasks.length, 'Parquet');
  }
  const results = threadsUsed.give(tasks);
  return { names: new Set(tasks.flatMap((task) => task.columns.map((column) => column.name))), results, stop: () => threadsUsed.stop() };
}
