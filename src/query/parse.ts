import { CrosstabError, echo, ErrorCode } from '../errors.js';
import { AUDIENCE_NAME, NAME_CHAR, nameText, quoteText, VALUE_END } from '../text/expression-text.js';
import type { Expr } from './ast.js';

const GRAMMAR_HINT =
  'Grammar: * | VAR=v | VAR=v1,v2 | VAR=lo..hi | VAR=lo.. | VAR=..hi | VAR=NA | VAR=all(v1,v2) | VAR=none(v1,v2) | CODE | @audience, combined with AND, OR, NOT and parentheses; ' +
  'numbers as 2, -0.5 or 1e-7; quote names and values with spaces or other characters in double quotes ("two words"="New York"), writing \\" for a quote inside.';
/** Deeper nesting than this is refused, so no input can exhaust the stack. */
const MAX_DEPTH = 64;
/** Most terms (values, ranges, NA and codes) in one expression: bounds the scans one expression costs. */
export const MAX_TERMS = 100;

/**
 * Parses an expression. Precedence: NOT binds tighter than AND, AND tighter than OR.
 * Keywords are AND, OR, NOT in upper or lower case.
 */
export function parseExpression(source: string): Expr {
  if (typeof source !== 'string') {
    throw new CrosstabError(ErrorCode.invalidExpression, `an expression must be a string, not ${source === null ? 'null' : typeof source}`, {
      hint: GRAMMAR_HINT,
    });
  }
  const parser = new Parser(source);
  const expr = parser.parseOr(0);
  parser.skipSpace();
  if (!parser.atEnd()) parser.fail(`unexpected "${parser.rest(12)}"`, 'Join terms with AND or OR.');
  return expr;
}

/** Hints for comparison operators the grammar does not have, by the text after the name. */
const OPERATOR_HINTS: Array<[RegExp, (name: string) => string]> = [
  [/^!=/, (name) => `There is no "!=": write NOT ${name}=value, ${name}=none(v1,v2) (an answer, but none of these), or list the values you want (${name}=v1,v2).`],
  [/^>=/, (name) => `There is no ">=": write an open range, ${name}=lo.. (lo included).`],
  [/^<=/, (name) => `There is no "<=": write an open range, ${name}=..hi (hi included).`],
  [/^>/, (name) => `There is no ">": write an open range, ${name}=lo.. (lo included), with lo the next value up.`],
  [/^</, (name) => `There is no "<": write an open range, ${name}=..hi (hi included), with hi the next value down.`],
];

class Parser {
  private at = 0;
  private terms = 0;
  constructor(private readonly source: string) {}

  atEnd(): boolean {
    return this.at >= this.source.length;
  }

  rest(length: number): string {
    return this.source.slice(this.at, this.at + length);
  }

  skipSpace(): void {
    while (!this.atEnd() && /\s/.test(this.source[this.at]!)) this.at++;
  }

  fail(what: string, hint = GRAMMAR_HINT, at = this.at): never {
    throw new CrosstabError(ErrorCode.invalidExpression, `invalid expression "${echo(this.source)}": ${what} at position ${at + 1}`, {
      position: at,
      hint,
    });
  }

  parseOr(depth: number): Expr {
    const items = [this.parseAnd(depth)];
    while (this.keyword('OR')) items.push(this.parseAnd(depth));
    return items.length === 1 ? items[0]! : { or: items };
  }

  private parseAnd(depth: number): Expr {
    const items = [this.parseUnary(depth)];
    while (this.keyword('AND')) items.push(this.parseUnary(depth));
    return items.length === 1 ? items[0]! : { and: items };
  }

  private parseUnary(depth: number): Expr {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH} levels`, 'Simplify the expression.');
    if (this.keyword('NOT')) return { not: this.parseUnary(depth + 1) };
    return this.parsePrimary(depth);
  }

  private parsePrimary(depth: number): Expr {
    this.skipSpace();
    if (this.atEnd()) this.fail('the expression ends where a term was expected', GRAMMAR_HINT);
    const char = this.source[this.at]!;
    if (char === '(') {
      this.at++;
      const inner = this.parseOr(depth + 1);
      this.skipSpace();
      if (this.source[this.at] !== ')') this.fail('missing ")"', 'Close every "(" with ")".');
      this.at++;
      return inner;
    }
    if (char === '*') {
      this.at++;
      return { all: true };
    }
    const start = this.at;
    if (char === '@') return this.audience(start);
    const quoted = char === '"';
    const name = quoted ? this.quoted('name') : this.name();
    if (name === '') this.fail(quoted ? 'an empty quoted name' : `unexpected "${char}"`, GRAMMAR_HINT, start);
    this.skipSpace();
    const operator = OPERATOR_HINTS.find(([pattern]) => pattern.test(this.rest(2)));
    if (operator) this.fail(`unexpected "${this.rest(2).replace(/[^<>=!]$/, '')}"`, operator[1](nameText(name)));
    if (this.source[this.at] !== '=') {
      this.countTerm(start);
      return { code: name, at: start };
    }
    this.at++;
    return this.predicate(name, start);
  }

  /** `@name`: a saved audience (a bare name starting with `@`; a variable or code named so is quoted). */
  private audience(start: number): Expr {
    const token = this.name();
    const name = token.slice(1);
    if (!AUDIENCE_NAME.test(name)) {
      this.fail(
        `${token === '@' ? 'a name is missing after "@"' : `"${echo(token)}" is not an audience name`}`,
        `An audience is written @name, its name 1 to 64 lower-case letters, digits, "-" and "_" (@heavy-streamers); a variable or code whose name starts with "@" is written in double quotes (${quoteText(token === '@' ? '@name' : token)}=1).`,
        start,
      );
    }
    this.skipSpace();
    if (this.source[this.at] === '=' || OPERATOR_HINTS.some(([pattern]) => pattern.test(this.rest(2)))) {
      this.fail(`${token} is an audience, which takes no value`, `Write ${token} on its own (AND/OR other terms); a variable named ${token} is written in double quotes: ${quoteText(token)}=value.`, start);
    }
    this.countTerm(start);
    return { audience: name, at: start };
  }

  /** The value list after `VAR=`: values and ranges separated by commas, or all(...) / none(...). */
  private predicate(variable: string, start: number): Expr {
    const set = this.setForm(variable, start);
    if (set) return set;
    const items: Expr[] = [];
    const values: string[] = [];
    do {
      this.skipSpace();
      const itemAt = this.at;
      this.countTerm(itemAt);
      const quoted = this.source[this.at] === '"';
      const text = quoted ? this.quoted('value') : this.bare();
      if (text === '' && !quoted) this.fail(`a value is missing after "${variable}="`, 'Write VAR=value, VAR=v1,v2 or VAR=lo..hi.');
      const range = quoted ? -1 : text.indexOf('..');
      if (range >= 0) {
        const min = text.slice(0, range);
        const max = text.slice(range + 2);
        if (min === '' && max === '') this.fail(`a range needs at least one bound`, 'Write VAR=lo..hi, VAR=lo.. or VAR=..hi.', itemAt);
        if (max.includes('..')) this.fail(`"${echo(text)}" is not a range`, 'Write VAR=lo..hi.', itemAt);
        const item: { var: string; min?: string; max?: string; at: number } = { var: variable, at: start };
        if (min !== '') item.min = min;
        if (max !== '') item.max = max;
        items.push(item);
      } else if (!quoted && text === 'NA') {
        items.push({ var: variable, missing: true, at: start });
      } else {
        values.push(text);
      }
      this.skipSpace();
    } while (this.source[this.at] === ',' && ++this.at);
    if (values.length > 0) items.unshift({ var: variable, in: values, at: start });
    return items.length === 1 ? items[0]! : { or: items };
  }

  /**
   * `all(v1,v2)` or `none(v1,v2)` (lower or upper case) right after `VAR=`: a list of values,
   * no ranges or NA, standing alone (not joined to other values by commas).
   */
  private setForm(variable: string, start: number): Expr | undefined {
    this.skipSpace();
    const match = /^(all|ALL|none|NONE)\s*\(/.exec(this.source.slice(this.at, this.at + 8));
    if (!match) return undefined;
    const form = match[1]!.toLowerCase() as 'all' | 'none';
    const example = `${nameText(variable)}=${form}(v1,v2)`;
    this.at += match[0].length;
    const values: string[] = [];
    do {
      this.skipSpace();
      const itemAt = this.at;
      if (this.source[this.at] === ')' && values.length === 0) this.fail(`${form}() needs at least one value`, `Write ${example}.`, itemAt);
      this.countTerm(itemAt);
      const quoted = this.source[this.at] === '"';
      const text = quoted ? this.quoted('value') : this.bare();
      if (text === '' && !quoted) this.fail(`a value is missing in ${form}(...)`, `Write ${example}.`, itemAt);
      if (!quoted && text.includes('..')) this.fail(`${form}(...) takes values, not the range "${echo(text)}"`, `List the values: ${example}.`, itemAt);
      if (!quoted && text === 'NA') this.fail(`${form}(...) takes values, not NA`, `Write ${nameText(variable)}=NA on its own for respondents with no answer.`, itemAt);
      values.push(text);
      this.skipSpace();
    } while (this.source[this.at] === ',' && ++this.at);
    if (this.source[this.at] !== ')') this.fail(`missing ")" after the values of ${form}(...)`, `Write ${example}.`);
    this.at++;
    this.skipSpace();
    if (this.source[this.at] === ',') this.fail(`${form}(...) stands alone after "="`, `Join it to other terms with AND or OR: ${example} OR ${nameText(variable)}=v3.`);
    return form === 'all' ? { var: variable, every: values, at: start } : { var: variable, none: values, at: start };
  }

  private countTerm(at: number): void {
    if (++this.terms > MAX_TERMS) {
      this.fail(`more than ${MAX_TERMS} terms`, `Use ranges (VAR=lo..hi) instead of long value lists, or a code from the codebook; split the question into several queries.`, at);
    }
  }

  private name(): string {
    const start = this.at;
    while (!this.atEnd() && NAME_CHAR.test(this.source[this.at]!)) this.at++;
    return this.source.slice(start, this.at);
  }

  private bare(): string {
    const start = this.at;
    while (!this.atEnd() && !VALUE_END.test(this.source[this.at]!)) this.at++;
    return this.source.slice(start, this.at);
  }

  /** A name or value in double quotes; a backslash takes the next character as it is (\\" and \\\\). */
  private quoted(what: 'name' | 'value'): string {
    const start = this.at++;
    let text = '';
    while (!this.atEnd() && this.source[this.at] !== '"') {
      if (this.source[this.at] === '\\' && this.at + 1 < this.source.length) this.at++;
      text += this.source[this.at++];
    }
    if (this.atEnd()) this.fail(`unterminated quoted ${what}`, `Close the ${what} with "; write \\" for a quote inside it.`, start);
    this.at++;
    return text;
  }

  /** Consumes a keyword (a whole word, not followed by "="). */
  private keyword(word: string): boolean {
    this.skipSpace();
    const start = this.at;
    const name = this.name();
    if (name.toUpperCase() === word && (name === word || name === word.toLowerCase())) {
      const after = this.at;
      this.skipSpace();
      const isPredicate = this.source[this.at] === '=';
      this.at = after;
      if (!isPredicate) return true;
    }
    this.at = start;
    return false;
  }
}
