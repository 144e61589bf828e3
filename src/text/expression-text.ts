/**
 * The lexical rules of the expression grammar, and the printers that write names, values
 * and ranges so that the parser reads them back as the same name, value or range. Everything
 * the engine shows as part of an expression (table entries, hints, suggestions, `info`) is
 * written with these.
 */

/** A character of a bare (unquoted) name: letters and digits of any script, and _ . - : # $ @ +. */
export const NAME_CHAR = /[\p{L}\p{M}\p{N}_.\-:#$@+]/u;

/** A character that ends a bare value: white space, a comma, a parenthesis or a double quote. */
export const VALUE_END = /[\s,()"]/;

/**
 * A number as written in an expression: decimal digits with an optional sign, fraction and
 * exponent (`-2`, `0.25`, `1e-7`, `1.5E+21`), the notation `crosstab build` accepts in a
 * numeric column and the one JavaScript prints numbers in. No hex, `+2`, `2.`, `.5` or spaces.
 */
export const NUMBER_TEXT = /^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$/;

const KEYWORDS = new Set(['AND', 'OR', 'NOT']);

/**
 * The name of a saved audience, as `@name` refers to it in an expression: 1 to 64 lower-case
 * ASCII letters, digits, `-` and `_`, starting with a letter or digit (`heavy-streamers`,
 * `women_25_40`). Every such character is a bare name character, so `@name` reads as one term
 * and ends where a name ends; a bare name that starts with `@` is always an audience, so a
 * variable or code whose name starts with `@` is written in double quotes (`"@home"=1`).
 */
export const AUDIENCE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** `text` in double quotes, with `"` and `\` escaped by a backslash. */
export function quoteText(text: string): string {
  return `"${text.replace(/["\\]/g, '\\$&')}"`;
}

/** Whether `name` can be written without quotes: bare name characters only, not a keyword, not starting with `@` (an audience). */
export function isBareName(name: string): boolean {
  if (name === '' || KEYWORDS.has(name.toUpperCase()) || name.startsWith('@')) return false;
  for (let i = 0; i < name.length; i++) if (!NAME_CHAR.test(name[i]!)) return false;
  return true;
}

/** A variable or code name as an expression reads it: bare when it can be, else quoted ("two words"). */
export function nameText(name: string): string {
  return isBareName(name) ? name : quoteText(name);
}

/** A value as an expression reads it: bare when it can be, else quoted ("New York", "NA", "a,b"). */
export function valueText(value: string): string {
  const bare = value !== '' && value !== 'NA' && !value.includes('..') && !value.split('').some((char) => VALUE_END.test(char));
  return bare ? value : quoteText(value);
}

/**
 * A number as an expression reads it back as the same double: JavaScript's shortest form
 * (`1e-7`, `2.5e+21`), and `1e999` / `-1e999` for the infinities a file's overflowing
 * numbers (`1e400`) become.
 */
export function numberText(value: number): string {
  if (Number.isFinite(value)) return String(value);
  return value > 0 ? '1e999' : '-1e999';
}

/** `VAR=value`, quoting the name and the value where the grammar needs it. */
export function valueExpression(variable: string, value: string): string {
  return `${nameText(variable)}=${valueText(value)}`;
}

/** `VAR=lo..hi` (or `lo..`, `..hi`) for a numeric variable; bounds are numbers or number texts. */
export function rangeExpression(variable: string, lo: string | number | undefined, hi: string | number | undefined): string {
  return `${nameText(variable)}=${lo ?? ''}..${hi ?? ''}`;
}

/** Client text echoed in a message, cut to `max` characters so a message never grows with the input. */
export function shorten(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
