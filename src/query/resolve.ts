import { CrosstabError, ErrorCode } from '../errors.js';
import type { StoredMeta, StoredVariable } from '../dataset/format.js';
import type { CodeInfo } from '../facade/types.js';
import type { Expr } from './ast.js';
import { parseExpression } from './parse.js';
import { suggest } from './suggest.js';

/** An expression bound to a dataset: variables by position, values by rank (0 = blank). */
export type Bound =
  | { op: 'all' }
  | { op: 'none' }
  | { op: 'ranks'; variable: number; ranks: number[] }
  | { op: 'range'; variable: number; lo: number; hi: number }
  | { op: 'and' | 'or'; items: Bound[] }
  | { op: 'not'; item: Bound };

export interface Resolved {
  bound: Bound;
  /** Authorization groups the expression touches, each with the variable or code that needs it. */
  groups: Map<string, string>;
}

/** Binds expressions to one dataset's variables and codebook. */
export class Resolver {
  private readonly variables: StoredVariable[];
  private readonly byName = new Map<string, number>();
  private readonly numbers: Array<Float64Array | undefined>;
  private readonly codes = new Map<string, CodeInfo>();
  private readonly codeCache = new Map<string, Bound>();

  constructor(meta: Pick<StoredMeta, 'variables' | 'codes'>) {
    this.variables = meta.variables;
    meta.variables.forEach((variable, position) => this.byName.set(variable.name, position));
    this.numbers = meta.variables.map((variable) => (variable.kind === 'numeric' ? Float64Array.from(variable.values, Number) : undefined));
    for (const code of meta.codes) this.codes.set(code.name, code);
  }

  /** Parses and binds `source`; `field` names the option or request field for messages. */
  resolve(source: string, field?: string): Resolved {
    try {
      const groups = new Map<string, string>();
      return { bound: this.bind(parseExpression(source), groups, []), groups };
    } catch (error) {
      if (error instanceof CrosstabError && field !== undefined && error.details.field === undefined) error.details.field = field;
      throw error;
    }
  }

  private bind(expr: Expr, groups: Map<string, string>, codePath: string[]): Bound {
    if ('all' in expr) return { op: 'all' };
    if ('and' in expr) return { op: 'and', items: expr.and.map((item) => this.bind(item, groups, codePath)) };
    if ('or' in expr) return { op: 'or', items: expr.or.map((item) => this.bind(item, groups, codePath)) };
    if ('not' in expr) return { op: 'not', item: this.bind(expr.not, groups, codePath) };
    if ('code' in expr) return this.bindCode(expr.code, groups, codePath);
    const position = this.variablePosition(expr.var);
    const variable = this.variables[position]!;
    if (!groups.has(variable.group)) groups.set(variable.group, `variable ${variable.name}`);
    if ('missing' in expr) return { op: 'ranks', variable: position, ranks: [0] };
    if ('in' in expr) {
      const ranks = [...new Set(expr.in.map((value) => this.rankOf(position, value)))].sort((a, b) => a - b);
      return { op: 'ranks', variable: position, ranks };
    }
    return this.bindRange(position, expr.min, expr.max);
  }

  private bindCode(name: string, groups: Map<string, string>, codePath: string[]): Bound {
    const code = this.codes.get(name);
    if (!code) {
      const variableHint = this.byName.has(name) ? ` "${name}" is a variable: write ${name}=value.` : '';
      const suggestions = suggest(name, [...this.codes.keys(), ...this.byName.keys()]);
      throw new CrosstabError(ErrorCode.unknownCode, `unknown code "${name}"${didYouMean(suggestions)}`, {
        suggestions,
        hint: `Use a code defined in the dataset's codebook, or a condition VAR=value.${variableHint}`,
      });
    }
    if (!groups.has(code.group)) groups.set(code.group, `code ${code.name}`);
    if (codePath.includes(name)) {
      throw new CrosstabError(ErrorCode.invalidCodebook, `code "${name}" refers to itself (${[...codePath, name].join(' -> ')})`, {
        hint: 'Remove the circular reference from the codebook.',
      });
    }
    let bound = this.codeCache.get(name);
    if (!bound) {
      // A code stands for its own authorization group: the groups of what it is built from are not required.
      bound = this.bind(parseExpression(code.expr), new Map(), [...codePath, name]);
      this.codeCache.set(name, bound);
    }
    return bound;
  }

  private variablePosition(name: string): number {
    const position = this.byName.get(name);
    if (position !== undefined) return position;
    const suggestions = suggest(name, this.byName.keys());
    throw new CrosstabError(ErrorCode.unknownVariable, `unknown variable "${name}"${didYouMean(suggestions)}`, {
      suggestions,
      hint: 'Use a variable of the dataset (`crosstab info DATASET` lists them).',
    });
  }

  private rankOf(position: number, text: string): number {
    const variable = this.variables[position]!;
    const numbers = this.numbers[position];
    let index: number;
    if (numbers) {
      const value = this.number(variable, text, 'value');
      index = lowerBound(numbers, value);
      if (numbers[index] === value) return index + 1;
    } else {
      index = lowerBound(variable.values, text);
      if (variable.values[index] === text) return index + 1;
    }
    const suggestions = numbers
      ? variable.values.slice(Math.max(0, index - 2), index + 2)
      : suggest(text, variable.values);
    throw new CrosstabError(ErrorCode.unknownValue, `no respondent has ${variable.name}=${text}${didYouMean(suggestions)}`, {
      suggestions,
      hint: numbers
        ? `Use a value ${variable.name} takes, or a range such as ${variable.name}=lo..hi.`
        : `Use a value ${variable.name} takes (\`crosstab info DATASET\` lists them); text values must match exactly.`,
    });
  }

  private bindRange(position: number, min: string | undefined, max: string | undefined): Bound {
    const variable = this.variables[position]!;
    const numbers = this.numbers[position];
    if (!numbers) {
      throw new CrosstabError(ErrorCode.invalidExpression, `${variable.name} is a text variable; a range (${variable.name}=${min ?? ''}..${max ?? ''}) needs a numeric one`, {
        hint: `List the values instead: ${variable.name}=v1,v2.`,
      });
    }
    const lo = min === undefined ? 1 : lowerBound(numbers, this.number(variable, min, 'lower bound')) + 1;
    const hi = max === undefined ? numbers.length : upperBound(numbers, this.number(variable, max, 'upper bound'));
    return lo > hi ? { op: 'none' } : { op: 'range', variable: position, lo, hi };
  }

  private number(variable: StoredVariable, text: string, what: string): number {
    const value = text.trim() === '' ? Number.NaN : Number(text);
    if (!Number.isFinite(value)) {
      throw new CrosstabError(ErrorCode.invalidExpression, `${variable.name} is numeric, but its ${what} "${text}" is not a number`, {
        hint: `Write a number, e.g. ${variable.name}=${variable.values[0] ?? 1}.`,
      });
    }
    return value;
  }
}

function didYouMean(suggestions: string[]): string {
  return suggestions.length > 0 ? `; did you mean ${suggestions.map((s) => `"${s}"`).join(', ')}?` : '';
}

/** First index whose value is >= target. */
function lowerBound<T extends number | string>(sorted: ArrayLike<T>, target: T): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Number of values <= target. */
function upperBound(sorted: Float64Array, target: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
