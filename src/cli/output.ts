import { CrosstabError, labelledHint, labelledMessage } from '../errors.js';
import { flagOf } from './flag-labels.js';

/** Prints a failure the way every command does: what, where, how to fix. Returns the exit code. */
export function reportError(error: unknown): number {
  if (error instanceof CrosstabError) {
    process.stderr.write(`crosstab: error [${error.code}]: ${labelledMessage(error, flagOf)}\n`);
    const listed = error.details.listed ? ` \`crosstab info DATASET\` lists the ${error.details.listed}.` : '';
    const hint = labelledHint(error, flagOf);
    if (hint) process.stderr.write(`  hint: ${hint}${listed}\n`);
    return 1;
  }
  process.stderr.write(`crosstab: unexpected failure: ${(error as Error)?.stack ?? String(error)}\n`);
  return 70;
}

/**
 * `value` with `digits` decimals and its thousands grouped by commas: the text of
 * toLocaleString('en-US') with that many fraction digits (the shortest decimal that reads back
 * as `value`, rounded half away from zero), made without Intl, whose first use loads ICU's data
 * (a tenth of a second and more of a command's start). NaN and infinities, which no CLI line
 * prints, are left to toLocaleString.
 */
export function formatNumber(value: number, digits = 1): string {
  if (!Number.isFinite(value) || !Number.isInteger(digits) || digits < 0 || digits > 100) {
    return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }
  const [mantissa = '0', exponent = '0'] = Math.abs(value).toExponential().split('e');
  const significant = mantissa.replace('.', '');
  // Digits before the decimal point: the shortest decimal's digits moved by its exponent.
  const point = Number(exponent) + 1;
  let whole = point <= 0 ? '0' : significant.slice(0, point).padEnd(point, '0');
  let fraction = point <= 0 ? '0'.repeat(-point) + significant : significant.slice(point);
  if (fraction.length > digits) {
    const up = fraction.charCodeAt(digits) >= 53; // '5' or more: away from zero
    fraction = fraction.slice(0, digits);
    if (up) {
      const carried = incrementDigits(whole + fraction);
      whole = carried.slice(0, carried.length - digits);
      fraction = carried.slice(carried.length - digits);
    }
  } else {
    fraction = fraction.padEnd(digits, '0');
  }
  let grouped = whole.slice(0, ((whole.length - 1) % 3) + 1);
  for (let at = grouped.length; at < whole.length; at += 3) grouped += `,${whole.slice(at, at + 3)}`;
  return `${value < 0 || Object.is(value, -0) ? '-' : ''}${grouped}${digits > 0 ? `.${fraction}` : ''}`;
}

/** A string of decimal digits plus one in its last place ("0999" -> "1000", "99" -> "100"). */
function incrementDigits(text: string): string {
  let at = text.length - 1;
  while (at >= 0 && text[at] === '9') at--;
  const tail = '0'.repeat(text.length - 1 - at);
  return at < 0 ? `1${tail}` : `${text.slice(0, at)}${String.fromCharCode(text.charCodeAt(at) + 1)}${tail}`;
}
