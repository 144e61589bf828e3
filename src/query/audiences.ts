/**
 * Saved audiences in expressions: `@name` stands for a stored expression. The service that
 * stores them (it knows the caller's account) expands each reference to its expression in
 * parentheses before the engine binds the text, so the engine, its caches and everything it
 * shows see only plain expressions: an edited audience is new text, never a stale cell.
 */
import { CrosstabError, ErrorCode } from '../errors.js';
import { shorten } from '../text/expression-text.js';
import type { Expr } from './ast.js';
import { MAX_TERMS, parseExpression } from './parse.js';
import { formatNumber } from '../text/number-text.js';

/** Deepest chain of audiences using audiences (`@a` uses `@b` uses `@c`...). */
export const MAX_AUDIENCE_DEPTH = 8;
/** Longest text an expression may expand to: bounds the work of audiences that use others many times. */
export const MAX_EXPANDED_LENGTH = 20_000;

/** A stored audience as the expansion needs it: a unique id, its name and its expression. */
export interface AudienceDefinition {
  readonly id: string;
  readonly name: string;
  readonly expression: string;
}

/** An audience an expression uses, directly or through another, with its own expression expanded. */
export interface UsedAudience {
  readonly audience: AudienceDefinition;
  /** Its expression with the audiences it uses expanded. */
  readonly text: string;
  /** The audience the expression named that led to it (itself when named directly). */
  readonly named: string;
}

/** An expression with its audiences expanded. */
export interface ExpandedExpression {
  /** The text the engine binds: each `@name` replaced by `(its expression, expanded)`. */
  readonly text: string;
  /** Every audience used, directly or through another, once each. */
  readonly audiences: readonly UsedAudience[];
}

/**
 * The audience `name` as seen from where it is used: `parent` is the audience whose expression
 * names it (undefined at the top of the expression). Undefined when there is none for the
 * caller. The answer must depend on the parent, not on the chain above it: an audience expands
 * to the same text wherever it is used.
 */
export type AudienceLookup = (name: string, parent: AudienceDefinition | undefined) => AudienceDefinition | undefined;

/** The terms of an expression that are audience references, with where they start (0-based). */
function references(expr: Expr, found: { name: string; at: number }[] = []): { name: string; at: number }[] {
  if ('audience' in expr) found.push({ name: expr.audience, at: expr.at ?? 0 });
  else if ('and' in expr) for (const item of expr.and) references(item, found);
  else if ('or' in expr) for (const item of expr.or) references(item, found);
  else if ('not' in expr) references(expr.not, found);
  return found.sort((a, b) => a.at - b.at);
}

/** Whether `source` refers to any saved audience (parsing it; a syntax error throws, naming the source's own position). */
export function usesAudiences(source: string): boolean {
  return references(parseExpression(source)).length > 0;
}

const tooBig = (): CrosstabError =>
  // The parser's message would show the expanded text: say what is too big, not what it holds.
  new CrosstabError(ErrorCode.invalidExpression, `with its audiences expanded, the expression is past the grammar's bounds (${MAX_TERMS} terms, nesting of 64 levels, ${formatNumber(MAX_EXPANDED_LENGTH, 0)} characters)`, {
    hint: 'Use fewer or smaller audiences in one expression, or split the question into several queries.',
  });

/**
 * Expands every `@name` of `source` with `lookup`. Throws `unknown_audience` naming an audience
 * the lookup does not know (and the audience that used it), `invalid_expression` for a cycle
 * (`details.audiences`: the ids of the audiences in the loop, in order), a
 * chain deeper than MAX_AUDIENCE_DEPTH or an expanded text past the grammar's bounds; no
 * message shows an audience's definition. A syntax error of `source` itself throws as
 * parseExpression does.
 */
export function expandAudiences(source: string, lookup: AudienceLookup): ExpandedExpression {
  const expandedById = new Map<string, string>();
  const used: UsedAudience[] = [];
  const expand = (text: string, chain: readonly AudienceDefinition[], named: string | undefined): string => {
    const found = references(parseExpression(text));
    if (found.length === 0) return text;
    const parent = chain.at(-1);
    let expanded = '';
    let copied = 0;
    for (const { name, at } of found) {
      const audience = lookup(name, parent);
      if (audience === undefined) {
        const where = parent === undefined ? '' : ` (used by @${parent.name})`;
        throw new CrosstabError(ErrorCode.unknownAudience, `no audience @${shorten(name)} of this survey is there for you${where}`, {
          hint: 'GET /v1/audiences?SurveyCode=... lists the audiences you may use: your own and those shared in your account. Names are lower case.',
        });
      }
      const path = (): string => [...chain, audience].map((each) => `@${each.name}`).join(' -> ');
      const from = chain.findIndex((each) => each.id === audience.id);
      if (from >= 0) {
        throw new CrosstabError(ErrorCode.invalidExpression, `audience @${audience.name} uses itself (${path()})`, {
          hint: `Edit one of these audiences so that none of them uses @${audience.name}.`,
          audiences: chain.slice(from).map((each) => each.id),
        });
      }
      if (chain.length >= MAX_AUDIENCE_DEPTH) {
        throw new CrosstabError(ErrorCode.invalidExpression, `audiences use audiences more than ${MAX_AUDIENCE_DEPTH} deep (${path()})`, { hint: 'Write one of these audiences with the expression of the audience it uses.' });
      }
      let inner = expandedById.get(audience.id);
      if (inner === undefined) {
        inner = expand(audience.expression, [...chain, audience], named ?? audience.name);
        expandedById.set(audience.id, inner);
        used.push({ audience, text: inner, named: named ?? audience.name });
      }
      expanded += `${text.slice(copied, at)}(${inner})`;
      copied = at + 1 + name.length;
      if (expanded.length > MAX_EXPANDED_LENGTH) throw tooBig();
    }
    return expanded + text.slice(copied);
  };
  const text = expand(source, [], undefined);
  if (used.length > 0) {
    if (text.length > MAX_EXPANDED_LENGTH) throw tooBig();
    try {
      parseExpression(text);
    } catch (error) {
      if (!(error instanceof CrosstabError)) throw error;
      throw tooBig();
    }
  }
  return { text, audiences: used };
}

/** The variables and codebook codes an expression names (audiences not expanded): what its authorization groups come from. */
export function namesOf(source: string): { variables: string[]; codes: string[] } {
  const variables = new Set<string>();
  const codes = new Set<string>();
  const walk = (expr: Expr): void => {
    if ('and' in expr) expr.and.forEach(walk);
    else if ('or' in expr) expr.or.forEach(walk);
    else if ('not' in expr) walk(expr.not);
    else if ('code' in expr) codes.add(expr.code);
    else if ('var' in expr) variables.add(expr.var);
  };
  walk(parseExpression(source));
  return { variables: [...variables], codes: [...codes] };
}
