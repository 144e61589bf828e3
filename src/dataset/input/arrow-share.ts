import { type DataType, DataType as Types, type Field, type Vector } from 'apache-arrow';
import { isColumnar } from './arrow-columns.js';
import { defaultBuildThreads, PARALLEL_BUILD_MIN_ROWS } from './build-threads.js';
import { builtWorkerFile, dealByCost, type ShareResult, ShareWorkers } from './column-shares.js';
import type { TableEncoder } from './table-encoder.js';
import type { FileIdentity } from './file-identity.js';
import type { ColumnPlan } from './arrow-direct.js';

/**
 * Arrow IPC file columns read in worker threads (arrow-worker.ts; see column-shares.ts):
 * each worker opens the file itself, walks its record batches and stores its share of the
 * columns as the calling thread would.
 */

/** One worker's share: the columns (by schema position) it reads from the file at `path`. */
export interface ArrowShareTask {
  path: string;
  /** The file the reader opened: a worker that opens another (replaced since) refuses it. */
  identity: FileIdentity;
  columns: Array<{ position: number; name: string }>;
  /** The file's rows, when its messages gave them: the columns are made that long at once. */
  rows?: number;
  /**
   * Per record batch, its rows and where each of `columns` lies in the file (in their order):
   * the worker reads them straight into WebAssembly memory and does not load apache-arrow.
   * Without it, the worker reads the file through apache-arrow.
   */
  plans?: Array<{ rows: number; columns: ColumnPlan[] }>;
  /** The id-like bound at which a text column not named in `readWhole` stops being numbered (see PlainTextColumn), as on the calling thread. */
  idLike?: { stopAbove: number; readWhole: string[] };
  /**
   * With `plans`: `columns` are a queue shared by every worker given the same task, costliest
   * first, and `claim[0]` (shared memory) the index of the next column not yet taken: each
   * worker takes the next (Atomics.add) until none is left, so the workers finish together
   * whatever the columns really cost. Without it, the worker reads all of `columns`.
   */
  claim?: Int32Array;
}

/**
 * A cell read one at a time (dates, booleans, timestamps: `Vector.get`, then text) costs
 * about what this many bytes of numbers cost read whole: a rough figure, enough to keep such
 * columns' weight on the calling thread, which reads them.
 */
const cellCost = 48;
/**
 * Utf8 text is hashed over its bytes, new values kept: about five times the cost of as many
 * bytes of numbers (numbered in WebAssembly a value at a time), measured on the ACS file's
 * text columns (3.4 to 6.5 times); an id-like column (SERIALNO) is about six times, up to its
 * id-like stop. (A dictionary column costs its indices: its dictionary is read once per file.)
 */
const textCost = 5;
/** A weight column is read through apache-arrow and converted to doubles: about thrice the cost of its bytes numbered. */
const weightCost = 3;

/**
 * Starts workers for a share of the columns of an Arrow IPC file, dealt by their estimated
 * cost in its first record batch (`first`: its rows, the bytes of each field's buffers),
 * when the file is large enough (the first batch's rows times `batches`) and `threads`
 * (default: one per core, at most 4) allows. Weights, columns that go cell by cell and
 * LargeUtf8 text with about as many values as rows (`manyTexts`, given a column's position:
 * its dictionary would come back as strings) stay on the calling thread. Utf8 text goes to a
 * worker even so: its values come back as bytes (DeferredTexts), and the worker stops an
 * id-like column where this thread would (`idLike`). Returns the positions of the columns
 * handed out and their results, or undefined when everything is read here. The workers
 * are `started` ones (startArrowWorkers) when they are as many as needed, else started
 * here; those `started` and not needed are ended.
 */
export async function handOutArrowColumns(path: string, identity: FileIdentity, first: { rows: number; bytes: Map<number, number> }, batches: number, fields: Field[], encoder: TableEncoder, wanted: number[], threads: number | undefined, manyTexts: (position: number) => Promise<boolean>, rows?: number, plan?: (positions: number[]) => Promise<ArrowShareTask['plans']>, idLike?: ArrowShareTask['idLike'], started?: ShareWorkers): Promise<{ positions: Set<number>; results: Promise<ShareResult[]>; stop: () => Promise<void> } | undefined> {
  const workers = threads ?? (first.rows * batches >= PARALLEL_BUILD_MIN_ROWS ? defaultBuildThreads() : 0);
  const file = workers > 0 ? builtWorkerFile('arrow-worker.js') : undefined;
  const unused = (): undefined => {
    void started?.stop();
    return undefined;
  };
  if (file === undefined) return unused();
  const columns: Array<{ position: number; name: string; cost: number }> = [];
  let ownCost = 0;
  for (const position of wanted) {
    const type = fields[position]!.type as DataType;
    const column = encoder.columns[position];
    const bytes = first.bytes.get(position) ?? 0;
    const text = Types.isUtf8(type) || Types.isLargeUtf8(type);
    const cost = !isColumnar(type) ? first.rows * cellCost : text ? bytes * textCost : column === undefined ? bytes * weightCost : bytes;
    if (column === undefined || !isColumnar(type) || (Types.isLargeUtf8(type) && (await manyTexts(position)))) ownCost += cost;
    else columns.push({ position, name: column.source.name, cost });
  }
  if (columns.length === 0) return unused();
  const [, ...shares] = dealByCost(columns, (column) => column.cost, workers + 1, ownCost);
  const dealt = shares.filter((share) => share.length > 0);
  if (dealt.length === 0) return unused();
  const common = { path, identity, ...(rows === undefined ? {} : { rows }), ...(idLike === undefined ? {} : { idLike }) };
  // The workers' columns, costliest first: read from one queue when each can be read without apache-arrow (planned).
  const queue = dealt.flat().sort((a, b) => b.cost - a.cost || a.position - b.position);
  const queuePlans = await plan?.(queue.map((column) => column.position));
  let tasks: ArrowShareTask[];
  if (queuePlans !== undefined) {
    const task: ArrowShareTask = { ...common, columns: queue.map(({ position, name }) => ({ position, name })), plans: queuePlans, claim: new Int32Array(new SharedArrayBuffer(4)) };
    tasks = dealt.map(() => task);
  } else {
    // Some column needs apache-arrow: each worker reads its dealt share, planned when its columns can be.
    tasks = dealt.map((share) => ({ ...common, columns: share.map(({ position, name }) => ({ position, name })) }));
    for (const task of tasks) {
      const plans = await plan?.(task.columns.map((column) => column.position));
      if (plans !== undefined) task.plans = plans;
    }
  }
  let threadsUsed = started;
  if (threadsUsed === undefined || threadsUsed.count < tasks.length) {
    void started?.stop();
    threadsUsed = new ShareWorkers(file, tasks.length, 'Arrow');
  }
  const results = threadsUsed.give(tasks);
  return { positions: new Set(queue.map((column) => column.position)), results, stop: () => threadsUsed.stop() };
}

/** Rows of a text column's first batch looked at by {@link manyDistinct}. */
const sampleRows = 4096;

/**
 * Whether a text vector has about as many distinct values as rows (an id column) in its
 * first rows: its dictionary, copied back from a worker as strings, would cost the calling
 * thread about what reading the column does (measured on the ACS SERIALNO column).
 */
export function manyDistinct(vector: Vector): boolean {
  const rows = Math.min(vector.length, sampleRows);
  const seen = new Set<unknown>();
  for (let row = 0; row < rows; row++) seen.add(vector.get(row));
  return seen.size > rows / 2;
}
