/**
 * Saved audiences (`@name`) in a tab book's banner and base: each expression with its
 * audiences expanded to their expressions in parentheses before the tab book is made, so
 * every table, header and hint shows plain text that parses back to the same respondents.
 * Where the audiences come from is the caller's: a file of the command line, an account's
 * audiences in the access database, or the service's store for a portal user.
 */
import { CrosstabError } from '../errors.js';
import { expandAudiences, usesAudiences, type AudienceLookup, type UsedAudience } from '../query/audiences.js';
import { shorten } from '../text/expression-text.js';
import type { TabbookOptions } from './tabbook.js';

/** The tab book's options with every `@name` of the banner and the base expanded, and the audiences used. */
export interface TabbookAudiences<T> {
  options: T;
  audiences: UsedAudience[];
}

/** Whether any banner item or the base names a saved audience (a syntax error is left to the tab book, which names its place). */
export function tabbookUsesAudiences(options: Pick<TabbookOptions, 'banner' | 'base'>): boolean {
  const texts = [...options.banner.map((item) => (typeof item === 'string' ? item : item.expr)), options.base ?? '*'];
  return texts.some((text) => {
    if (!text.includes('@')) return false;
    try {
      return usesAudiences(text);
    } catch {
      return false;
    }
  });
}

/**
 * Expands the audiences of `options.banner` and `options.base` with `lookup`. A banner item that
 * is a variable name or a code is left as it is. Throws the expansion's error (an unknown
 * audience, one that uses itself, a chain too deep) with `field` set to the item at fault
 * (`banner[2]`, `base`) and the item named in the message.
 */
export function expandTabbookAudiences<T extends Pick<TabbookOptions, 'banner' | 'base'>>(options: T, lookup: AudienceLookup): TabbookAudiences<T> {
  const used = new Map<string, UsedAudience>();
  const expand = (text: string, field: string): string => {
    if (!text.includes('@')) return text;
    let parsed: boolean;
    try {
      parsed = usesAudiences(text);
    } catch {
      return text; // not an expression: the tab book names the problem at its place
    }
    if (!parsed) return text;
    try {
      const expanded = expandAudiences(text, lookup);
      for (const audience of expanded.audiences) if (!used.has(audience.audience.id)) used.set(audience.audience.id, audience);
      return expanded.text;
    } catch (error) {
      if (!(error instanceof CrosstabError)) throw error;
      const problem = `${field} "${shorten(text)}": ${error.details.problem ?? error.message}`;
      throw new CrosstabError(error.code, problem, { ...error.details, field, problem });
    }
  };
  const banner = options.banner.map((item, i) => (typeof item === 'string' ? expand(item, `banner[${i}]`) : { ...item, expr: expand(item.expr, `banner[${i}]`) }));
  const expanded = { ...options, banner };
  if (options.base !== undefined) expanded.base = expand(options.base, 'base');
  return { options: expanded, audiences: [...used.values()] };
}
