/**
 * "Did you mean ...?" for unknown names: columns, variables, options, values.
 */

/**
 * Near matches for an unknown `name` among `candidates`, best first, at most `max`.
 *
 * Ranking: candidates equal to `name` ignoring case come first, then candidates within a
 * small Levenshtein distance of it (compared in lower case): at most 1 edit for names of
 * up to 5 characters, 2 for up to 8, 3 for longer ones. Ties keep the candidates' order;
 * duplicates are returned once. Returns `[]` when nothing is close.
 *
 * Cost is about `|name| x (max edits) x 2` per candidate, so it is fine for header names,
 * variable lists and value dictionaries of a few hundred thousand entries.
 *
 * @example suggest('pwgtp', ['SERIALNO', 'PWGTP', 'AGEP']) // ['PWGTP']
 * @example suggest('wtsps', ['wtssps', 'wtssall'])         // ['wtssps']
 */
export function suggest(name: string, candidates: Iterable<string>, max = 3): string[] {
  if (name.length === 0 || max <= 0) return [];
  const wanted = name.toLowerCase();
  const maxEdits = name.length <= 5 ? 1 : name.length <= 8 ? 2 : 3;
  const matches: { candidate: string; edits: number; order: number }[] = [];
  const seen = new Set<string>();
  let order = 0;
  for (const candidate of candidates) {
    if (seen.has(candidate)) continue;
    seen.add(candidate);
    const lower = candidate.toLowerCase();
    // -1 ranks case-insensitive equality ahead of any edit distance.
    const edits = lower === wanted ? -1 : boundedLevenshtein(wanted, lower, maxEdits);
    if (edits <= maxEdits) matches.push({ candidate, edits, order: order++ });
  }
  matches.sort((a, b) => a.edits - b.edits || a.order - b.order);
  return matches.slice(0, max).map((match) => match.candidate);
}

/**
 * Levenshtein distance between `a` and `b` (insert, delete, substitute, each cost 1),
 * or `bound + 1` as soon as it is known to exceed `bound`.
 */
export function boundedLevenshtein(a: string, b: string, bound: number): number {
  if (Math.abs(a.length - b.length) > bound) return bound + 1;
  let previous = new Uint32Array(b.length + 1);
  let current = new Uint32Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1);
      const cell = Math.min(substitution, previous[j]! + 1, current[j - 1]! + 1);
      current[j] = cell;
      if (cell < rowMin) rowMin = cell;
    }
    // Distances never shrink from one row to the next, so this row's minimum is a floor.
    if (rowMin > bound) return bound + 1;
    [previous, current] = [current, previous];
  }
  const distance = previous[b.length]!;
  return distance > bound ? bound + 1 : distance;
}
