/**
 * The Moore-Penrose inverse of a symmetric positive semi-definite matrix (row-major, n x n),
 * as R's MASS::ginv() makes it with `tol = 256 * .Machine$double.eps`: singular values (here
 * eigenvalues) up to tol times the largest count as zero. For a symmetric PSD matrix the
 * SVD is its eigendecomposition, found by cyclic Jacobi rotations, which are accurate to
 * rounding for the small matrices of calibration (one row per target category).
 */
export function pseudoInverse(matrix: Float64Array, n: number): Float64Array {
  const a = Float64Array.from(matrix);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p * n + q]! ** 2;
    if (off === 0) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q]!;
        if (apq === 0) continue;
        const theta = (a[q * n + q]! - a[p * n + p]!) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p]!;
          const akq = a[k * n + q]!;
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k]!;
          const aqk = a[q * n + k]!;
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p]!;
          const vkq = v[k * n + q]!;
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  let largest = 0;
  for (let i = 0; i < n; i++) largest = Math.max(largest, Math.abs(a[i * n + i]!));
  const tolerance = 256 * Number.EPSILON * largest;
  const inverse = new Float64Array(n * n);
  for (let k = 0; k < n; k++) {
    const value = a[k * n + k]!;
    if (!(Math.abs(value) > tolerance)) continue;
    for (let i = 0; i < n; i++) {
      const vik = v[i * n + k]! / value;
      for (let j = 0; j < n; j++) inverse[i * n + j]! += vik * v[j * n + k]!;
    }
  }
  return inverse;
}
