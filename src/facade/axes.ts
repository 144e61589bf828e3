import { AXIS_LIMIT } from '../dataset/format.js';
import { ErrorCode, fieldError } from '../errors.js';
import { suggest } from '../text/suggest.js';
import { nameText, numberText, quoteText, shorten, valueExpression, valueText } from '../text/expression-text.js';
import { MAX_TERMS, parseExpression } from '../query/parse.js';
import { describeValue, invalidOption, requireObject } from './options.js';
import type { AxisEntry, AxisItem, DatasetInfo, MissingMode, PercentBase, VariableInfo } from './types.js';
import type { Expr } from '../query/ast.js';

/** Most entries one table axis takes (AXIS_LIMIT, src/dataset/format.ts). */
export const MAX_AXIS = AXIS_LIMIT;

export { valueExpression } from '../text/expression-text.js';

/**
 * Expands whole variables into one entry per value and labels every entry. With
 * `withMissing`, a variable that has blanks in the file also gets its "No answer" entry
 * (`VAR=NA`, labelled with the dataset's missingLabel) after its values; the caller drops
 * it when the base has none of those respondents.
 */
export function expandAxis(items: unknown, option: 'rows' | 'columns', info: DatasetInfo, withMissing = false, allowed?: readonly string[]): AxisEntry[] {
  // With allowed groups, another group's variable is one the dataset does not have (as the resolver treats it).
  const variables = allowed === undefined ? info.variables : info.variables.filter((candidate) => allowed.includes(candidate.group));
  if (!Array.isArray(items) || items.length === 0) {
    throw invalidOption(option, 'must be a non-empty array of expressions or {variable}', `Pass e.g. ${option}: [{ variable: "sex" }, "degree=3..4"].`);
  }
  const entries: AxisEntry[] = [];
  // An index loop, not forEach(): forEach skips the holes of a sparse array (new Array(2)).
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as AxisItem;
    const where = `${option}[${i}]`;
    if (typeof item === 'string' && item.trim() !== '') {
      entries.push({ label: codeLabel(info, item) ?? item, expr: item });
    } else if (typeof item === 'object' && item !== null && 'variable' in item && typeof item.variable === 'string') {
      requireObject(item, where, ['variable']);
      const variable = variables.find((candidate) => candidate.name === item.variable) ?? quotedVariable(variables, item.variable);
      if (!variable) {
        const suggestions = suggest(item.variable, variables.map((v) => v.name));
        const problem = `unknown variable ${quoteText(shorten(item.variable))}${suggestions.length ? `; did you mean ${suggestions.map(quoteText).join(', ')}?` : ''}`;
        const hint = 'Use a variable of the dataset; names are case-sensitive.';
        throw fieldError(ErrorCode.unknownVariable, where, problem, { suggestions, hint, listed: 'variables' }, ': ');
      }
      if (!variable.values) {
        throw invalidOption(where, `expands variable ${variable.name}, which has ${variable.distinct} values`, `Use ranges such as "${nameText(variable.name)}=lo..hi" instead.`);
      }
      const multi = variable.kind === 'multi' ? { multi: true as const } : {};
      for (const value of variable.values) {
        entries.push({ label: value.label ?? value.value, expr: valueExpression(variable.name, value.value), variable: variable.name, value: value.value, ...multi });
      }
      if (variable.kind === 'multi') {
        const net = netEntry(variable);
        if (net) entries.push(net);
      }
      if (withMissing && variable.missing > 0) entries.push({ ...missingEntry(variable.name, info.missingLabel), ...multi });
    } else if (typeof item === 'object' && item !== null && 'expr' in item && typeof item.expr === 'string' && item.expr.trim() !== '') {
      requireObject(item, where, ['expr', 'label']);
      if ('label' in item && item.label !== undefined && typeof item.label !== 'string') throw invalidOption(`${where}.label`, 'must be a string', 'Leave it out to label the entry with its expression.');
      const label = 'label' in item && typeof item.label === 'string' ? item.label : (codeLabel(info, item.expr) ?? item.expr);
      entries.push({ label, expr: item.expr });
    } else {
      throw invalidOption(where, 'must be an expression string, {expr, label?} or {variable}', 'Pass e.g. "sex=2" or { variable: "sex" }.');
    }
  }
  if (entries.length > MAX_AXIS) {
    throw invalidOption(option, `expands to ${entries.length} entries; at most ${MAX_AXIS} are allowed`, 'Split the table.');
  }
  return entries;
}

/** Label of a multi-response variable's net entry. */
export const NET_LABEL = 'Any (net)';

/**
 * The net entry of a multi-response variable: its respondents holding any of its values
 * (`VAR=v1,v2,...`, or `VAR=lo..hi` for numbers), or none when it has no values or more than
 * an expression takes.
 */
function netEntry(variable: VariableInfo): AxisEntry | undefined {
  const values = variable.values ?? [];
  if (values.length === 0) return undefined;
  let expr: string;
  if (variable.multi?.numeric === true && variable.min !== undefined && variable.max !== undefined && Number.isFinite(variable.min) && Number.isFinite(variable.max)) {
    expr = `${nameText(variable.name)}=${numberText(variable.min)}..${numberText(variable.max)}`;
  } else if (values.length < MAX_TERMS) {
    expr = `${nameText(variable.name)}=${values.map((value) => valueText(value.value)).join(',')}`;
  } else return undefined;
  return { label: NET_LABEL, expr, variable: variable.name, multi: true, net: true };
}

/** The "No answer" entry of a variable: its respondents with a blank, `VAR=NA`. */
export function missingEntry(variable: string, label: string): AxisEntry {
  return { label, expr: `${nameText(variable)}=NA`, variable, missing: true };
}

/** Checks `missing` (TableQuery.missing): `show` (default) or `hide`. */
export function readMissingMode(value: unknown): MissingMode {
  if (value === undefined) return 'show';
  if (value === 'show' || value === 'hide') return value;
  throw invalidOption('missing', `must be "show" or "hide"; got ${describeValue(value)}`, 'Leave it out to show a "No answer" entry for respondents with a blank.');
}

/** Checks `percentBase` (TableQuery.percentBase, TableStatisticsOptions.percentBase): `total` (default) or `valid`. */
export function readPercentBase(value: unknown, option = 'percentBase'): PercentBase {
  if (value === undefined) return 'total';
  if (value === 'total' || value === 'valid') return value;
  throw invalidOption(option, `must be "total" or "valid"; got ${describeValue(value)}`, 'Use "valid" for percentages of those who answered, "total" (default) for percentages of every base respondent.');
}

/** The variable a name written in quotes stands for, as `info` prints it (`"two words"`). */
function quotedVariable(variables: readonly VariableInfo[], written: string): VariableInfo | undefined {
  if (!written.trimStart().startsWith('"')) return undefined;
  let expr: Expr;
  try {
    expr = parseExpression(written);
  } catch {
    return undefined;
  }
  return 'code' in expr ? variables.find((candidate) => candidate.name === expr.code) : undefined;
}

function codeLabel(info: DatasetInfo, expr: string): string | undefined {
  return info.codes.find((code) => code.name === expr.trim())?.label;
}
