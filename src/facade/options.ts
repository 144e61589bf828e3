import { type CrosstabError, ErrorCode, fieldError } from '../errors.js';
import { suggest } from '../text/suggest.js';
import type { DatasetInfo } from './types.js';

/** Validation of options at the edge, with messages that name the option. */
export function invalidOption(option: string, message: string, hint: string): CrosstabError {
  return fieldError(ErrorCode.invalidOption, option, message, { hint });
}

export function requireObject(value: unknown, option: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidOption(option, 'must be an object', `Pass ${option} as an object.`);
  }
  return value as Record<string, unknown>;
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
  return value.map((item, i) => requireString(item, `${option}[${i}]`));
}

/** The weight column to use: the default (first) one, another by name, or null for unweighted. */
export function requireSignal(value: unknown, option: string): AbortSignal | undefined {
  if (value === undefined || value instanceof AbortSignal) return value;
  throw invalidOption(option, 'must be an AbortSignal', 'Pass the signal of an AbortController, or leave it out.');
}

export function resolveWeight(value: unknown, info: DatasetInfo, option = 'weight'): string | null {
  if (value === undefined) return info.weights[0]!;
  if (value === null) return null;
  if (typeof value === 'string' && info.weights.includes(value)) return value;
  const suggestions = typeof value === 'string' ? suggest(value, info.weights) : [];
  const near = suggestions.length > 0 ? `; did you mean ${suggestions.map((weight) => `"${weight}"`).join(', ')}?` : '';
  const variable = typeof value === 'string' && info.variables.some((candidate) => candidate.name === value) ? ` "${value}" is a variable, not one of the weights.` : '';
  const error = invalidOption(option, `must be one of ${info.weights.map((w) => `"${w}"`).join(', ')} or null (unweighted)${near}`, `Choose a weight the dataset was built with.${variable}`);
  error.details.suggestions = suggestions;
  throw error;
}

export function requireGroups(value: unknown, option: string): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((group) => typeof group === 'string')) {
    throw invalidOption(option, 'must be an array of group names', 'Pass e.g. ["core"].');
  }
  return value;
}
