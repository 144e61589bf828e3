/**
 * Rank of a matrix of replicate weights (respondents × replicates), as R's
 * `qr(weights(design, "analysis"), tol = 1e-5)$rank`: the `degf()` of a replicate design is
 * this rank − 1, and `subset()` recomputes it from the rows of the domain.
 */

/** Distinct row directions kept apart before rows go straight into the Gram matrix. */
const MAX_DIRECTIONS = 4096;
/** Rows whose directions agree to this (relative) are added as one: far below R's 1e-5. */
const SAME_DIRECTION = 1e-12;

/**
 * Rank of the replicate weights over the given respondents (row numbers, or a count for
 * rows 0…count − 1): columns in order, each kept when its residual after the kept ones is at
 * least 1e-5 of its norm (LINPACK dqrdc2's limited pivoting, R's `qr(tol = 1e-5)`), here
 * through the Gram matrix XᵀX and a Cholesky factor. Replicates from a stratified design
 * span fewer dimensions than their number (NHANES JKn: 31 replicates, rank 17), and a
 * domain fewer still (JKn, strata 75–79 of NHANES: rank 6).
 *
 * Cost: rows that are multiples of one another (the respondents of one PSU under jackknife,
 * BRR or bootstrap replicates) add s² u uᵀ to XᵀX for one direction u, so they are summed
 * per direction (O(replicates) a row) and each direction enters XᵀX once. `limit` (default:
 * the number of replicates) is a rank the rows cannot exceed, such as the whole file's: the
 * rank is checked at doubling row counts and the scan stops once it reaches `limit`, so a
 * domain of a full-rank design reads a few thousand rows.
 */
export function replicateRank(columns: readonly ArrayLike<number>[], respondents: ArrayLike<number> | number, limit = columns.length): number {
  const r = columns.length;
  const count = typeof respondents === 'number' ? respondents : respondents.length;
  const rowOf = typeof respondents === 'number' ? (k: number) => k : (k: number) => respondents[k]!;
  const gram = new Float64Array(r * r);
  const directions = new RowDirections(r);
  const row = new Float64Array(r);
  let checkpoint = Math.max(256, 4 * r);
  for (let k = 0; k < count; k++) {
    const i = rowOf(k);
    for (let a = 0; a < r; a++) row[a] = columns[a]![i]!;
    if (!directions.add(row)) addOuter(gram, row, 1, r);
    if (k + 1 === checkpoint && k + 1 < count) {
      const rank = gramRank(directions.gramWith(gram), r);
      if (rank >= limit) return rank;
      checkpoint *= 2;
    }
  }
  return gramRank(directions.gramWith(gram), r);
}

/** gram += scale · x xᵀ (upper triangle). */
function addOuter(gram: Float64Array, x: Float64Array, scale: number, r: number): void {
  for (let a = 0; a < r; a++) {
    const xa = x[a]! * scale;
    if (xa === 0) continue;
    const offset = a * r;
    for (let b = a; b < r; b++) gram[offset + b]! += xa * x[b]!;
  }
}

/** Rows as s · u, u scaled so that its first non-zero entry is 1, with Σ s² per u. */
class RowDirections {
  private readonly buckets = new Map<number, number[]>();
  private readonly units: Float64Array[] = [];
  private readonly sumSquares: number[] = [];
  private readonly unit: Float64Array;

  constructor(private readonly r: number) {
    this.unit = new Float64Array(r);
  }

  /** Adds the row to its direction; false when it has none here (all zero rows are dropped: true). */
  add(row: Float64Array): boolean {
    const r = this.r;
    let pivot = 0;
    while (pivot < r && row[pivot] === 0) pivot++;
    if (pivot === r) return true;
    const s = row[pivot]!;
    let hash = pivot;
    for (let a = 0; a < r; a++) {
      const u = row[a]! / s;
      this.unit[a] = u;
      hash = Math.imul(hash ^ Math.round(u * 1048576), 16777619);
    }
    const bucket = this.buckets.get(hash);
    for (const index of bucket ?? []) {
      if (this.same(this.units[index]!)) {
        this.sumSquares[index]! += s * s;
        return true;
      }
    }
    if (this.units.length >= MAX_DIRECTIONS) return false;
    if (bucket) bucket.push(this.units.length);
    else this.buckets.set(hash, [this.units.length]);
    this.units.push(this.unit.slice());
    this.sumSquares.push(s * s);
    return true;
  }

  /** XᵀX: the rows added one by one (`direct`) plus Σ s² u uᵀ over the directions. */
  gramWith(direct: Float64Array): Float64Array {
    const gram = direct.slice();
    this.units.forEach((unit, index) => addOuter(gram, unit, this.sumSquares[index]!, this.r));
    return gram;
  }

  private same(unit: Float64Array): boolean {
    for (let a = 0; a < this.r; a++) {
      if (Math.abs(this.unit[a]! - unit[a]!) > SAME_DIRECTION * Math.max(1, Math.abs(unit[a]!))) return false;
    }
    return true;
  }
}

/** Rank of X from the upper triangle of XᵀX (r × r), column by column as dqrdc2. */
function gramRank(gram: Float64Array, r: number): number {
  // Cholesky rows of the kept columns: factor[k] · factor[j] = gram[k][j].
  const kept: number[] = [];
  const factor: Float64Array[] = [];
  for (let j = 0; j < r; j++) {
    const row = new Float64Array(kept.length);
    kept.forEach((k, position) => {
      let dot = gram[Math.min(k, j) * r + Math.max(k, j)]!;
      for (let q = 0; q < position; q++) dot -= factor[position]![q]! * row[q]!;
      row[position] = dot / factor[position]![position]!;
    });
    let residual = gram[j * r + j]!;
    for (const value of row) residual -= value * value;
    if (residual > 1e-10 * gram[j * r + j]! && residual > 0) {
      const full = new Float64Array(kept.length + 1);
      full.set(row);
      full[kept.length] = Math.sqrt(residual);
      kept.push(j);
      factor.push(full);
    }
  }
  return kept.length;
}
