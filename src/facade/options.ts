import { suggest } from '../text/suggest.js';
import { invalidOption } from '../options.js';
import type { DatasetInfo } from './types.js';

export { describeValue, invalidOption, requireGroups, requireObject, requireSignal, requireString, requireStringArray } from '../options.js';

/**
 * The weight column to use: the default (first) one, another by name, or null for unweighted.
 * With `allowed`, the hint says a name is a variable only of a variable of those groups.
 */
export function resolveWeight(value: unknown, info: DatasetInfo, option = 'weight', allowed?: readonly string[]): string | null {
  if (value === undefined) return info.weights[0]!;
  if (value === null) return null;
  if (typeof value === 'string' && info.weights.includes(value)) return value;
  const suggestions = typeof value === 'string' ? suggest(value, info.weights) : [];
  const near = suggestions.length > 0 ? `; did you mean ${suggestions.map((weight) => `"${weight}"`).join(', ')}?` : '';
  const variable = typeof value === 'string' && info.variables.some((candidate) => candidate.name === value && (allowed === undefined || allowed.includes(candidate.group))) ? ` "${value}" is a variable, not one of the weights.` : '';
  const error = invalidOption(option, `must be one of ${info.weights.map((w) => `"${w}"`).join(', ')} or null (unweighted)${near}`, `Choose a weight the dataset was built with.${variable}`);
  error.details.suggestions = suggestions;
  throw error;
}
