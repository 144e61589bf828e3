import type { AxisEntry } from '../facade/types.js';
import { nameText } from '../text/expression-text.js';

/** An entry as a reader sees it (`label`), and what it is (`name`: a variable's name, an expression). */
export interface NamedLabel {
  label: string;
  name: string;
}

/**
 * The labels, each that reads as another entry's followed by its name: `Place (region)` and
 * `Place (area)` where both variables are labelled `Place`. An entry whose name is its label
 * stays as it is (the same expression twice is the same column twice).
 */
export function distinctLabels(entries: readonly NamedLabel[]): string[] {
  const readers = new Map<string, Set<string>>();
  for (const { label, name } of entries) readers.set(label, (readers.get(label) ?? new Set()).add(name));
  return entries.map(({ label, name }) => (readers.get(label)!.size > 1 && name !== label ? `${label} (${name})` : label));
}

/**
 * The items of a banner, left to right: a variable's columns (its values, net and "No answer")
 * are one item, labelled from `variableLabels` (else its name); a code or an expression column
 * is one item under its label, named by its expression.
 */
export function bannerItems(columns: readonly AxisEntry[], variableLabels: Readonly<Record<string, string>>): Array<NamedLabel & { variable?: string }> {
  const items: Array<NamedLabel & { variable?: string }> = [];
  for (const [column, entry] of columns.entries()) {
    const { variable } = entry;
    if (variable === undefined) items.push({ label: entry.label, name: entry.expr });
    else if (columns[column - 1]?.variable !== variable) items.push({ label: variableLabels[variable] ?? variable, name: nameText(variable), variable });
  }
  return items;
}

/**
 * The heading of each variable a table shows over its rows or its columns: its label
 * (`variableLabels`, else its name), followed by its name where another of the table's
 * variables reads the same (`Place (region)` over one, `Place (area)` over the other). Rows
 * and columns together: a stub and a banner variable labelled alike are told apart too.
 */
export function variableHeadings(axes: { rows: readonly AxisEntry[]; columns: readonly AxisEntry[] }, variableLabels: Readonly<Record<string, string>> = {}): (variable: string) => string {
  const variables = [...new Set([...axes.rows, ...axes.columns].flatMap((entry) => (entry.variable === undefined ? [] : [entry.variable])))];
  const headings = distinctLabels(variables.map((variable) => ({ label: variableLabels[variable] ?? variable, name: nameText(variable) })));
  const byVariable = new Map(variables.map((variable, i) => [variable, headings[i]!]));
  return (variable) => byVariable.get(variable) ?? variableLabels[variable] ?? variable;
}

/**
 * Per row of a table, the heading over it where a row variable's entries start (its text as
 * {@link variableHeadings} gives it), else undefined: the one rule of every format that heads
 * its rows.
 */
export function rowHeadings(axes: { rows: readonly AxisEntry[]; columns: readonly AxisEntry[] }, variableLabels: Readonly<Record<string, string>> = {}): Array<string | undefined> {
  const headingOf = variableHeadings(axes, variableLabels);
  return axes.rows.map(({ variable }, r) => (variable !== undefined && variable !== axes.rows[r - 1]?.variable ? headingOf(variable) : undefined));
}
