/** Validation of options at the edge, with messages that name the option: shared by every layer that takes options. */
import { type CrosstabError, echo, ErrorCode, fieldError } from './errors.js';
import { suggest } from './text/suggest.js';

export function invalidOption(option: string, message: string, hint: string): CrosstabError {
  return fieldError(ErrorCode.invalidOption, option, message, { hint });
}

/**
 * `value` as an object whose own keys are all in `known`: a misspelt option (`wieght`) is
 * refused, not ignored (ignoring it would answer with the default weight, silently).
 */
export function requireObject(value: unknown, option: string, known?: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidOption(option, `must be an object; got ${describeValue(value)}`, `Pass ${option} as an object.`);
  }
  if (known) {
    for (const key of Object.keys(value)) {
      if (known.includes(key)) continue;
      const suggestions = suggest(key, known);
      const field = `${option}.${echo(key)}`;
      throw fieldError(ErrorCode.invalidOption, field, `is not an option${suggestions.length ? `; did you mean "${suggestions[0]}"?` : ''}`, {
        suggestions,
        hint: `The options of ${option} are ${known.join(', ')}.`,
      });
    }
  }
  return value as Record<string, unknown>;
}

/** What a value is, for messages: its type, or a short JSON form. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `a string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `${typeof value} ${String(value)}`;
  return typeof value;
}

export function requireString(value: unknown, option: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw invalidOption(option, 'must be a non-empty string', `Pass an expression such as "*" or "sex=2".`);
  }
  return value;
}

export function requireStringArray(value: unknown, option: string, max: number): string[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw invalidOption(option, 'must be a non-empty array of expressions', `Pass e.g. ["sex=2"].`);
  }
  if (value.length > max) throw invalidOption(option, `has ${value.length} items; at most ${max} are allowed`, 'Split the request.');
  // An index loop, not map(): map skips the holes of a sparse array ([, "sex=1"]).
  const items: string[] = [];
  for (let i = 0; i < value.length; i++) items.push(requireString(value[i], `${option}[${i}]`));
  return items;
}

/** `value` as an optional AbortSignal. */
export function requireSignal(value: unknown, option: string): AbortSignal | undefined {
  if (value === undefined || value instanceof AbortSignal) return value;
  throw invalidOption(option, 'must be an AbortSignal', 'Pass the signal of an AbortController, or leave it out.');
}

export function requireGroups(value: unknown, option: string): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw invalidOption(option, 'must be an array of group names', 'Pass e.g. ["core"].');
  // An index loop, not every(): every skips the holes of a sparse array.
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] !== 'string') throw invalidOption(`${option}[${i}]`, 'must be a group name (a string)', 'Pass e.g. ["core"].');
  }
  return [...(value as string[])];
}
