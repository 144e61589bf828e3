import { CrosstabError, ErrorCode } from '../errors.js';
import type { CellSums, Kernel, WeightVector } from '../kernel/kernel.js';
import { BITSET_FUNCTIONS, type BitsetOps, type BitsetScope, CELLS_PER_WALK, type DenseView, type Evaluator } from './evaluate.js';
import type { Bound } from './resolve.js';

/**
 * Kernel functions a cells program calls, by position: the pool hands the same list to its
 * workers (src/pool/worker.js), so a program carries numbers only.
 */
export const PROGRAM_FUNCTIONS = [...BITSET_FUNCTIONS, 'cellsDense', 'cellSparse'] as const;
const FUNCTION_INDEX = new Map<string, number>(PROGRAM_FUNCTIONS.map((name, i) => [name, i]));

/** `calls` as a program (see CellsProgram), keeping no results; every function must be one of PROGRAM_FUNCTIONS. */
export function encodeCalls(calls: ReadonlyArray<{ fn: string; args: readonly number[] }>): Uint32Array {
  const code: number[] = [];
  for (const { fn, args } of calls) {
    const index = FUNCTION_INDEX.get(fn);
    if (index === undefined) throw new CrosstabError(ErrorCode.internal, `encodeCalls: ${fn} is not a program function`);
    code.push(index, args.length, ...args, 0);
  }
  return Uint32Array.from(code);
}

/** A recording scope of one program; settle() once that program no longer runs. */
export interface ProgramScope extends BitsetScope {
  settle(): void;
}

/**
 * The scratch bitsets of one crosstab() call on the pool. Programs are recorded on the
 * calling thread and run later on a worker, so a bitset that a scope gives back is reused
 * only by later steps of the same program (which run after it, in order). The bitsets a
 * scope took serve the call's next programs once it has settled, and go back to the
 * evaluator when the call ends: never while a worker may still touch them.
 */
export class CallScratch {
  private readonly taken: number[] = [];
  private readonly idle: number[] = [];

  constructor(private readonly evaluator: Evaluator) {}

  /** A scope whose operations are recorded into `program`. */
  scope(program: CellsProgram): ProgramScope {
    const free: number[] = [];
    const mine: number[] = [];
    return {
      ops: program.ops,
      take: () => {
        const reused = free.pop();
        if (reused !== undefined) return reused;
        const ptr = this.idle.pop() ?? this.borrow();
        mine.push(ptr);
        return ptr;
      },
      give: (ptr) => free.push(ptr),
      settle: () => {
        this.idle.push(...mine);
        mine.length = 0;
        free.length = 0;
      },
    };
  }

  /** Gives every bitset back to the evaluator: call it once no program of the call runs. */
  dispose(): void {
    for (const ptr of this.taken) this.evaluator.giveBack(ptr);
    this.taken.length = 0;
    this.idle.length = 0;
  }

  private borrow(): number {
    const ptr = this.evaluator.borrow();
    this.taken.push(ptr);
    return ptr;
  }
}

/**
 * Kernel calls recorded on the calling thread for a pool worker to run: the bitsets of a
 * crosstab()'s base and targets (built by the Evaluator's own code, through a recording
 * scope) and their cells (the kernel calls Evaluator.cells makes, in the same groups). A
 * worker runs the same kernel over the same memory, so its cells equal the inline ones to
 * the last bit. Encoded as u32s: function index, argument count, arguments, keep flag (1:
 * the worker returns the call's result).
 */
export class CellsProgram {
  readonly ops: BitsetOps;
  private readonly code: number[] = [];
  /** Per cell: where its (sum, sum of squares, count) land, and whether the count comes back as a kept result. */
  private readonly cells: Array<{ at: number; keptCount: number }> = [];
  private kept = 0;
  private block: { ptr: number; bytes: number } | undefined;

  constructor(
    private readonly kernel: Kernel,
    private readonly words: number,
  ) {
    const record = (name: string) => (...args: number[]) => this.call(name, args, false);
    this.ops = Object.fromEntries(BITSET_FUNCTIONS.map((name) => [name, record(name)])) as unknown as BitsetOps;
  }

  /**
   * Records the cells of base AND each target, with Evaluator.cells' rule: a target that is
   * one rare value walks its list (cellSparse); the others go CELLS_PER_WALK at a time
   * through one cellsDense walk.
   */
  recordCells(evaluator: Evaluator, scope: BitsetScope, base: DenseView, targets: readonly Bound[], weights: WeightVector): void {
    const { layout, memory } = this.kernel;
    const walks = Math.ceil(targets.length / CELLS_PER_WALK);
    const pointerBytes = Math.ceil((CELLS_PER_WALK * layout.pointerBytes) / 8) * 8;
    const bytes = targets.length * layout.cellBytes + walks * pointerBytes;
    const ptr = memory.alloc(bytes, false);
    this.block = { ptr, bytes };
    let next = ptr;
    let pointers = ptr + targets.length * layout.cellBytes;
    for (let from = 0; from < targets.length; from += CELLS_PER_WALK) {
      const views: DenseView[] = [];
      const walked: Array<{ at: number; keptCount: number }> = [];
      for (const target of targets.slice(from, from + CELLS_PER_WALK)) {
        const sparse = evaluator.sparseCode(target);
        if (sparse) {
          this.cells.push({ at: next, keptCount: this.kept });
          this.call('cellSparse', [base.ptr, sparse.ptr, sparse.count, weights.ptr, next], true);
          next += layout.cellBytes;
          continue;
        }
        views.push(evaluator.dense(target, scope));
        const cell = { at: 0, keptCount: -1 };
        walked.push(cell);
        this.cells.push(cell);
      }
      if (views.length === 0) continue;
      // cellsDense writes its cells one after the other: they take consecutive slots.
      walked.forEach((cell, j) => (cell.at = next + j * layout.cellBytes));
      new Uint32Array(memory.memory.buffer, pointers, views.length).set(views.map((view) => view.ptr));
      this.call('cellsDense', [base.ptr, pointers, views.length, weights.ptr, weights.runs, weights.nRuns, this.words, next], false);
      next += views.length * layout.cellBytes;
      pointers += pointerBytes;
      for (const view of views) evaluator.release(view, scope);
    }
  }

  /** The program, for a worker. */
  encode(): Uint32Array {
    return Uint32Array.from(this.code);
  }

  /** The recorded cells, once the program has run; `kept` are the results the worker returned. */
  read(kept: readonly number[]): CellSums[] {
    const { memory, layout } = this.kernel;
    const doubles = layout.cellBytes / 8;
    return this.cells.map(({ at, keptCount }) => {
      const sums = new Float64Array(memory.memory.buffer, at, doubles);
      return { respondents: keptCount >= 0 ? kept[keptCount]! : sums[2]!, weighted: sums[0]!, sumSqWeights: sums[1]! };
    });
  }

  /** Gives back the program's result memory: call it once the program has settled. */
  dispose(): void {
    if (this.block) this.kernel.memory.release(this.block.ptr, this.block.bytes);
    this.block = undefined;
  }

  private call(name: string, args: readonly number[], keep: boolean): void {
    this.code.push(FUNCTION_INDEX.get(name)!, args.length, ...args, keep ? 1 : 0);
    if (keep) this.kept++;
  }
}
