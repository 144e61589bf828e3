/**
 * Values as the input readers hand them to the encoders: cells, validity bitmaps, and
 * 64-bit integers read without making a BigInt each.
 */

/**
 * A value as a reader hands it over. `null`, `undefined`, `''` and NaN are blank; numbers
 * are written as JavaScript writes them, which is how a CSV of the same data has them
 * (`2`, not `2.0`; `0.1`; `1e-7`).
 */
export type CellValue = string | number | bigint | boolean | null | undefined;

/** An Arrow-style validity bitmap: value `i` is null when bit `offset + i` is 0. */
export interface Validity {
  bits: Uint8Array;
  offset: number;
}

/** Whether value `i` is null in `valid`. */
export function isNullAt(valid: Validity, i: number): boolean {
  const bit = valid.offset + i;
  return (valid.bits[bit >> 3]! & (1 << (bit & 7))) === 0;
}

/** Whether this machine stores numbers little-endian (as Parquet and Arrow files do). */
export const littleEndian = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** Whether the 64-bit integers given as `count` little-endian pairs of halves are all within Number.MAX_SAFE_INTEGER. */
export function safeHalves(halves: Int32Array, count: number): boolean {
  for (let k = 0; k < count; k++) {
    const high = halves[2 * k + 1]!;
    if (high > 0x1fffff || high < -0x1fffff) return false;
  }
  return true;
}

/**
 * `values[from .. from + count - 1]` as numbers, read as 32-bit halves (reading a
 * BigInt64Array element makes a BigInt on the heap, about as slow as a Map lookup), or
 * undefined when one is beyond Number.MAX_SAFE_INTEGER (those stay bigint, written exactly).
 */
export function safeNumbers(values: BigInt64Array, from: number, count: number): Float64Array | undefined {
  if (!littleEndian) return undefined;
  const halves = new Int32Array(values.buffer, values.byteOffset + from * 8, count * 2);
  const out = new Float64Array(count);
  for (let k = 0; k < count; k++) {
    const high = halves[2 * k + 1]!;
    if (high > 0x1fffff || high < -0x1fffff) return undefined;
    out[k] = high * 4294967296 + (halves[2 * k]! >>> 0);
  }
  return out;
}

/**
 * A timestamp given as a count of 10^-`digits` seconds since 1970 (UTC), as ISO 8601 text
 * with every digit it has: `2024-01-01T00:00:00` on a whole second, else the fraction in
 * groups of three digits (`.123`, `.000001`, `.000000002`), so that two instants a
 * microsecond or a nanosecond apart stay two values. Throws RangeError past the years
 * JavaScript dates cover (±275,760), as Date does.
 */
export function isoTimestamp(count: bigint, digits: 0 | 3 | 6 | 9): string {
  const per = 10n ** BigInt(digits);
  let seconds = count / per;
  let fraction = count % per;
  if (fraction < 0n) {
    fraction += per;
    seconds -= 1n;
  }
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}${fractionText(fraction, digits)}`;
}

/**
 * A time of day given as a count of 10^-`digits` seconds since midnight, as ISO 8601 text
 * (`10:00:00`, `10:00:00.000001`), every digit kept as isoTimestamp does.
 */
export function isoTime(count: bigint, digits: 0 | 3 | 6 | 9): string {
  const per = 10n ** BigInt(digits);
  const sign = count < 0n ? '-' : '';
  const magnitude = count < 0n ? -count : count;
  const seconds = Number(magnitude / per);
  const two = (value: number) => String(value).padStart(2, '0');
  return `${sign}${two(Math.floor(seconds / 3600))}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}${fractionText(magnitude % per, digits)}`;
}

/** `.` and the fraction's digits without trailing zeros, padded to a group of three; empty for 0. */
function fractionText(fraction: bigint, digits: number): string {
  if (fraction === 0n) return '';
  const text = fraction.toString().padStart(digits, '0').replace(/0+$/, '');
  return `.${text.padEnd(Math.ceil(text.length / 3) * 3, '0')}`;
}
