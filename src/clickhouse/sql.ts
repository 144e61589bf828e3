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
 * Folds constants, double negations and nested AND/OR. ClickHouse 18.16 rewrites such forms
 * differently on the shards than on the server that merges their blocks, and then fails with
 * "Not found column countIf(not(not(...)))": what reaches it must already be in normal form.
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
    return items.length === 1 ? items[0]! : { op: node.op, items };
  }
  return node;
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
 * The axis an entry of a table falls on, as an array expression for arrayJoin: 0 (the margin)
 * for every respondent, then the 1-based index of each entry the respondent matches. A whole
 * variable's values (single ranks of one variable, all distinct) become one indexOf() lookup;
 * free expressions one if() each.
 */
export function axisMembership(entries: readonly Bound[], axis: 'rows' | 'columns'): string {
  // Two arrayJoin() of the same text are one array join, not a cross product (rows equal to
  // columns would give only the diagonal): the lambda's name makes the two texts differ.
  const x = axis === 'rows' ? 'r_' : 'c_';
  const first = entries[0];
  const single = (node: Bound): node is Extract<Bound, { op: 'ranks' }> => node.op === 'ranks' && node.ranks.length === 1;
  if (first && single(first) && entries.every((node) => single(node) && node.variable === first.variable)) {
    const ranks = entries.map((node) => (node as Extract<Bound, { op: 'ranks' }>).ranks[0]!);
    if (new Set(ranks).size === ranks.length) {
      const lookup = `indexOf([${ranks.join(', ')}], ${variableColumn(first.variable)})`;
      return `arrayFilter(${x} -> ${x} >= 0, if(${lookup} > 0, [0, ${lookup}], [0]))`;
    }
  }
  // An entry nobody matches is left out, one everybody matches is its bare index: no if() on a constant.
  const members = entries.flatMap((node, i) => {
    const simple = simplify(node);
    if (simple.op === 'none') return [];
    return simple.op === 'all' ? [`${i + 1}`] : [`if(${write(simple)}, ${i + 1}, -1)`];
  });
  return `arrayFilter(${x} -> ${x} >= 0, [0${members.map((member) => `, ${member}`).join('')}])`;
}
