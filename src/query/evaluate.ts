import { BufferKind } from '../dataset/format.js';
import { CrosstabError, ErrorCode } from '../errors.js';
import type { LoadedDataset } from '../dataset/file/reader.js';
import type { KernelExports } from '../kernel/exports.js';
import { type CellSums, exactSums, type Kernel, type WeightVector } from '../kernel/kernel.js';
import { NS_PER_LISTED_RESPONDENT, NS_PER_WORD_CELL } from './costs.js';
import type { Bound } from './resolve.js';

/** Targets whose cells one walk of the weight runs computes (see Evaluator.cells). */
export const CELLS_PER_WALK = 16;

/** The kernel's bitset functions, which build an expression's respondents. */
export const BITSET_FUNCTIONS = ['bitsClear', 'bitsCopy', 'bitsAnd', 'bitsOr', 'bitsAndNot', 'bitsOrList', 'bitsFromRangeU8', 'bitsFromRangeU16', 'bitsFromRangeU32'] as const;
export type BitsetOps = Pick<KernelExports, (typeof BITSET_FUNCTIONS)[number]>;

/**
 * Where an expression's bitset operations go and where its scratch bitsets come from: the
 * kernel at once (inline), or a program that a pool worker runs later (cells-program.ts).
 * The same evaluation code feeds both, so both build the same bits.
 */
export interface BitsetScope {
  readonly ops: BitsetOps;
  /** A scratch bitset of `words` words. */
  take(): number;
  /** Gives back a bitset from take(). */
  give(ptr: number): void;
}

/** Up to this many values are ORed from their code containers; more are one index scan. */
const MAX_CODES_TO_OR = 8;

export interface DenseView {
  ptr: number;
  /** True when `ptr` is a scratch bitset to give back. */
  owned: boolean;
}

/**
 * Runs bound expressions on the kernel for one dataset: picks, per term, between ORing
 * code containers and scanning the variable's index column, reuses stored bitsets instead
 * of copying them, and takes single rare codes straight from their sparse lists.
 */
export class Evaluator {
  readonly words: number;
  private readonly universe: number;
  private readonly scratch: number[] = [];
  /** Kernel memory owned by this evaluator: scratch bitsets, weight helpers. */
  private owned: Array<{ ptr: number; bytes: number }> = [];
  private readonly weightVectors = new Map<string, WeightVector>();
  private readonly zeroCounts = new Map<string, number>();
  private disposed = false;
  /** Operations run now, on the calling thread's kernel, over this evaluator's scratch bitsets. */
  private readonly direct: BitsetScope;

  constructor(
    private readonly kernel: Kernel,
    private readonly data: LoadedDataset,
  ) {
    this.words = data.words;
    this.universe = this.allocate();
    kernel.exports.bitsUniverse(this.universe, this.words, data.meta.respondents);
    this.direct = { ops: kernel.exports, take: () => this.borrow(), give: (ptr) => this.giveBack(ptr) };
  }

  /** A scratch bitset, for a scope of its own; give it back with giveBack(). */
  borrow(): number {
    return this.scratch.pop() ?? this.allocate();
  }

  giveBack(ptr: number): void {
    // After dispose() the block belongs to the allocator again: it must not come back as scratch.
    if (!this.disposed) this.scratch.push(ptr);
  }

  /** The weight vector `name`, or all-ones weights when `name` is null. */
  weights(name: string | null): WeightVector {
    const key = name ?? '';
    const cached = this.weightVectors.get(key);
    if (cached) return cached;
    if (name === null) return this.vectorOf(key, this.ownedWeights((values) => values.fill(1, 0, this.data.meta.respondents)));
    const weight = this.data.meta.weights.find((candidate) => candidate.name === name)!;
    return this.vectorOf(key, this.data.buffer(weight.buffer).ptr);
  }

  /** Respondents of the file whose weight `name` is 0 (counted once per weight, nothing allocated). */
  zeroWeights(name: string): number {
    let zero = this.zeroCounts.get(name);
    if (zero === undefined) {
      const values = this.kernel.memory.f64(this.weights(name).ptr, this.data.meta.respondents);
      zero = 0;
      for (let r = 0; r < values.length; r++) if (!(values[r]! > 0)) zero++;
      this.zeroCounts.set(name, zero);
    }
    return zero;
  }

  /**
   * 1 for each respondent whose weight `name` is above 0, else 0: a raking's respondents (one
   * with base weight 0 takes no part in the calibration, as if it were not in the sample).
   */
  positiveWeights(name: string): WeightVector {
    const key = `>0:${name}`;
    const cached = this.weightVectors.get(key);
    if (cached) return cached;
    const source = this.kernel.memory.f64(this.weights(name).ptr, this.data.meta.respondents);
    return this.vectorOf(
      key,
      this.ownedWeights((ones) => {
        for (let r = 0; r < source.length; r++) if (source[r]! > 0) ones[r] = 1;
      }),
    );
  }

  /** A weight vector of this evaluator's own (zeroed, then filled by `fill`), given back at dispose(). */
  private ownedWeights(fill: (values: Float64Array) => void): number {
    const length = this.words * 64;
    const ptr = this.kernel.memory.alloc(length * 8);
    this.owned.push({ ptr, bytes: length * 8 });
    fill(this.kernel.memory.f64(ptr, length).fill(0));
    return ptr;
  }

  /** The weight vector at `ptr` with its runs and exactness, kept as `key`. */
  private vectorOf(key: string, ptr: number): WeightVector {
    const { runs, nRuns, bytes } = this.kernel.weightRuns(ptr, this.words, this.data.meta.respondents);
    this.owned.push({ ptr: runs, bytes });
    const vector = { ptr, runs, nRuns, exactSums: exactSums(this.kernel.memory.f64(ptr, this.data.meta.respondents), this.data.meta.respondents) };
    this.weightVectors.set(key, vector);
    return vector;
  }

  /** Evaluates `base` once; the returned view is given back with release(). */
  materialize(node: Bound): DenseView {
    return this.dense(node);
  }

  release(view: DenseView, scope: BitsetScope = this.direct): void {
    if (view.owned) scope.give(view.ptr);
  }

  /** Count, sum of weights and sum of squared weights of base AND target. */
  cell(base: DenseView, target: Bound, weights: WeightVector): CellSums {
    return this.cells(base, [target], weights)[0]!;
  }

  /**
   * The cells of base AND each target: single rare values by their lists, the rest in one
   * kernel walk of the weight runs per CELLS_PER_WALK targets (cellsDense) rather than one
   * walk per target. At most that many targets' bitsets are held at once.
   */
  cells(base: DenseView, targets: readonly Bound[], weights: WeightVector): CellSums[] {
    const results = new Array<CellSums>(targets.length);
    let views: DenseView[] = [];
    let positions: number[] = [];
    const walk = () => {
      try {
        const cells = this.kernel.cellsDense(base.ptr, views.map((view) => view.ptr), weights, this.words);
        positions.forEach((i, j) => (results[i] = cells[j]!));
      } finally {
        for (const view of views) this.release(view);
        views = [];
        positions = [];
      }
    };
    try {
      targets.forEach((target, i) => {
        const single = this.sparseCode(target);
        if (single) {
          results[i] = this.kernel.cellSparse(base.ptr, single.ptr, single.count, weights);
          return;
        }
        views.push(this.dense(target));
        positions.push(i);
        if (views.length === CELLS_PER_WALK) walk();
      });
      if (views.length > 0) walk();
      return results;
    } finally {
      for (const view of views) this.release(view);
    }
  }

  /**
   * A column operand for the table kernel: a stored sparse list when the term is one rare
   * value, else a dense view built through `scope` (give it back with release()).
   */
  operand(node: Bound, scope: BitsetScope = this.direct): { ptr: number; sparse: boolean; count: number; view?: DenseView } {
    const single = this.singleCode(node);
    // A list walk costs a random weight read per listed respondent, a dense pass a fixed
    // cost per word (costs.ts): keep the list only where it is the cheaper of the two.
    if (single && single.kind === BufferKind.sparse && single.count * NS_PER_LISTED_RESPONDENT < this.words * NS_PER_WORD_CELL) {
      return { ptr: single.ptr, sparse: true, count: single.count };
    }
    const view = this.dense(node, scope);
    return { ptr: view.ptr, sparse: false, count: 0, view };
  }

  /**
   * A target that is one rare value, stored as a sparse list: its cell is a walk of the list
   * (cellSparse), not a dense pass. The rule of cells(), which cell programs follow too.
   */
  sparseCode(target: Bound): { ptr: number; count: number } | undefined {
    const single = this.singleCode(target);
    return single && single.kind === BufferKind.sparse ? single : undefined;
  }

  /** A scratch bitset holding base AND node. */
  intersect(base: DenseView, node: Bound): DenseView {
    const inner = this.dense(node);
    const ptr = this.scratch.pop() ?? this.allocate();
    this.kernel.exports.bitsAnd(ptr, base.ptr, inner.ptr, this.words);
    this.release(inner);
    return { ptr, owned: true };
  }

  /** Whether a variable is multi-response (no index column; a respondent may hold several values). */
  isMulti(variable: number): boolean {
    return this.data.meta.variables[variable]!.kind === 'multi';
  }

  /** The index column of a variable: pointer and bytes per rank. */
  indexColumn(variable: number): { ptr: number; width: 1 | 2 | 4 } {
    if (this.isMulti(variable)) throw new CrosstabError(ErrorCode.internal, `indexColumn: ${this.data.meta.variables[variable]!.name} is multi-response and has no index column`);
    const index = this.data.buffer(this.data.meta.variables[variable]!.index);
    const width = index.kind === BufferKind.indexU8 ? 1 : index.kind === BufferKind.indexU16 ? 2 : 4;
    return { ptr: index.ptr, width };
  }

  /** Number of ranks (distinct values) of a variable. */
  rankCount(variable: number): number {
    return this.data.meta.variables[variable]!.values.length;
  }

  /** Respondents per rank of a variable over the whole dataset: [blank, first value, ...]. */
  rankRespondents(variable: number): number[] {
    const stored = this.data.meta.variables[variable]!;
    return [stored.missing, ...stored.counts];
  }

  /** Gives back all kernel memory of this evaluator. */
  dispose(): void {
    this.disposed = true;
    for (const { ptr, bytes } of this.owned) this.kernel.memory.release(ptr, bytes);
    this.owned = [];
    this.scratch.length = 0;
    this.weightVectors.clear();
    this.zeroCounts.clear();
  }

  /** The respondents of `node`: a stored bitset, or a scratch one built through `scope`. */
  dense(node: Bound, scope: BitsetScope = this.direct): DenseView {
    if (node.op === 'all') return { ptr: this.universe, owned: false };
    const single = this.singleCode(node);
    if (single && single.kind === BufferKind.dense) return { ptr: single.ptr, owned: false };
    const stored = this.storedRange(node);
    if (stored !== undefined) return { ptr: stored, owned: false };
    const ptr = scope.take();
    this.into(node, ptr, scope);
    return { ptr, owned: true };
  }

  private into(node: Bound, dst: number, scope: BitsetScope): void {
    const k = scope.ops;
    switch (node.op) {
      case 'all':
        return k.bitsCopy(dst, this.universe, this.words);
      case 'none':
        return k.bitsClear(dst, this.words);
      case 'ranks':
        return this.ranksInto(node.variable, node.ranks, dst, scope);
      case 'range':
        if (this.rangeBuild(node) === 'codes') {
          const ranks = Array.from({ length: node.hi - node.lo + 1 }, (_, i) => node.lo + i);
          return this.ranksInto(node.variable, ranks, dst, scope);
        }
        return this.scan(node.variable, node.lo, node.hi, dst, scope);
      case 'not': {
        const inner = this.dense(node.item, scope);
        k.bitsAndNot(dst, this.universe, inner.ptr, this.words);
        return this.release(inner, scope);
      }
      case 'and':
      case 'or': {
        this.into(node.items[0]!, dst, scope);
        for (const item of node.items.slice(1)) {
          const inner = this.dense(item, scope);
          if (node.op === 'and') k.bitsAnd(dst, dst, inner.ptr, this.words);
          else k.bitsOr(dst, dst, inner.ptr, this.words);
          this.release(inner, scope);
        }
        return;
      }
    }
  }

  private ranksInto(variable: number, ranks: number[], dst: number, scope: BitsetScope): void {
    const k = scope.ops;
    const codes = this.codesOf(variable);
    const valued = ranks.filter((rank) => rank > 0);
    const multi = this.data.meta.variables[variable]!.multi;
    // A multi-response variable has no index column: its values (any of them) and its
    // no-answer respondents are always ORed from their containers. With a range index, a
    // run of ranks costs two stored bitsets at most, so values are ORed only when they are
    // all apart from each other.
    const ored = multi !== undefined || (this.atLeastOf(variable) ? runs(ranks) === ranks.length && valued.length <= MAX_CODES_TO_OR : valued.length <= MAX_CODES_TO_OR);
    if (codes && ored) {
      k.bitsClear(dst, this.words);
      const or = (row: number) => {
        const code = this.data.buffer(row);
        if (code.kind === BufferKind.dense) k.bitsOr(dst, dst, code.ptr, this.words);
        else k.bitsOrList(dst, code.ptr, code.count);
      };
      for (const rank of valued) or(codes[rank - 1]!);
      if (valued.length < ranks.length) {
        if (multi) or(multi.noAnswer);
        else this.orScan(variable, 0, 0, dst, scope);
      }
      return;
    }
    // Runs of consecutive ranks: one index scan each.
    let first = true;
    for (let i = 0; i < ranks.length; ) {
      let j = i;
      while (j + 1 < ranks.length && ranks[j + 1] === ranks[j]! + 1) j++;
      if (first) this.scan(variable, ranks[i]!, ranks[j]!, dst, scope);
      else this.orScan(variable, ranks[i]!, ranks[j]!, dst, scope);
      first = false;
      i = j + 1;
    }
    if (first) k.bitsClear(dst, this.words);
  }

  private orScan(variable: number, lo: number, hi: number, dst: number, scope: BitsetScope): void {
    const temp = scope.take();
    this.scan(variable, lo, hi, temp, scope);
    scope.ops.bitsOr(dst, dst, temp, this.words);
    scope.give(temp);
  }

  /**
   * dst = respondents whose rank of `variable` is in [lo, hi] (0 = blank): from the range
   * index when the variable has one (rank lo or more AND NOT rank hi + 1 or more), else a
   * scan of its index column.
   */
  private scan(variable: number, lo: number, hi: number, dst: number, scope: BitsetScope): void {
    if (this.isMulti(variable)) throw new CrosstabError(ErrorCode.internal, `scan: ${this.data.meta.variables[variable]!.name} is multi-response and has no index column`);
    const atLeast = this.atLeastOf(variable);
    if (atLeast) {
      const k = scope.ops;
      const from = lo === 0 ? this.universe : this.data.buffer(atLeast[lo - 1]!).ptr;
      if (hi >= atLeast.length) k.bitsCopy(dst, from, this.words);
      else k.bitsAndNot(dst, from, this.data.buffer(atLeast[hi]!).ptr, this.words);
      return;
    }
    const index = this.data.buffer(this.data.meta.variables[variable]!.index);
    const k = scope.ops;
    const n = this.data.meta.respondents;
    if (index.kind === BufferKind.indexU8) k.bitsFromRangeU8(dst, index.ptr, this.words, n, lo, hi);
    else if (index.kind === BufferKind.indexU16) k.bitsFromRangeU16(dst, index.ptr, this.words, n, lo, hi);
    else k.bitsFromRangeU32(dst, index.ptr, this.words, n, lo, hi);
  }

  /**
   * How a range is built: `codes`, its values' stored codes ORed (a few ranks, or any range
   * of a multi-response variable, which has no index column); `index`, from the variable's
   * range index (one or two stored bitsets); `scan`, a scan of its index column.
   */
  rangeBuild(node: Extract<Bound, { op: 'range' }>): 'codes' | 'index' | 'scan' {
    if (this.isMulti(node.variable)) return 'codes';
    if (this.atLeastOf(node.variable)) return 'index';
    return node.hi - node.lo < 4 && this.codesOf(node.variable) !== undefined ? 'codes' : 'scan';
  }

  /** A range of ranks stored as one bitset of the range index (rank lo or more, up to the last rank), if it is one. */
  private storedRange(node: Bound): number | undefined {
    if (node.op !== 'range' || node.lo < 1) return undefined;
    const atLeast = this.atLeastOf(node.variable);
    return atLeast && node.hi >= atLeast.length ? this.data.buffer(atLeast[node.lo - 1]!).ptr : undefined;
  }

  private atLeastOf(variable: number): number[] | undefined {
    return this.data.meta.variables[variable]!.atLeast;
  }

  private codesOf(variable: number): number[] | undefined {
    return this.data.meta.variables[variable]!.codes;
  }

  /** The stored container of a term that is exactly one value of one variable. */
  private singleCode(node: Bound) {
    if (node.op !== 'ranks' || node.ranks.length !== 1) return undefined;
    if (node.ranks[0] === 0) {
      const multi = this.data.meta.variables[node.variable]!.multi;
      return multi ? this.data.buffer(multi.noAnswer) : undefined;
    }
    const codes = this.codesOf(node.variable);
    return codes ? this.data.buffer(codes[node.ranks[0]! - 1]!) : undefined;
  }

  private allocate(): number {
    if (this.disposed) throw new CrosstabError(ErrorCode.closed, 'the dataset is closed', { hint: 'Open it again with openDataset().' });
    const ptr = this.kernel.memory.alloc(this.words * 8);
    this.owned.push({ ptr, bytes: this.words * 8 });
    return ptr;
  }
}

/** Runs of consecutive ranks in `ranks` (in their order). */
function runs(ranks: readonly number[]): number {
  let count = 0;
  for (let i = 0; i < ranks.length; i++) if (i === 0 || ranks[i] !== ranks[i - 1]! + 1) count++;
  return count;
}
