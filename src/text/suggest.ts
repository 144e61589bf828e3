/**
 * "Did you mean ...?" for unknown names: columns, variables, options, values.
 */

/**
 * Longest name that gets suggestions: beyond it, a name is not a typo of something a person
 * would type, and comparing it would only cost time.
 */
export const MAX_SUGGESTED_LENGTH = 200;

/** Shortest name (or candidate) the abbreviation and shared-prefix rules apply to. */
const MIN_PREFIX = 4;
/** Longest shorter side the abbreviation rule compares (keeps its cost per candidate small). */
const MAX_PREFIX = 32;

/**
 * Near matches for an unknown `name` among `candidates`, best first, at most `max`.
 *
 * Ranking (all compared in lower case): candidates equal to `name` ignoring case come first;
 * then candidates within a small optimal-string-alignment distance (insert, delete,
 * substitute, or swap two neighbours: `yaer` is one edit from `year`), at most 1 edit for
 * names of up to 5 characters, 2 for up to 8, 3 for longer ones; then abbreviations and
 * shared stems: the shorter of the two (4 characters or more) is within one edit of the
 * longer one's start (`relgion` for `relig`), or both start with the same 4 or more
 * characters, at least half of each (`wtssall` for `wtssps`). Ties keep the candidates'
 * order; duplicates are returned once. Returns `[]` when nothing is close, and for names
 * longer than {@link MAX_SUGGESTED_LENGTH}.
 *
 * Cost is at most `min(|name|, 200) x (2 x max edits + 1)` steps per candidate (a banded
 * distance), so it is fine for value dictionaries of a few hundred thousand entries.
 *
 * @example suggest('pwgtp', ['SERIALNO', 'PWGTP', 'AGEP']) // ['PWGTP']
 * @example suggest('wtsps', ['wtssps', 'wtssall'])         // ['wtssps']
 */
export function suggest(name: string, candidates: Iterable<string>, max = 3): string[] {
  if (name.length === 0 || name.length > MAX_SUGGESTED_LENGTH || max <= 0) return [];
  const wanted = name.toLowerCase();
  const maxEdits = maxEditsFor(name.length);
  const matches: { candidate: string; rank: number; order: number }[] = [];
  const seen = new Set<string>();
  let order = 0;
  for (const candidate of candidates) {
    if (seen.has(candidate)) continue;
    seen.add(candidate);
    if (candidate.length > MAX_SUGGESTED_LENGTH + maxEdits) continue;
    const rank = nearness(wanted, candidate.toLowerCase(), maxEdits);
    if (rank !== undefined) matches.push({ candidate, rank, order: order++ });
  }
  matches.sort((a, b) => a.rank - b.rank || a.order - b.order);
  return matches.slice(0, max).map((match) => match.candidate);
}

function maxEditsFor(length: number): number {
  return length <= 5 ? 1 : length <= 8 ? 2 : 3;
}

/** How near `candidate` is to `wanted` (lower = nearer), or undefined when it is not near. */
function nearness(wanted: string, candidate: string, maxEdits: number): number | undefined {
  if (candidate === wanted) return -1;
  const edits = boundedDistance(wanted, candidate, maxEdits);
  if (edits <= maxEdits) return edits;
  const [short, long] = wanted.length <= candidate.length ? [wanted, candidate] : [candidate, wanted];
  if (short.length < MIN_PREFIX || short.length > MAX_PREFIX) return undefined;
  // Past every plain edit match: an abbreviation, then a shared stem.
  if (boundedDistance(short, long.slice(0, short.length), 1) <= 1) return maxEdits + 1;
  let shared = 0;
  while (shared < short.length && short.charCodeAt(shared) === long.charCodeAt(shared)) shared++;
  return shared >= MIN_PREFIX && shared * 2 >= long.length ? maxEdits + 2 : undefined;
}

/** Rows of the distance table, reused from call to call (one thread runs one comparison at a time). */
let scratch = new Uint32Array(3 * (MAX_SUGGESTED_LENGTH + 8));

/**
 * Optimal string alignment distance between `a` and `b` (insert, delete, substitute, or swap
 * two adjacent characters, each cost 1), or `bound + 1` as soon as it is known to exceed
 * `bound`. Only cells within `bound` of the diagonal are computed (any path leaving that
 * band costs more than `bound`), so the cost is `|a| x (2 x bound + 1)`, not `|a| x |b|`.
 */
export function boundedDistance(a: string, b: string, bound: number): number {
  if (Math.abs(a.length - b.length) > bound) return bound + 1;
  const over = bound + 1;
  const width = b.length + 2;
  if (scratch.length < 3 * width) scratch = new Uint32Array(3 * width);
  scratch.fill(over, 0, 3 * width);
  let before = scratch.subarray(0, width);
  let previous = scratch.subarray(width, 2 * width);
  let current = scratch.subarray(2 * width, 3 * width);
  for (let j = 0; j <= Math.min(b.length, bound); j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - bound);
    const to = Math.min(b.length, i + bound);
    current[from - 1] = from === 1 && i <= bound ? i : over;
    let rowMin = current[from - 1]!;
    for (let j = from; j <= to; j++) {
      const same = a.charCodeAt(i - 1) === b.charCodeAt(j - 1);
      let cell = Math.min(previous[j - 1]! + (same ? 0 : 1), previous[j]! + 1, current[j - 1]! + 1);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) {
        cell = Math.min(cell, before[j - 2]! + 1);
      }
      current[j] = Math.min(cell, over);
      if (current[j]! < rowMin) rowMin = current[j]!;
    }
    // The cell past the band's right edge was never filled in this row: it is out of reach.
    if (to + 1 <= b.length) current[to + 1] = over;
    // Distances never shrink from one row to the next, so this row's minimum is a floor.
    if (rowMin > bound) return over;
    [before, previous, current] = [previous, current, before];
  }
  const distance = previous[b.length]!;
  return distance > bound ? over : distance;
}
