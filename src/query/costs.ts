/**
 * The planner's cost model: estimated nanoseconds of the kernel loops, used to choose between
 * a sparse list and a dense pass, and between inline and pool execution, and to cut pool
 * tasks. Rough figures from the benchmarks (README, "How it gets there"), not guarantees.
 */

/** Per 64-bit word per cell on the bitset path (AND + popcount + weight runs). */
export const NS_PER_WORD_CELL = 0.5;
/**
 * Per entry of a sparse row per cell (rowEntries / cellsTileEntries): a gathered word of the
 * column, a popcount and a multiply-add, against NS_PER_WORD_CELL per word of a dense pass.
 */
export const NS_PER_ROW_ENTRY = 1;
/**
 * Per listed respondent of a sparse-list cell: a random weight read and a bit test per
 * respondent, which is why a list is kept only when it is much shorter than the bitset.
 */
export const NS_PER_LISTED_RESPONDENT = 10;
/** Per respondent of the base per (row variable, column variable) pair on the group-by path. */
export const NS_PER_RESPONDENT = 5;
/** Per 64-bit word of one bitwise pass (AND, OR, copy) building an expression's bitset. */
export const NS_PER_WORD_OP = 0.25;
/** Per respondent of an index-column scan (a range of ranks into a bitset): ~0.45 ms over ACS's 2.7 M. */
export const NS_PER_INDEX_ENTRY = 0.2;
