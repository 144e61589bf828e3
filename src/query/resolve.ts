import { CrosstabError, echo, ErrorCode } from '../errors.js';
import type { CodeInfo, StoredMeta, StoredVariable } from '../dataset/format.js';
import type { Expr } from './ast.js';
import { parseExpression } from './parse.js';
import { lowerBound, upperBound } from './sorted-search.js';
import { fitsFloat64 } from '../text/decimal-text.js';
import { suggest } from '../text/suggest.js';
import { nameText, NUMBER_TEXT, quoteText, rangeExpression, shorten, valueExpression, valueText } from '../text/expression-text.js';

/** An expression bound to a dataset: variables by position, values by rank (0 = blank). */
export type Bound =
  | { op: 'all' }
  | { op: 'none' }
  | { op: 'ranks'; variable: number; ranks: number[] }
  | { op: 'range'; variable: number; lo: number; hi: number }
  | { op: 'and' | 'or'; items: Bound[] }
  | { op: 'not'; item: Bound };

export interface Resolved {
  readonly bound: Bound;
  /** Authorization groups the expression touches, each with the variable or code that needs it. */
  readonly groups: ReadonlyMap<string, string>;
}

/** Bound expressions kept per dataset (a service sees the same few bases and targets again and again). */
const MAX_CACHED_EXPRESSIONS = 1024;

/** Values a hint lists in full; a variable with more is described by its range or left to the dataset's info. */
const LISTED_VALUES = 12;

function everyAllowed(groups: ReadonlyMap<string, string>, allowed: readonly string[]): boolean {
  for (const group of groups.keys()) if (!allowed.includes(group)) return false;
  return true;
}

/** Binds expressions to one dataset's variables and codebook. */
export class Resolver {
  private readonly variables: StoredVariable[];
  private readonly byName = new Map<string, number>();
  private readonly numbers: Array<Float64Array | undefined>;
  private readonly codes = new Map<string, CodeInfo>();
  private readonly codeCache = new Map<string, Bound>();
  /** Expressions bound before, by source text; only successes (errors are rebuilt each time). */
  private readonly expressionCache = new Map<string, Resolved>();

  constructor(meta: Pick<StoredMeta, 'variables' | 'codes'> & Pick<Partial<StoredMeta>, 'numberRule'>) {
    this.variables = meta.variables;
    meta.variables.forEach((variable, position) => this.byName.set(variable.name, position));
    this.numbers = meta.variables.map((variable) => (variable.kind === 'numeric' || variable.multi?.numeric === true ? numbersOf(variable, meta.numberRule) : undefined));
    for (const code of meta.codes) this.codes.set(code.name, code);
  }

  /**
   * Parses and binds `source`; `field` names the option or request field for messages. With
   * `allowed`, a variable or code of another authorization group is refused before any of
   * its values are looked at, as a name the dataset does not have (the same error, with the
   * same suggestions, as a made-up name), and suggestions name only variables, codes and
   * values of the allowed groups, so an error never reveals what the caller may not use.
   */
  resolve(source: string, field?: string, allowed?: readonly string[]): Resolved {
    // The dataset does not change and a bound expression is never modified, so a source text
    // binds to the same result every time; `allowed` only decides whether it may (a cached
    // expression touching a group outside `allowed` is bound again below, to throw the same error).
    const cached = this.expressionCache.get(source);
    if (cached !== undefined && (allowed === undefined || everyAllowed(cached.groups, allowed))) return cached;
    try {
      const groups = new Map<string, string>();
      const resolved = { bound: this.bind(parseExpression(source), { groups, allowed, field: field ?? 'expression' }, []), groups };
      if (this.expressionCache.size >= MAX_CACHED_EXPRESSIONS) this.expressionCache.clear();
      this.expressionCache.set(source, resolved);
      return resolved;
    } catch (error) {
      if (error instanceof CrosstabError && field !== undefined && error.details.field === undefined) error.details.field = field;
      throw error;
    }
  }

  private bind(expr: Expr, scope: Scope, codePath: string[]): Bound {
    if ('all' in expr) return { op: 'all' };
    if ('and' in expr) return { op: 'and', items: expr.and.map((item) => this.bind(item, scope, codePath)) };
    if ('or' in expr) return { op: 'or', items: expr.or.map((item) => this.bind(item, scope, codePath)) };
    if ('not' in expr) return { op: 'not', item: this.bind(expr.not, scope, codePath) };
    if ('code' in expr) return this.bindCode(expr.code, scope, codePath);
    if ('audience' in expr) {
      throw new CrosstabError(ErrorCode.unknownAudience, `@${expr.audience} is a saved audience, which only the service that stores it can use`, {
        hint: `Send the query to the REST service or the portal (they expand @${expr.audience} for your account), or write the audience's expression instead; a variable or code whose name starts with "@" is written in double quotes ("@${expr.audience}"=1).`,
      });
    }
    const position = this.variablePosition(expr.var, scope);
    const variable = this.variables[position]!;
    claimGroup(scope, variable.group, `variable ${variable.name}`);
    if ('missing' in expr) return { op: 'ranks', variable: position, ranks: [0] };
    if ('in' in expr) {
      const ranks = [...new Set(expr.in.map((value) => this.rankOf(position, value)))].sort((a, b) => a - b);
      return { op: 'ranks', variable: position, ranks };
    }
    if ('every' in expr) return this.bindEvery(position, expr.every);
    if ('none' in expr) {
      // An answer (not NA), but none of the values: NOT (the values OR NA).
      const ranks = [...new Set([0, ...expr.none.map((value) => this.rankOf(position, value))])].sort((a, b) => a - b);
      return { op: 'not', item: { op: 'ranks', variable: position, ranks } };
    }
    return this.bindRange(position, expr.min, expr.max);
  }

  /** Names of codes and variables the scope may use (all of them without an allowed list). */
  private usableNames(scope: Scope): string[] {
    const usable = (group: string): boolean => scope.allowed === undefined || scope.allowed.includes(group);
    return [
      ...[...this.codes.values()].filter((code) => usable(code.group)).map((code) => code.name),
      ...this.variables.filter((variable) => usable(variable.group)).map((variable) => variable.name),
    ];
  }

  private bindCode(name: string, scope: Scope, codePath: string[]): Bound {
    const found = this.codes.get(name);
    // A code of a group the caller may not use is, to them, a code the codebook does not define.
    const code = found === undefined || scope.allowed === undefined || scope.allowed.includes(found.group) ? found : undefined;
    if (!code) {
      const usable = this.usableNames(scope);
      const variableHint = usable.includes(name) ? ` ${quoteText(name)} is a variable: write ${nameText(name)}=value.` : '';
      const suggestions = suggest(name, usable);
      throw new CrosstabError(ErrorCode.unknownCode, `unknown code ${quoteText(shorten(name))}${didYouMean(suggestions)}`, {
        suggestions,
        hint: `Use a code defined in the dataset's codebook, or a condition VAR=value.${variableHint}`,
        listed: 'codes',
      });
    }
    claimGroup(scope, code.group, `code ${code.name}`);
    if (codePath.includes(name)) {
      throw new CrosstabError(ErrorCode.invalidCodebook, `code "${name}" refers to itself (${[...codePath, name].join(' -> ')})`, {
        hint: 'Remove the circular reference from the codebook.',
      });
    }
    let bound = this.codeCache.get(name);
    if (!bound) {
      // A code stands for its own authorization group: the groups of what it is built from are not required.
      bound = this.bind(parseExpression(code.expr), { groups: new Map(), allowed: undefined, field: scope.field }, [...codePath, name]);
      this.codeCache.set(name, bound);
    }
    return bound;
  }

  private variablePosition(name: string, scope: Scope): number {
    const position = this.byName.get(name);
    const allowed = scope.allowed;
    // A variable of a group the caller may not use is, to them, a variable the dataset does not have.
    if (position !== undefined && (allowed === undefined || allowed.includes(this.variables[position]!.group))) return position;
    const suggestions = suggest(name, allowed === undefined ? this.byName.keys() : this.variables.filter((v) => allowed.includes(v.group)).map((v) => v.name));
    throw new CrosstabError(ErrorCode.unknownVariable, `unknown variable ${quoteText(shorten(name))}${didYouMean(suggestions)}`, {
      suggestions,
      hint: UNKNOWN_VARIABLE_HINT,
      listed: 'variables',
    });
  }

  private rankOf(position: number, written: string): number {
    const variable = this.variables[position]!;
    const numbers = this.numbers[position];
    // A value label of the codebook stands for its value: sex=Female is sex=2.
    const text = this.valueOfLabel(variable, written, numbers !== undefined) ?? written;
    let index: number;
    if (numbers) {
      const value = this.number(variable, text, 'value');
      index = lowerBound(numbers, value);
      if (numbers[index] === value) return index + 1;
    } else {
      index = lowerBound(variable.values, text);
      if (variable.values[index] === text) return index + 1;
    }
    const labels = Object.values(variable.valueLabels ?? {});
    const suggestions = numbers
      ? variable.values.slice(Math.max(0, index - 2), index + 2)
      : suggest(text, [...variable.values, ...labels]);
    const name = nameText(variable.name);
    const message = `no respondent has ${valueExpression(variable.name, shorten(written))}${didYouMean(suggestions)}`;
    const listed = valuesWithLabels(variable);
    if (numbers) {
      const takes = listed !== undefined ? `: ${listed};` : ` (from ${variable.values[0]} to ${variable.values.at(-1)}),`;
      throw new CrosstabError(ErrorCode.unknownValue, message, { suggestions, hint: `Use a value ${name} takes${takes} or a range such as ${name}=lo..hi.` });
    }
    if (listed !== undefined) {
      throw new CrosstabError(ErrorCode.unknownValue, message, { suggestions, hint: `Use a value ${name} takes: ${listed}; text values must match exactly.` });
    }
    throw new CrosstabError(ErrorCode.unknownValue, message, { suggestions, hint: `Use a value ${name} takes; text values must match exactly.`, listed: 'values' });
  }

  /**
   * The value whose codebook label is `text` (ignoring case), when `text` is not itself a value
   * a numeric variable could take. Throws when two values share the label.
   */
  private valueOfLabel(variable: StoredVariable, text: string, numeric: boolean): string | undefined {
    const labels = variable.valueLabels;
    if (labels === undefined || (numeric && NUMBER_TEXT.test(text)) || (!numeric && variable.values.includes(text))) return undefined;
    const wanted = text.toLowerCase();
    const matches = Object.keys(labels).filter((value) => labels[value]!.toLowerCase() === wanted);
    if (matches.length > 1) {
      throw new CrosstabError(ErrorCode.invalidExpression, `${valueExpression(variable.name, text)} is ambiguous: values ${matches.join(', ')} are all labelled ${quoteText(text)}`, {
        hint: `Write the value instead, e.g. ${valueExpression(variable.name, matches[0]!)}.`,
      });
    }
    return matches[0];
  }

  /** `VAR=all(v1,v2)`: respondents holding every one of the values of a multi-response variable. */
  private bindEvery(position: number, values: string[]): Bound {
    const variable = this.variables[position]!;
    const name = nameText(variable.name);
    if (variable.kind !== 'multi') {
      throw new CrosstabError(ErrorCode.invalidExpression, `${name} holds one value per respondent; all(...) is for multi-response variables`, {
        hint: `Write ${name}=${values.map(valueText).join(',')} for respondents with any of these values.`,
      });
    }
    const ranks = [...new Set(values.map((value) => this.rankOf(position, value)))].sort((a, b) => a - b);
    const items: Bound[] = ranks.map((rank) => ({ op: 'ranks', variable: position, ranks: [rank] }));
    return items.length === 1 ? items[0]! : { op: 'and', items };
  }

  private bindRange(position: number, min: string | undefined, max: string | undefined): Bound {
    const variable = this.variables[position]!;
    const numbers = this.numbers[position];
    if (!numbers && variable.kind === 'multi') {
      throw new CrosstabError(ErrorCode.invalidExpression, `${nameText(variable.name)} is a multi-response variable with text values; a range (${rangeExpression(variable.name, min, max)}) needs numbers`, {
        hint: `List the values instead: ${nameText(variable.name)}=v1,v2 (any of them) or ${nameText(variable.name)}=all(v1,v2) (all of them).`,
      });
    }
    if (!numbers) {
      throw new CrosstabError(ErrorCode.invalidExpression, `${nameText(variable.name)} is a text variable; a range (${rangeExpression(variable.name, min, max)}) needs a numeric one`, {
        hint: `List the values instead: ${nameText(variable.name)}=v1,v2.`,
      });
    }
    const from = min === undefined ? undefined : this.number(variable, this.valueOfLabel(variable, min, true) ?? min, 'lower bound');
    const to = max === undefined ? undefined : this.number(variable, this.valueOfLabel(variable, max, true) ?? max, 'upper bound');
    if (from !== undefined && to !== undefined && from > to) {
      throw new CrosstabError(ErrorCode.invalidExpression, `${rangeExpression(variable.name, min, max)} is a reversed range: its lower bound is above its upper bound`, {
        hint: `Write the smaller bound first: ${rangeExpression(variable.name, max, min)}.`,
      });
    }
    const lo = from === undefined ? 1 : lowerBound(numbers, from) + 1;
    const hi = to === undefined ? numbers.length : upperBound(numbers, to);
    return lo > hi ? { op: 'none' } : { op: 'range', variable: position, lo, hi };
  }

  private number(variable: StoredVariable, text: string, what: string): number {
    const name = nameText(variable.name);
    if (NUMBER_TEXT.test(text)) {
      // Compared as the float it reads as, as R and DuckDB compare (0.33333333333333331 is 0.3333333333333333).
      if (Number.isFinite(Number(text))) return Number(text);
      throw new CrosstabError(ErrorCode.invalidExpression, `${name} is numeric, but its ${what} ${quoteText(shorten(text))} lies beyond the 64-bit float range: it would be read as ${String(Number(text))}`, {
        hint: `Values of ${name} are 64-bit floats (at most about 1.8e308 in size); leave the bound out for an open range (${name}=lo..).`,
      });
    }
    const range = /^(-?\d+(?:\.\d+)?)-(-?\d+(?:\.\d+)?)$/.exec(text);
    const meant = Number(text);
    const labels = Object.values(variable.valueLabels ?? {});
    // A word close to a value label is most likely that label misspelled (sex=Femal).
    const suggestions = range || Number.isFinite(meant) ? [] : suggest(text, labels);
    let hint: string;
    let listed: 'value labels' | undefined;
    if (range) hint = `A range is written with "..": ${rangeExpression(variable.name, range[1], range[2])}.`;
    else if (text.trim() !== '' && Number.isFinite(meant)) hint = `Write the number as ${name}=${meant} (decimal digits with an optional "-", fraction and exponent; no hex, "+", trailing "." or spaces).`;
    else if (labels.length > 0 && valuesWithLabels(variable) !== undefined) hint = `Write a number, or a value label of ${name}: ${valuesWithLabels(variable)}.`;
    else if (labels.length > 0) {
      hint = `Write a number such as ${name}=${variable.values[0] ?? '1'}, or a value label of ${name}.`;
      listed = 'value labels';
    } else hint = `Write a number, e.g. ${name}=${variable.values[0] ?? '1'}.`;
    const kind = labels.length > 0 ? 'neither a number nor a value label' : 'not a number';
    const message = `${name} is numeric, but its ${what} ${quoteText(shorten(text))} is ${kind}${didYouMean(suggestions)}`;
    throw new CrosstabError(ErrorCode.invalidExpression, message, listed ? { suggestions, hint, listed } : { suggestions, hint });
  }
}

const UNKNOWN_VARIABLE_HINT =
  'Use a variable of the dataset; names are case-sensitive, and a name with spaces or other characters is written in double quotes ("two words"=1).';

/** Longest list of values a hint spells out, in characters. */
const LISTED_LENGTH = 300;

/**
 * A variable's values as a hint lists them (`1 (Male), 2 (Female)`, `a, b, "New York"`), or
 * undefined when they are too many or too long to read in a hint.
 */
function valuesWithLabels(variable: StoredVariable): string | undefined {
  if (variable.values.length > LISTED_VALUES) return undefined;
  const listed = variable.values.map((value) => {
    const label = variable.valueLabels?.[value];
    return label === undefined ? valueText(value) : `${valueText(value)} (${label})`;
  }).join(', ');
  return listed.length <= LISTED_LENGTH ? listed : undefined;
}

/** Where an expression is bound: the groups it touches so far, and those the caller may use. */
interface Scope {
  groups: Map<string, string>;
  allowed: readonly string[] | undefined;
  field: string;
}

/** Records that the expression needs `group` (the caller's own: other groups' names were refused as unknown). */
function claimGroup(scope: Scope, group: string, culprit: string): void {
  if (!scope.groups.has(group)) scope.groups.set(group, culprit);
}

/** Suggestions in quotes, as the grammar reads a quoted name or value. */
function didYouMean(suggestions: string[]): string {
  return suggestions.length > 0 ? `; did you mean ${suggestions.map(quoteText).join(', ')}?` : '';
}

/**
 * A numeric variable's values as floats, in order. A dataset built before `numberRule`
 * existed (undefined) held in a numeric variable only values a float holds exactly, unless an
 * earlier build stored a column where one float stood for several numbers
 * (`9007199254740992` and `9007199254740993` as one value): such a dataset is refused, it must
 * be built again. Under `float-collisions` each value stands for its float alone.
 */
function numbersOf(variable: StoredVariable, rule: StoredMeta['numberRule']): Float64Array {
  const inexact = rule === 'float-collisions' ? undefined : variable.values.find((value) => !fitsFloat64(value));
  if (inexact !== undefined) {
    throw new CrosstabError(
      ErrorCode.unsupportedVersion,
      `numeric variable ${nameText(variable.name)} holds the value ${shorten(inexact)}, which a 64-bit float does not hold exactly (it reads as ${String(Number(inexact))}): the dataset was built by an earlier version, which could answer for it respondents of another value`,
      { field: variable.name, hint: 'Build the dataset again from its input with this version: a column where two numbers read as the same float is now kept as text, exactly.' },
    );
  }
  return Float64Array.from(variable.values, Number);
}
