import { type Data, DataType as Types, type RecordBatch, type Vector } from 'apache-arrow';
import { isColumnar } from './arrow-columns.js';
import { defaultBuildThreads, PARALLEL_BUILD_MIN_ROWS } from './build-threads.js';
import { builtWorkerFile, dealByCost, readShares, type ShareResult } from './column-shares.js';
import type { TableEncoder } from './table-encoder.js';

/**
 * Arrow IPC file columns read in worker threads (arrow-worker.ts; see column-shares.ts):
 * each worker opens the file itself, walks its record batches and stores its share of the
 * columns as the calling thread would.
 */

/** One worker's share: the columns (by schema position) it reads from the file at `path`. */
export interface ArrowShareTask {
  path: string;
  columns: Array<{ position: number; name: string }>;
}

/**
 * A cell read one at a time (dates, booleans, timestamps: `Vector.get`, then text) costs
 * about what this many bytes of numbers cost read whole: a rough figure, enough to keep such
 * columns' weight on the calling thread, which reads them.
 */
const cellCost = 48;
/** Text is copied length-prefixed, hashed over its bytes and its new values made strings: about thrice the cost of as many bytes of numbers. */
const textCost = 3;

/**
 * Starts workers for a share of the columns of an Arrow IPC file, dealt by their estimated
 * cost in its `first` record batch, when the file is large enough (its first batch's rows
 * times `batches`) and `threads` (default: one per core, at most 4) allows. Weights,
 * columns that go cell by cell and text with about as many values as rows stay on the
 * calling thread. Returns the positions of the
 * columns handed out and their results, or undefined when everything is read here.
 */
export function handOutArrowColumns(path: string, first: RecordBatch, batches: number, encoder: TableEncoder, wanted: number[], threads: number | undefined): { positions: Set<number>; results: Promise<ShareResult[]>; stop: () => Promise<void> } | undefined {
  const workers = threads ?? (first.numRows * batches >= PARALLEL_BUILD_MIN_ROWS ? defaultBuildThreads() : 0);
  const file = workers > 0 ? builtWorkerFile('arrow-worker.js') : undefined;
  if (file === undefined) return undefined;
  const columns: Array<{ position: number; name: string; cost: number }> = [];
  let ownCost = 0;
  for (const position of wanted) {
    const vector = first.getChildAt(position)!;
    const column = encoder.columns[position];
    const cost = costOf(vector);
    if (column === undefined || !isColumnar(vector.type) || manyTexts(vector)) ownCost += cost;
    else columns.push({ position, name: column.source.name, cost });
  }
  if (columns.length === 0) return undefined;
  const [, ...shares] = dealByCost(columns, (column) => column.cost, workers + 1, ownCost);
  const tasks: ArrowShareTask[] = shares.filter((share) => share.length > 0).map((share) => ({ path, columns: share.map(({ position, name }) => ({ position, name })) }));
  if (tasks.length === 0) return undefined;
  const { results, stop } = readShares(file, tasks, 'Arrow');
  return { positions: new Set(tasks.flatMap((task) => task.columns.map((column) => column.position))), results, stop };
}

/** The estimated cost of reading `vector` (see cellCost, textCost), in bytes of numbers. */
function costOf(vector: Vector): number {
  const type = vector.type;
  if (!isColumnar(type)) return vector.length * cellCost;
  let bytes = 0;
  for (const data of vector.data as Data[]) {
    bytes += (data.values?.byteLength ?? 0) + (data.valueOffsets?.byteLength ?? 0) + (data.nullBitmap?.byteLength ?? 0);
    if (data.dictionary !== undefined) bytes += data.dictionary.data.reduce((sum, words) => sum + (words.values?.byteLength ?? 0) + (words.valueOffsets?.byteLength ?? 0), 0);
  }
  return Types.isUtf8(type) || Types.isLargeUtf8(type) ? bytes * textCost : bytes;
}

/** Rows of a text column's first batch looked at by {@link manyTexts}. */
const sampleRows = 4096;

/**
 * Whether `vector` is text with about as many distinct values as rows (an id column) in its
 * first rows: its dictionary, copied back from a worker as strings, would cost this thread
 * about what reading the column does (measured on the ACS SERIALNO column).
 */
function manyTexts(vector: Vector): boolean {
  if (!Types.isUtf8(vector.type) && !Types.isLargeUtf8(vector.type)) return false;
  const rows = Math.min(vector.length, sampleRows);
  const seen = new Set<unknown>();
  for (let row = 0; row < rows; row++) seen.add(vector.get(row));
  return seen.size > rows / 2;
}
