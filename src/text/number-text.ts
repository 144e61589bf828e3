/**
 * Numbers as every message, label and table shows them: grouped by commas, a point before the
 * decimals, the same text whatever the locale of the process or of Node's ICU.
 */

/**
 * `value` with `digits` decimals and its thousands grouped by commas: the text of
 * toLocaleString('en-US') with that many fraction digits (the shortest decimal that reads back
 * as `value`, rounded half away from zero), made without Intl, so the same in every locale
 * (a German one would write 1.234,5, which reads back as another number) and without loading
 * ICU's data (a tenth of a second and more of a command's start). NaN and infinities read
 * `NaN`, `∞` and `-∞`, as toLocaleString('en-US') writes them.
 */
export function formatNumber(value: number, digits = 1): string {
  if (!Number.isInteger(digits) || digits < 0 || digits > 100) throw new RangeError(`formatNumber: digits must be a whole number from 0 to 100; got ${digits}`);
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '-∞';
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

/**
 * `value` with at most `digits` decimals (trailing zeros dropped) and its thousands grouped by
 * commas: toLocaleString('en-US', { maximumFractionDigits: digits }) without Intl.
 */
export function formatNumberUpTo(value: number, digits: number): string {
  const text = formatNumber(value, digits);
  return digits === 0 ? text : text.replace(/\.?0+$/, '');
}
