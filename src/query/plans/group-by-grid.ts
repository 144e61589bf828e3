/**
 * The cells and margins of a group-by grid, read once from kernel memory straight into the
 * result arrays. The grid holds (nRows + 1) x (nColumns + 1) cells of (Σw, Σw², n), the
 * extra row and column holding respondents whose value is off an axis, so a row margin is
 * the sum of its whole grid line and a column margin the sum of its grid column (extra row
 * included). The additions are those of the kernel's `groupByCells`, in the same order, so
 * the margins are the same to the last bit; reading here saves writing the three arrays
 * into kernel memory and copying them out again (3.4 MB each way for a 530 x 265 table).
 */
import type { CellSums } from '../../kernel/kernel.js';
import type { TableCells } from './plan.js';

/** `grid` is the kernel's grid as f64s; `stride` is f64s per cell (kernel CELL_BYTES / 8), Σw, Σw² and n first. */
export function gridCells(grid: Float64Array, stride: number, nRows: number, nColumns: number): Pick<TableCells, 'sums' | 'sumsSq' | 'counts' | 'margins'> {
  const width = nColumns + 1;
  const cells = nRows * nColumns;
  const sums = new Float64Array(cells);
  const sumsSq = new Float64Array(cells);
  const counts = new Float64Array(cells);
  const columnSums = new Float64Array(nColumns * 3);
  const rows: CellSums[] = [];
  for (let r = 0; r <= nRows; r++) {
    let sum = 0;
    let sumSq = 0;
    let count = 0;
    let at = r * width * stride;
    for (let c = 0; c <= nColumns; c++, at += stride) {
      const x = grid[at]!;
      const xx = grid[at + 1]!;
      const n = grid[at + 2]!;
      sum += x;
      sumSq += xx;
      count += n;
      if (c < nColumns) {
        columnSums[c * 3]! += x;
        columnSums[c * 3 + 1]! += xx;
        columnSums[c * 3 + 2]! += n;
        if (r < nRows) {
          const cell = r * nColumns + c;
          sums[cell] = x;
          sumsSq[cell] = xx;
          counts[cell] = n;
        }
      }
    }
    if (r < nRows) rows.push({ weighted: sum, sumSqWeights: sumSq, respondents: count });
  }
  const columns = Array.from({ length: nColumns }, (_, c): CellSums => ({ weighted: columnSums[c * 3]!, sumSqWeights: columnSums[c * 3 + 1]!, respondents: columnSums[c * 3 + 2]! }));
  return { sums, sumsSq, counts, margins: { rows, columns } };
}
