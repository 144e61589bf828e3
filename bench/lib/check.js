// Answers of all peers must agree before anything is timed: weighted sums to
// 1e-9 relative, respondent counts exactly (FastBitSet.js's "something is off").

export const RELATIVE_TOLERANCE = 1e-9;

const sameWeight = (a, b) => a === b || Math.abs(a - b) <= RELATIVE_TOLERANCE * Math.max(Math.abs(a), Math.abs(b));

/**
 * Throws `peers disagree on S3 cell (r,c): ...` at the first differing cell.
 * @param shape the shape as run (rows may be a sample; rowIndexes maps back)
 * @param reference {peer, answer} and other {peer, answer}
 */
export function checkAgreement(shape, reference, other) {
  const C = shape.columns.length;
  const n = shape.rows.length * C;
  for (const [who, answer] of [[reference.peer, reference.answer], [other.peer, other.answer]]) {
    if (answer.weighted.length !== n || answer.respondents.length !== n) {
      throw new Error(`peers disagree on ${shape.id}: ${who} returned ${answer.weighted.length} cells, expected ${shape.rows.length} x ${C} = ${n}`);
    }
  }
  for (let k = 0; k < n; k++) {
    const a = reference.answer, b = other.answer;
    if (a.respondents[k] === b.respondents[k] && sameWeight(a.weighted[k], b.weighted[k])) continue;
    const r = Math.floor(k / C), c = k % C;
    const fullRow = shape.rowIndexes ? shape.rowIndexes[r] : r;
    throw new Error(
      `peers disagree on ${shape.id} cell (${fullRow},${c}) [base ${shape.base.text} AND ${shape.rows[r].text} AND ${shape.columns[c].text}]: ` +
      `${reference.peer} weighted=${a.weighted[k]} respondents=${a.respondents[k]}; ` +
      `${other.peer} weighted=${b.weighted[k]} respondents=${b.respondents[k]}`,
    );
  }
}

/** Totals of an answer, printed so a reader can sanity-check the data. */
export function answerSummary(answer) {
  let weighted = 0, respondents = 0, nonEmpty = 0;
  for (let k = 0; k < answer.respondents.length; k++) {
    weighted += answer.weighted[k];
    respondents += answer.respondents[k];
    if (answer.respondents[k] > 0) nonEmpty++;
  }
  return { cells: answer.respondents.length, nonEmptyCells: nonEmpty, weightedTotal: weighted, respondentsTotal: respondents };
}
