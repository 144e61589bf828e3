// The test's own answer to "does a 64-bit float hold this decimal number exactly enough?",
// worked out apart from the engine's (src/text/decimal-text.ts): the number the text denotes
// and the number its float prints as are compared as exact rationals, digits times a power
// of ten, in BigInt arithmetic.

function rational(text: string): { digits: bigint; power: number } {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (match === null) throw new Error(`not a decimal number: ${text}`);
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  const digits = BigInt(`${sign === '-' ? '-' : ''}${whole}${fraction}` || '0');
  return { digits, power: Number(exponent) - fraction.length };
}

/** Whether `text` (a decimal number) and the float it reads as are the same number, and that float is finite. */
export function floatExact(text: string): boolean {
  const value = Number(text);
  if (!Number.isFinite(value)) return false;
  const a = rational(text);
  const b = rational(String(value));
  // Same number when a.digits * 10^a.power == b.digits * 10^b.power.
  const low = Math.min(a.power, b.power);
  return a.digits * 10n ** BigInt(a.power - low) === b.digits * 10n ** BigInt(b.power - low);
}

/** Whether `a` and `b` (decimal numbers) are the same number, in BigInt arithmetic. */
export function sameNumber(a: string, b: string): boolean {
  const x = rational(a);
  const y = rational(b);
  const low = Math.min(x.power, y.power);
  return x.digits * 10n ** BigInt(x.power - low) === y.digits * 10n ** BigInt(y.power - low);
}

/**
 * Whether a column of these decimal numbers is numeric under the collision rule: every value
 * reads as a finite float, and no two different numbers read as the same float.
 */
export function floatsTellApart(values: readonly string[]): boolean {
  const texts = [...new Set(values.filter((value) => value !== ''))];
  if (texts.some((text) => !Number.isFinite(Number(text)))) return false;
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) if (Number(texts[i]) === Number(texts[j]) && !sameNumber(texts[i]!, texts[j]!)) return false;
  }
  return true;
}
