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
