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
      return `NOT (${toSql(node.item)})`;
    case 'and':
    case 'or':
      return `(${node.items.map(toSql).join(node.op === 'and' ? ' AND ' : ' OR ')})`;
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
export function axisMembership(entries: readonly Bound[]): string {
  const first = entries[0];
  const single = (node: Bound): node is Extract<Bound, { op: 'ranks' }> => node.op === 'ranks' && node.ranks.length === 1;
  if (first && single(first) && entries.every((node) => single(node) && node.variable === first.variable)) {
    const ranks = entries.map((node) => (node as Extract<Bound, { op: 'ranks' }>).ranks[0]!);
    if (new Set(ranks).size === ranks.length) {
      const lookup = `indexOf([${ranks.join(', ')}], ${variableColumn(first.variable)})`;
      return `if(${lookup} > 0, [0, ${lookup}], [0])`;
    }
  }
  return `arrayFilter(x -> x >= 0, [0, ${entries.map((node, i) => `if(${toSql(node)}, ${i + 1}, -1)`).join(', ')}])`;
}
