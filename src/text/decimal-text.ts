/**
 * Decimal numbers written as text, and whether 64-bit floats tell a column's numbers apart.
 * The engine keeps a numeric variable's values as floats (ranks in value order, ranges by
 * float comparison), as R and DuckDB read them: `0.33333333333333331` (R's `%.17g`) is the
 * float `0.3333333333333333`, which is harmless alone. Two different numbers of one column
 * that read as the same float (`9007199254740992` and `9007199254740993`, `0.1` and
 * `0.10000000000000001`) must never both be read as floats: each would answer for the
 * other's respondents (floatCollision).
 */

/**
 * A plain decimal number as a numeric column holds it: no leading zeros (so `06` stays
 * text), optional sign, fraction and exponent.
 */
export const PLAIN_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$/;

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * The exact number `text` denotes, as `[-]digits e exponent` with no leading or trailing
 * zeros in the digits (`-1.250` and `-125e-2` both give `-125e-2`; every zero gives `0`),
 * or undefined when `text` is not a decimal number.
 */
export function exactDecimal(text: string): string | undefined {
  const match = DECIMAL.exec(text);
  if (match === null) return undefined;
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  if (whole === '' && fraction === '') return undefined;
  let digits = whole + fraction;
  let start = 0;
  while (start < digits.length && digits[start] === '0') start++;
  let end = digits.length;
  while (end > start && digits[end - 1] === '0') end--;
  if (start === end) return '0';
  const power = BigInt(exponent) - BigInt(fraction.length) + BigInt(digits.length - end);
  digits = digits.slice(start, end);
  return `${sign === '-' ? '-' : ''}${digits}e${power}`;
}

/**
 * Whether the decimal number `text` reads as a finite 64-bit float that prints back as the
 * same number (`0.1`, `1.0`, `2.5e-3`, `9007199254740992`): then two such texts are the same
 * number exactly when their floats are equal, and they order as their floats do. False for
 * more digits than a float holds (`9007199254740993`, `0.10000000000000001`), for a number
 * too large or too small for one (`1e400`, `1e-400`), and for anything not a decimal number.
 */
export function fitsFloat64(text: string): boolean {
  const value = Number(text);
  if (!Number.isFinite(value)) return false;
  const printed = String(value);
  if (printed === text) return true;
  const exact = exactDecimal(text);
  return exact !== undefined && exact === exactDecimal(printed);
}

/**
 * Two different numbers among `texts` (decimal numbers, each within the float range) that
 * read as the same 64-bit float, the first such pair found, or undefined when floats tell
 * every two of them apart. `1` and `1.0`, or `0.33333333333333331` and
 * `3.3333333333333331e-1`, are the same number written twice: no collision.
 */
export function floatCollision(texts: Iterable<string>): [string, string] | undefined {
  // The first text of each float; another text of that float is compared with it as exact
  // decimals (only then: most columns have one text per float).
  const firstOf = new Map<number, string>();
  for (const text of texts) {
    const value = Number(text);
    const first = firstOf.get(value);
    if (first === undefined) firstOf.set(value, text);
    else if (first !== text && exactDecimal(first) !== exactDecimal(text)) return [first, text];
  }
  return undefined;
}

/**
 * The exact decimal text of the integer `unscaled` times 10^-`scale` (a Parquet DECIMAL):
 * `decimalText(57n, 2)` is `0.57`, `decimalText(-1200n, 2)` is `-12`; no trailing zeros in
 * the fraction, no exponent, every digit kept.
 */
export function decimalText(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  let digits = (negative ? -unscaled : unscaled).toString();
  if (scale <= 0) return unscaled === 0n ? '0' : `${negative ? '-' : ''}${digits}${'0'.repeat(-scale)}`;
  if (digits.length <= scale) digits = '0'.repeat(scale - digits.length + 1) + digits;
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  const text = fraction === '' ? whole : `${whole}.${fraction}`;
  return negative && text !== '0' ? `-${text}` : text;
}
