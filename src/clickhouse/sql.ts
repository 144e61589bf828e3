import type { Bound } from '../query/resolve.js';

/** Column of variable `position` in the respondents table: its rank (0 = blank), as in the kernel's index column. */
export const variableColumn = (position: number): string => `v${position}`;
/** Column of weight `position` (meta.weights order). */
export const weightColumn = (position: number): string => `w${position}`;

/**
 * Compiles a bound expression to a ClickHouse condition over the rank columns. Binding
 * (parse.ts + resolve.ts) already turned values into ranks and checked groups, so the SQL
 * holds only integers and column names: blanks are rank 0 and never inside a range, which is
 * the engine's missing-value rule; NOT is the complement within all respondents, as in the kernel.
 */
export function toSql(node: Bound): string {
  return write(simplify(node));
}

/**
 * Folds constants, double negations and nested AND/OR, and merges the single values of one
 * variable under an OR into one value list. ClickHouse 18.16 rewrites such forms differently on
 * the shards than on the server that merges their blocks (its analyzer turns an OR of three or
 * more `v = k` on one column into `v IN (...)`, on the shards also inside AND), and then fails
 * with "Not found column countIf(...) in block": what reaches it must already be in the form
 * the analyzer leaves alone.
 */
export function simplify(node: Bound): Bound {
  if (node.op === 'not') {
    const item = simplify(node.item);
    if (item.op === 'all') return { op: 'none' };
    if (item.op === 'none') return { op: 'all' };
    if (item.op === 'not') return item.item;
    return { op: 'not', item };
  }
  if (node.op === 'and' || node.op === 'or') {
    const absorbing = node.op === 'and' ? 'none' : 'all';
    const neutral = node.op === 'and' ? 'all' : 'none';
    const items: Bound[] = [];
    for (const item of node.items.map(simplify)) {
      if (item.op === absorbing) return item;
      if (item.op === neutral) continue;
      if (item.op === node.op) items.push(...item.items);
      else items.push(item);
    }
    if (items.length === 0) return { op: neutral };
    const merged = node.op === 'or' ? mergeValues(items) : items;
    return merged.length === 1 ? merged[0]! : { op: node.op, items: merged };
  }
  if (node.op === 'ranks') return { op: 'ranks', variable: node.variable, ranks: [...new Set(node.ranks)].sort((a, b) => a - b) };
  return node;
}

/** The values of `node` when it is a set of single values (a value list, or a range of one value). */
function valuesOf(node: Bound): readonly number[] | undefined {
  if (node.op === 'ranks') return node.ranks;
  if (node.op === 'range' && node.lo === node.hi) return [node.lo];
  return undefined;
}

/** OR items with the single values of each variable as one value list, where its first one was. */
function mergeValues(items: readonly Bound[]): Bound[] {
  const lists = new Map<number, Set<number>>();
  for (const item of items) {
    const values = valuesOf(item);
    if (values === undefined) continue;
    const variable = (item as { variable: number }).variable;
    const list = lists.get(variable) ?? new Set<number>();
    for (const value of values) list.add(value);
    lists.set(variable, list);
  }
  const merged: Bound[] = [];
  for (const item of items) {
    const values = valuesOf(item);
    if (values === undefined) {
      merged.push(item);
      continue;
    }
    const variable = (item as { variable: number }).variable;
    const list = lists.get(variable);
    if (list === undefined) continue; // already written where the variable's first value was
    merged.push({ op: 'ranks', variable, ranks: [...list].sort((a, b) => a - b) });
    lists.delete(variable);
  }
  return merged;
}

function write(node: Bound): string {
  switch (node.op) {
    case 'all':
      return '1';
    case 'none':
      return '0';
    case 'ranks':
      return node.ranks.length === 1 ? `${variableColumn(node.variable)} = ${node.ranks[0]}` : `${variableColumn(node.variable)} IN (${node.ranks.join(', ')})`;
    case 'range':
      return node.lo === node.hi ? `${variableColumn(node.variable)} = ${node.lo}` : `${variableColumn(node.variable)} BETWEEN ${node.lo} AND ${node.hi}`;
    case 'not':
      return `NOT (${write(node.item)})`;
    case 'and':
    case 'or':
      return `(${node.items.map(write).join(node.op === 'and' ? ' AND ' : ' OR ')})`;
  }
}

/** The three sums of a cell under `condition`: respondents, Σw, Σw² (weight null: unweighted). */
export function cellAggregates(condition: string, weight: string | null, alias: string): string {
  if (weight === null) return `countIf(${condition}) AS ${alias}_n`;
  return `countIf(${condition}) AS ${alias}_n, sumIf(${weight}, ${condition}) AS ${alias}_w, sumIf(${weight} * ${weight}, ${condition}) AS ${alias}_q`;
}

/**
 * The axis entries a respondent falls in, as an array expression for arrayJoin: 0 (the margin)
 * for every respondent, then the 1-based index of each entry the respondent matches. Runs of
 * single values of one variable (a whole variable on the axis) become one indexOf() lookup
 * each; free expressions one if() each.
 */
export function axisMembership(entries: readonly Bound[], axis: 'rows' | 'columns'): string {
  // Two arrayJoin() of the same text are one array join, not a cross product (rows equal to
  // columns would give only the diagonal): the lambda's name makes the two texts differ.
  const x = axis === 'rows' ? 'r_' : 'c_';
  const members: string[] = [];
  for (let i = 0; i < entries.length; ) {
    // A run of distinct single values of one variable (a whole variable, or several) is one indexOf() lookup.
    const run = valueRun(entries, i);
    if (run.length > 1) {
      const lookup = `indexOf([${run.ranks.join(', ')}], ${variableColumn(run.variable)})`;
      members.push(`if(${lookup} > 0, toInt64(${i} + ${lookup}), -1)`);
      i += run.length;
      continue;
    }
    // An entry nobody matches is left out, one everybody matches is its bare index: no if() on a constant.
    const simple = simplify(entries[i]!);
    if (simple.op === 'all') members.push(`${i + 1}`);
    else if (simple.op !== 'none') members.push(`if(${write(simple)}, ${i + 1}, -1)`);
    i++;
  }
  return `arrayFilter(${x} -> ${x} >= 0, [0${members.map((member) => `, ${member}`).join('')}])`;
}

/** The longest run from `start` of entries that are each one value of the same variable, no value twice. */
function valueRun(entries: readonly Bound[], start: number): { variable: number; ranks: number[]; length: number } {
  const first = entries[start]!;
  if (first.op !== 'ranks' || first.ranks.length !== 1) return { variable: -1, ranks: [], length: 1 };
  const ranks = [first.ranks[0]!];
  const seen = new Set(ranks);
  for (let i = start + 1; i < entries.length; i++) {
    const node = entries[i]!;
    if (node.op !== 'ranks' || node.ranks.length !== 1 || node.variable !== first.variable || seen.has(node.ranks[0]!)) break;
    ranks.push(node.ranks[0]!);
    seen.add(node.ranks[0]!);
  }
  return { variable: first.variable, ranks, length: ranks.length };
}
